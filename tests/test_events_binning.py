"""Event binning, pooling and channel jitter (hand-computed expectations)."""

from __future__ import annotations

import numpy as np
import pytest

import neuromark.data.binning as ev_mod
from neuromark.data.event_dtypes import make_spike_events
from neuromark.data.hdf5_spikes import SpikeSamples, read_shd_file, write_shd_file
from neuromark.errors import DataError
from neuromark.processors.spike_transforms import (
    BinSpikes,
    ChannelJitter,
    PoolChannels,
    bin_flat,
    jitter_units,
    n_bins,
    pool_dense,
)


def flat(times_us: list[list[int]], units: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    offsets = np.cumsum([0] + [len(t) for t in times_us])
    t = np.concatenate([np.asarray(x, dtype=np.int64) for x in times_us])
    u = np.concatenate([np.asarray(x, dtype=np.uint16) for x in units])
    return t, u, offsets


def test_n_bins():
    assert n_bins(1000, 3000) == 3 and n_bins(1000, 3001) == 4 and n_bins(5000, 10) == 1
    with pytest.raises(ValueError, match="positive"):
        n_bins(0, 10)


def test_bin_flat_hand_computed():
    # sample 0: t=0 (bin 0), 999 (bin 0), 1000 (bin 1), 3000 == t_max -> last bin 2
    # sample 1: no spikes; sample 2: 2500 -> bin 2, twice on unit 1
    t, u, off = flat([[0, 999, 1000, 3000], [], [2500, 2500]], [[0, 0, 2, 3], [], [1, 1]])
    out = bin_flat(t, u, off, dt_us=1000, t_max_us=3000, channels=4, dtype=np.int16)
    expected = np.zeros((3, 3, 4), dtype=np.int16)
    expected[0, 0, 0] = 2
    expected[0, 1, 2] = 1
    expected[0, 2, 3] = 1
    expected[2, 2, 1] = 2
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.int16 and out.sum() == t.size  # no spike dropped


def test_bin_flat_partial_last_bin():
    # t_max not a multiple of dt: 2 bins of 1000 us cover [0, 1500]; 1500 lands in bin 1
    t, u, off = flat([[1500, 1499, 200]], [[0, 1, 1]])
    out = bin_flat(t, u, off, dt_us=1000, t_max_us=1500, channels=2)
    np.testing.assert_array_equal(out[0], [[0, 1], [1, 1]])


def test_bin_flat_errors_name_file_and_sample():
    t, u, off = flat([[10], [20, 3001]], [[0], [1, 1]])
    with pytest.raises(DataError, match=r"f\.h5: sample 1: spike at 3001 us is after t_max_us=3000 \(1 such"):
        bin_flat(t, u, off, dt_us=1000, t_max_us=3000, channels=4, name="f.h5")
    t, u, off = flat([[10], [20, 30], [40]], [[0], [1, 1], [4]])
    with pytest.raises(DataError, match=r"sample 2: unit 4 is not below channels=4"):
        bin_flat(t, u, off, dt_us=1000, t_max_us=3000, channels=4)
    t, u, off = flat([[10], [-5]], [[0], [1]])
    with pytest.raises(DataError, match=r"sample 1: spike time -5 us is negative"):
        bin_flat(t, u, off, dt_us=1000, t_max_us=3000, channels=4)


def test_bin_flat_integer_overflow_is_an_error():
    t, u, off = flat([[1] * 300], [[0] * 300])
    with pytest.raises(DataError, match="sample 0: 300 spikes in one bin do not fit uint8"):
        bin_flat(t, u, off, dt_us=1000, t_max_us=1000, channels=1, dtype=np.uint8)


def test_bin_flat_chunked_equals_single_pass(monkeypatch):
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 50, 40)
    off = np.concatenate([[0], np.cumsum(counts)])
    t = rng.integers(0, 100_001, off[-1])
    u = rng.integers(0, 7, off[-1]).astype(np.uint16)
    whole = bin_flat(t, u, off, dt_us=10_000, t_max_us=100_000, channels=7)
    monkeypatch.setattr(ev_mod, "_CHUNK_ELEMENTS", 150)  # 2 samples per chunk
    chunked = bin_flat(t, u, off, dt_us=10_000, t_max_us=100_000, channels=7)
    np.testing.assert_array_equal(whole, chunked)
    # reference: per-spike loop
    ref = np.zeros_like(whole)
    for i in range(40):
        for k in range(off[i], off[i + 1]):
            ref[i, min(t[k] // 10_000, 9), u[k]] += 1
    np.testing.assert_array_equal(whole, ref)


def test_bin_spikes_on_events_and_on_a_file(tmp_path):
    b = BinSpikes(dt_us=250_000, t_max_us=1_000_000, channels=700)
    frame = b(make_spike_events([0.1, 0.3, 1.0], [5, 5, 699]))
    assert frame.shape == (4, 700) and frame.dtype == np.float32
    assert frame[0, 5] == 1 and frame[1, 5] == 1 and frame[3, 699] == 1 and frame.sum() == 3
    path = write_shd_file(tmp_path / "x.h5", [[0.1, 0.3], [1.25]], [[5, 6], [7]], [0, 1])
    samples = read_shd_file(path)
    dense = b.bin_samples(samples.subset([0]))
    assert dense.shape == (1, 4, 700) and dense.sum() == 2
    with pytest.raises(DataError, match=r"x\.h5: sample 1: spike at 1250000 us"):
        b.bin_samples(samples)


def test_pooling_events_dense_and_samples():
    p = PoolChannels(10)
    pooled = p(make_spike_events([0.1, 0.2, 0.3], [0, 9, 699]))
    assert pooled["unit"].tolist() == [0, 0, 69]
    frames = np.arange(2 * 20, dtype=np.float32).reshape(1, 2, 20)
    out = pool_dense(frames, 10)
    np.testing.assert_array_equal(out, [[[45, 145], [245, 345]]])
    data, targets = p(frames, np.array([3]))
    assert data.shape == (1, 2, 2) and targets.tolist() == [3]
    torch = pytest.importorskip("torch")
    assert p(torch.ones(3, 5, 700)).shape == (3, 5, 70) and float(p(torch.ones(1, 1, 700)).sum()) == 700
    with pytest.raises(ValueError, match="not divisible by the pooling factor 3"):
        pool_dense(frames, 3)
    s = SpikeSamples(np.array([0.1, 0.2]), np.array([15, 699], dtype=np.uint16), np.array([0, 2]),
                     np.array([0]))
    ps = p.pool_samples(s)
    assert ps.channels == 70 and ps.units.tolist() == [1, 69]


def test_jitter_is_seeded_and_shifts_whole_samples():
    units = np.array([100, 200, 300, 400, 500], dtype=np.uint16)
    off = np.array([0, 3, 5])
    a, keep_a = jitter_units(units, off, sigma=20, channels=700, rng=np.random.default_rng(7))
    b, keep_b = jitter_units(units, off, sigma=20, channels=700, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    shift = np.rint(np.random.default_rng(7).normal(0, 20, 2)).astype(int)
    np.testing.assert_array_equal(a, units + np.repeat(shift, [3, 2]))
    assert keep_a.all()
    # per-spike jitter: std of shifts close to sigma over many spikes
    many = np.full(20_000, 350, dtype=np.uint16)
    moved, keep = jitter_units(many, np.array([0, 20_000]), sigma=20, channels=700,
                               rng=np.random.default_rng(0), per="spike")
    assert keep.all() and abs(float(np.std(moved - 350.0)) - 20) < 0.5
    with pytest.raises(ValueError, match="per must be"):
        jitter_units(units, off, sigma=1, channels=700, rng=np.random.default_rng(0), per="x")


def test_jitter_drops_spikes_shifted_out_of_range():
    j = ChannelJitter(rng=np.random.default_rng(0), sigma=1000.0, channels=700, per="spike")
    events = make_spike_events(np.linspace(0, 1, 200), np.full(200, 350))
    out = j(events)
    assert 0 < out.shape[0] < 200
    assert out["unit"].max() < 700 and out["unit"].min() >= 0
    s = SpikeSamples(events["t"] / 1e6, events["unit"], np.array([0, 100, 200]), np.array([0, 1]))
    js = ChannelJitter(rng=np.random.default_rng(0), sigma=1000.0, per="spike").jitter_samples(s)
    assert js.offsets[-1] == js.units.size < 200 and js.counts().sum() == js.times.size


@pytest.mark.parametrize("per", ["spike", "sample"])
def test_jitter_samples_keeps_each_spike_in_its_own_sample(per):
    """Per-sample kept spikes against a plain Python loop over the same normal draws."""
    rng = np.random.default_rng(11)
    counts = [5, 0, 7, 1, 9, 4]  # sample 1 is empty
    times = [np.sort(rng.uniform(0, 1, k)) for k in counts]
    units = [rng.integers(0, 40, k) for k in counts]  # 40 channels, sigma 15: many fall off
    offsets = np.cumsum([0] + counts)
    s = SpikeSamples(np.concatenate(times), np.concatenate(units).astype(np.uint16), offsets,
                     np.arange(len(counts)) + 10, np.arange(len(counts)) + 100, ["k"],
                     {"age": np.zeros(3)}, channels=40, path=None)
    js = ChannelJitter(rng=np.random.default_rng(3), sigma=15.0, per=per).jitter_samples(s)

    draws = np.random.default_rng(3).normal(0.0, 15.0, sum(counts) if per == "spike" else len(counts))
    flat_index = 0
    expected_counts = []
    for i, (t, u) in enumerate(zip(times, units)):
        kept_t, kept_u = [], []
        for time, unit in zip(t, u):
            shift = int(np.rint(draws[flat_index if per == "spike" else i]))
            flat_index += 1
            if 0 <= unit + shift < 40:
                kept_t.append(time)
                kept_u.append(unit + shift)
        expected_counts.append(len(kept_t))
        got_t, got_u = js.spikes(i)
        assert got_t.tolist() == kept_t and got_u.tolist() == kept_u, f"sample {i}"
    assert js.counts().tolist() == expected_counts
    assert 0 < sum(expected_counts) < sum(counts)  # some spikes dropped, some kept
    assert js.labels.tolist() == s.labels.tolist() and js.speakers.tolist() == s.speakers.tolist()
    assert js.keys == ["k"] and list(js.meta_info) == ["age"] and js.channels == 40
    assert js.units.dtype == np.uint16
    ps = PoolChannels(4).pool_samples(js)
    assert ps.channels == 10 and ps.offsets is js.offsets and ps.speakers is js.speakers
    assert ps.units.tolist() == (js.units // 4).tolist()


@pytest.mark.reference
def test_binning_matches_tonic_to_frame(tmp_path):
    tonic = pytest.importorskip("tonic")
    rng = np.random.default_rng(5)
    times = [np.sort(rng.uniform(0, 0.999, rng.integers(1, 300))) for _ in range(20)]
    units = [rng.integers(0, 700, t.size) for t in times]
    path = write_shd_file(tmp_path / "SHD" / "shd_train.h5", times, units, rng.integers(0, 20, 20))
    (tmp_path / "SHD" / "shd_train.h5.zip").write_bytes(b"")  # tonic only checks it exists
    ours = BinSpikes(10_000, 1_000_000, dtype=np.int16).bin_samples(read_shd_file(path))
    to_frame = tonic.transforms.ToFrame(sensor_size=(700, 1, 1), time_window=10_000, start_time=0,
                                        end_time=1_000_000)
    theirs = np.stack([to_frame(tonic.datasets.SHD(str(tmp_path), train=True)[i][0])[:, 0]
                       for i in range(20)])
    np.testing.assert_array_equal(ours, theirs)
