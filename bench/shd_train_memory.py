"""Peak RSS of one training epoch's batches (no model) on an SHD-layout file: streamed
(``shd_train.epoch_batches``) vs the former loop's whole-split binning (file read whole,
augmented and binned at once, then indexed by the permutation).

Settings: 10-ms bins over 1 s, pool 10, batch 32, jitter 20, stretch 0.1, seed 0. Both print
the spikes binned (the same number: same augmentation draws). Run each in its own process,
e.g. on the files of ``bench/e2e_shd.py``:

    python bench/shd_train_memory.py .cache/e2e_shd/n20000_s0/SHD/shd_test.h5 streamed
    python bench/shd_train_memory.py .cache/e2e_shd/n2264_s0/SHD/shd_test.h5 whole
"""

import resource
import sys
import time

import numpy as np
import torch

from neuromark.benchmarks.shd.entries import BinnedSpikes
from neuromark.data.binning import jitter_samples
from neuromark.networks.spike_classifiers import TrainSettings
from neuromark.networks.spike_training import epoch_batches, stretch_samples

path, how = sys.argv[1], sys.argv[2]
cfg = TrainSettings(batch_size=32, seed=0, jitter_sigma=20, time_stretch=0.1)
data = BinnedSpikes(path, dt_us=10_000, t_max_us=1_000_000, pool=10)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
start = time.perf_counter()
rng, order = np.random.default_rng(0), torch.Generator().manual_seed(0)
total = 0.0
if how == "streamed":
    for x, _ in epoch_batches(data, cfg, rng, order):
        total += float(x.sum())
else:
    s = stretch_samples(data.samples, rng, cfg.time_stretch, data.t_max_us / 1e6)
    s = jitter_samples(s, rng, cfg.jitter_sigma)
    x_all = torch.as_tensor(data.frames(s))
    perm = torch.randperm(len(x_all), generator=order)
    for i in range(0, len(perm), cfg.batch_size):
        total += float(x_all[perm[i:i + cfg.batch_size]].sum())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{how} {len(data)} samples: peak RSS {peak:.0f} MB (after imports {base:.0f} MB), "
      f"{time.perf_counter() - start:.1f} s, spikes binned {total:.0f}")
