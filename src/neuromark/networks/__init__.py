"""Model building blocks that several benchmark families share: the LIF networks of
Cramer et al. (:mod:`.lif`), the spike-data classifiers of the classification task
(:mod:`.spike_classifiers`, trained by :mod:`.spike_training`, with the non-spiking
references of :mod:`.reference_classifiers`), the sequence-model family
(:mod:`.series_family`) and the streaming ridge decoder (:mod:`.ridge_decoder`). A family's
own baselines live in its own package."""
