"""Model building blocks that several benchmark families share: the LIF networks of
Cramer et al. (:mod:`.lif`), the spike-data classifiers of the classification task
(:mod:`.spike_classifiers`, trained by :mod:`.spike_training`, with the non-spiking
references of :mod:`.reference_classifiers`), and the sequence-model family (:mod:`.series_family`). A
family's own baselines live in its package under :mod:`neuromark.benchmarks`."""
