"""The baselines' training loop streams its batches (``shd_train.epoch_batches``): each batch
binned on its own, the same counts and order as binning the whole split per epoch, and the
whole split never binned (tiny SHD-layout files)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuromark.benchmarks.shd.datasets import SpikeFileDataset
from neuromark.benchmarks.shd.entries import BinnedSpikes
from neuromark.data.binning import jitter_samples
from neuromark.data.hdf5_spikes import write_shd_file
from neuromark.data.spike_stream import HeldSpikes
from neuromark.errors import DataError
from neuromark.networks import spike_training as shd_train
from neuromark.networks.spike_classifiers import RSNN, SVM, SpikeModelOptions, TrainSettings
from neuromark.networks.spike_training import SampleSplit, epoch_batches, stretch_samples

DT, T_MAX = 20_000, 400_000


def write_file(path, n=23, seed=0):
    """``n`` samples of 0-80 spikes in [0, 0.4] s over 700 channels, labels 0-3."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 81, n)
    counts[2] = 0
    times = [rng.uniform(0, 0.4, c) for c in counts]
    units = [rng.integers(0, 700, c) for c in counts]
    return write_shd_file(path, times, units, rng.integers(0, 4, n), rng.integers(0, 3, n),
                          [f"c{i}" for i in range(4)])


def whole_split_batches(data, cfg, rng, order):
    """One epoch as the former loop made it: the whole split augmented and binned at once,
    then indexed by the permutation."""
    samples = data.samples
    if cfg.time_stretch > 0:
        samples = stretch_samples(samples, rng, cfg.time_stretch, data.t_max_us / 1e6)
    if cfg.jitter_sigma > 0:
        samples = jitter_samples(samples, rng, cfg.jitter_sigma)
    frames = torch.as_tensor(data.frames(samples))
    labels = torch.as_tensor(data.samples.labels)
    perm = torch.randperm(len(labels), generator=order)
    return [(frames[perm[i:i + cfg.batch_size]], labels[perm[i:i + cfg.batch_size]])
            for i in range(0, len(perm), cfg.batch_size)]


@pytest.mark.parametrize("jitter,stretch,pool", [(0.0, 0.0, 1), (20.0, 0.0, 10), (0.0, 0.3, 7),
                                                 (30.0, 0.3, 10)])
def test_streamed_epochs_equal_whole_split_binning(tmp_path, jitter, stretch, pool):
    path = write_file(tmp_path / "x.h5")
    cfg = TrainSettings(batch_size=5, seed=4, jitter_sigma=jitter, time_stretch=stretch)
    reference = BinnedSpikes(path, dt_us=DT, t_max_us=T_MAX, pool=pool)
    streamed = BinnedSpikes(path, dt_us=DT, t_max_us=T_MAX, pool=pool)
    rngs = np.random.default_rng(4), np.random.default_rng(4)
    orders = torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
    for _ in range(2):  # the second epoch continues both generators
        expected = whole_split_batches(reference, cfg, rngs[0], orders[0])
        got = list(epoch_batches(streamed, cfg, rngs[1], orders[1]))
        assert [len(y) for _, y in got] == [5, 5, 5, 5, 3]
        for (x, y), (x_ref, y_ref) in zip(got, expected, strict=True):
            assert x.dtype == torch.float32 and x.shape == (len(y), 20, 700 // pool)
            torch.testing.assert_close(x, x_ref, rtol=0, atol=0)
            assert torch.equal(y, y_ref)
    assert streamed._samples is None  # held compactly (float16 + uint16), never read whole
    assert len(streamed._held.times) == 1 and streamed._held.times[0].dtype == np.float16
    if jitter or stretch:
        assert not torch.equal(got[0][0], list(epoch_batches(streamed, cfg.model_copy(
            update={"jitter_sigma": 0.0, "time_stretch": 0.0}), rngs[1], orders[0]))[0][0])


@pytest.mark.parametrize("chunk", [1, 4, 64])
def test_held_chunks_gather_as_the_flat_arrays(tmp_path, chunk):
    path = write_file(tmp_path / "x.h5")
    held = HeldSpikes.read(path, chunk_samples=chunk)
    samples = SpikeFileDataset(path).samples
    flat = HeldSpikes.flat(samples.times, samples.units, samples.offsets)
    assert len(held) == len(flat) == 23 and held.times[0].dtype == np.float16
    picks = np.random.default_rng(0).permutation(23)[:9], np.arange(23), np.array([2]), np.array([5, 5])
    for rows in picks:
        got, expected = held.gather(rows), flat.gather(rows)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_array_equal(a.astype(b.dtype), b)


def test_sample_split_streams_its_own_samples(tmp_path):
    data = BinnedSpikes(write_file(tmp_path / "x.h5"), dt_us=DT, t_max_us=T_MAX, pool=10)
    part = SampleSplit.of(data, [7, 3, 0, 12])
    cfg = TrainSettings(batch_size=3, seed=1)
    order = torch.Generator().manual_seed(1)
    [(x1, y1), (x2, y2)] = epoch_batches(part, cfg, np.random.default_rng(1), order)
    perm = torch.randperm(4, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(torch.cat([x1, x2]), torch.as_tensor(part.frames())[perm], rtol=0, atol=0)
    assert torch.equal(torch.cat([y1, y2]), torch.as_tensor(data.samples.labels[[7, 3, 0, 12]])[perm])


def test_training_never_bins_the_whole_split(tmp_path, monkeypatch):
    path = write_file(tmp_path / "x.h5", n=30)

    def whole(*args, **kwargs):
        raise AssertionError("the whole split was read or binned")

    monkeypatch.setattr(BinnedSpikes, "frames", whole)
    monkeypatch.setattr(SpikeFileDataset, "dense", whole)
    monkeypatch.setattr("neuromark.benchmarks.shd.datasets.read_shd_file", whole)  # the float64 flat arrays
    rows: list[int] = []
    real = shd_train.bin_batch

    def counted(times, units, offsets, **kwargs):
        rows.append(offsets.shape[0] - 1)
        return real(times, units, offsets, **kwargs)

    monkeypatch.setattr(shd_train, "bin_batch", counted)
    data = BinnedSpikes(path, dt_us=DT, t_max_us=T_MAX, pool=10)
    settings = TrainSettings(epochs=2, batch_size=8, seed=0, jitter_sigma=20, time_stretch=0.1)
    _, info = RSNN.fit(SpikeModelOptions(hidden=8), settings, data, 4)
    assert rows == [8, 8, 8, 6] * 2 and len(info["loss"]) == 2
    _, info = SVM.fit(SpikeModelOptions(svm_c=0.1), settings, data, 4)
    assert max(rows[8:]) <= 256 and info["train_samples"] == 30


def test_svm_counts_stream_in_file_order(tmp_path):
    data = BinnedSpikes(write_file(tmp_path / "x.h5"), dt_us=DT, t_max_us=T_MAX)
    counts = shd_train.spike_counts(data, batch_size=4)
    assert counts.shape == (23, 700) and counts.dtype == np.float32
    np.testing.assert_array_equal(counts, data.frames().sum(axis=1))


def test_a_bad_spike_names_the_sample_of_the_batch(tmp_path):
    path = write_file(tmp_path / "x.h5")
    data = BinnedSpikes(path, dt_us=DT, t_max_us=200_000)  # spikes up to 0.4 s are late
    cfg = TrainSettings(batch_size=4, seed=0)
    with pytest.raises(DataError, match=r"x\.h5: sample \d+: spike at \d+ us is after t_max_us=200000"):
        list(epoch_batches(data, cfg, np.random.default_rng(0), torch.Generator().manual_seed(0)))
    dropped = BinnedSpikes(path, dt_us=DT, t_max_us=200_000, late="drop")
    got = list(epoch_batches(dropped, cfg, np.random.default_rng(0), torch.Generator().manual_seed(0)))
    assert sum(len(y) for _, y in got) == 23
