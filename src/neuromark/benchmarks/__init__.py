"""Benchmark families: one package per benchmark, on top of the kernel.

Each package holds what is its own: readers of its formats, the offline generator of its
published layout, its baselines (model families and training recipes), its task and
options, and a module docstring saying what it measures and where its references come
from. Each is a plugin of the kernel, loaded as a third party's is: its ``__init__``
declares a ``MANIFEST`` of lazy entries, and neuromark's own ``pyproject.toml`` declares
this package through the ``neuromark.plugins`` entry point ``families.neuromark``
(:func:`neuromark.registry.families`). A family imports the kernel, never the kernel a
family, nor a family another; ``import neuromark`` loads none of them.

- :mod:`.shd`: Spiking Heidelberg Digits / Spiking Speech Commands, and the shipped
  espeak-ng spoken-digit corpus in the same HDF5 layout.
- :mod:`.keywords`: spoken keywords: Google Speech Commands classification and MSWC
  few-shot class-incremental learning (FSCIL).
- :mod:`.dvs_gesture`: IBM DVS128 Gesture.
- :mod:`.event_detection`: Prophesee Gen4 automotive object detection (COCO mAP).
- :mod:`.mackey_glass`: Mackey-Glass chaotic function prediction (sMAPE).
- :mod:`.primate_reaching`: motor-cortex cursor-velocity decoding (R²) and PSTH
  predictivity.
- :mod:`.closed_loop`: closed-loop control: the online prosthesis simulator and
  gymnasium environments.
- :mod:`.eeg_mi`: EEG motor imagery (ThorEEGMI, Lee2019).
- :mod:`.activity`: smartwatch human activity recognition (WISDM, NeHAR).
- :mod:`.acoustic_scenes`: DCASE 2020 Task 1A acoustic scene classification (system track).
- :mod:`.qubo`: QUBO maximum independent set (optimisation quality over time).
"""
