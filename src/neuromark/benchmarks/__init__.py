"""Benchmark families: one package per benchmark, on top of the kernel.

Each package holds what is its own: readers of its formats, the offline generator of its
published layout, its baselines (model families and training recipes), its task and
options, and a module docstring saying what it measures and where its references come
from. The kernel (runner, instrument, metrics, models, processors, generic data formats
and contracts, the system track, report) stays in its layers; a family imports the
kernel, never the other way round. The registries name every entry lazily
(``"module:attribute"``), so ``import neuromark`` loads none of them.

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

Public paths that users and docs name from before the families existed
(``neuromark.data.shd``, ``neuromark.tasks.qubo``, ...) still import: :mod:`neuromark._moved`
maps them onto the modules here.
"""
