"""N-MNIST: classification of recorded saccades of MNIST digits (34 x 34 ATIS events, 10 classes).

Reference: Orchard et al., "Converting static image datasets to spiking neuromorphic
datasets using saccades", Front. Neurosci. 9:437 (2015).

- :mod:`.reader`: the 40-bit event words of the recordings, read and written (from the
  published layout; cross-checked against tonic's decoder in the tests).
- :mod:`.layout`: the published ``Train/``/``Test/`` folders and SLAYER's label lists;
  :mod:`.dataset`: event frames binned by the kernel, the shipped real subset and the
  checksummed download.
- :mod:`.model`: the convolutional LIF baseline, its training command and shipped checkpoint.
"""

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "datasets": {"nmnist": ".dataset:NMNIST_ENTRY"},
    "models": {"nmnist_snn": ".model:nmnist_snn"},
}
