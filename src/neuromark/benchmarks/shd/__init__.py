"""Spiking Heidelberg Digits (SHD) and Spiking Speech Commands (SSC): classification of
spike trains from a cochlea model (700 channels), accuracy plus NeuroBench's complexity.

References: Cramer, Stradmann, Schemmel and Zenke, "The Heidelberg spiking data sets for
the systematic evaluation of spiking neural networks", IEEE TNNLS 2022,
doi:10.1109/TNNLS.2020.3044364 (layout, baselines, Table III figures).

- :mod:`.datasets`: the published HDF5 readers (SHD, SSC, any file in that layout).
- :mod:`.spoken_digits`: the shipped espeak-ng spoken-digit corpus in the same layout;
  :mod:`.generator` writes it (espeak-ng through the cochlea: :mod:`neuromark.synth.speech`,
  :mod:`neuromark.processors.cochlea`); :mod:`.data_command` is ``neuromark data
  spoken-digits``.
- :mod:`.entries`: the registry's data set entries (``shd``, ``ssc``, ``spoken_digits``,
  ``spike_files``), binned for the classification task; :mod:`.encoder_cost`: the cost of
  the binning (the cochlea's is the kernel's).

The paper's models (LIF networks, LSTM, linear SVM on spike counts) are the
classification task's spike classifiers, shared with the other spike-data sets:
:mod:`neuromark.networks.lif`, :mod:`neuromark.networks.spike_classifiers`,
:mod:`neuromark.networks.spike_training`, :mod:`neuromark.networks.reference_classifiers`.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "datasets": {"spoken_digits": ".entries:SPOKEN_DIGITS", "shd": ".entries:SHD_ENTRY",
                 "ssc": ".entries:SSC_ENTRY", "spike_files": ".entries:SPIKE_FILES"},
    "generators": {"spoken_digits": ".generator"},
    "data_commands": {"spoken-digits": ".data_command:register"},
    "encoder_costs": {"binned_spikes": ".encoder_cost:binned_spikes_cost"},
}
