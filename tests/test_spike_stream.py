"""Streamed spike batches (``SpikeFileDataset.loader``): the counts of ``dense()``, chunked
reading, seeded shuffle, jitter, late spikes and bad arguments (tiny SHD-layout files)."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from neuromark.benchmarks.shd.datasets import SpikeFileDataset
from neuromark.benchmarks.shd.entries import BinnedSpikes
from neuromark.data.binning import jitter_samples
from neuromark.data.hdf5_spikes import iter_spike_chunks, write_shd_file
from neuromark.errors import ConfigError, DataError

DT, T_MAX = 7_000, 500_000  # T = ceil(500000 / 7000) = 72 bins, the last one short


def write_file(path: Path, n: int = 37, seed: int = 0, *, late: int = 0) -> Path:
    """``n`` samples of 0-60 spikes in [0, 0.5] s (some empty; a spike at exactly 0.5 s in
    sample 3); ``late`` spikes at 0.6 s added to sample 5."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 61, n)
    counts[[1, 8]] = 0
    times = [rng.uniform(0, 0.5, c) for c in counts]
    units = [rng.integers(0, 700, c) for c in counts]
    times[3] = np.append(times[3], 0.5)
    units[3] = np.append(units[3], 699)
    if late:
        times[5] = np.append(times[5], [0.6] * late)
        units[5] = np.append(units[5], [1] * late)
    return write_shd_file(path, times, units, rng.integers(0, 5, n), rng.integers(0, 3, n),
                          [f"c{i}" for i in range(5)])


def stacked(loader) -> tuple[np.ndarray, np.ndarray]:
    batches = list(loader)
    assert all(x.dtype == torch.float32 and y.dtype == torch.int64 for x, y in batches)
    return (torch.cat([x for x, _ in batches]).numpy(), torch.cat([y for _, y in batches]).numpy())


@pytest.mark.parametrize("batch_size,chunk,pool", [(8, 16, 1), (5, 3, 10), (37, 256, 7), (64, 1, 1)])
def test_loader_equals_dense(tmp_path, batch_size, chunk, pool):
    data = SpikeFileDataset(write_file(tmp_path / "x.h5"))
    loader = data.loader(batch_size, DT, T_MAX, pool=pool, chunk_samples=chunk)
    frames, labels = stacked(loader)
    dense, dense_labels = data.dense(DT, T_MAX, pool=pool)
    assert frames.shape == (37, 72, 700 // pool) and len(loader) == -(-37 // batch_size)
    np.testing.assert_array_equal(frames, dense)
    np.testing.assert_array_equal(labels, dense_labels)
    assert frames[3, -1].sum() >= 1  # the spike at exactly t_max is in the last bin
    assert data._samples is not None  # dense() read the file; the loader alone does not:
    fresh = SpikeFileDataset(data.path)
    list(fresh.loader(batch_size, DT, T_MAX))
    assert fresh._samples is None and len(fresh) == 37


def test_file_read_in_chunks(tmp_path):
    path = write_file(tmp_path / "x.h5")
    chunks = list(iter_spike_chunks(path, chunk_samples=10))
    assert [c[0] for c in chunks] == [0, 10, 20, 30]
    assert [len(c[3]) - 1 for c in chunks] == [10, 10, 10, 7]
    assert all(c[1].dtype == np.float16 and c[2].dtype == np.uint16 for c in chunks)


def test_drop_last(tmp_path):
    data = SpikeFileDataset(write_file(tmp_path / "x.h5"))
    loader = data.loader(10, DT, T_MAX, drop_last=True, chunk_samples=15)
    frames, labels = stacked(loader)
    assert len(loader) == 3 and frames.shape[0] == 30
    np.testing.assert_array_equal(frames, data.dense(DT, T_MAX)[0][:30])
    frames, _ = stacked(data.loader(10, DT, T_MAX, drop_last=True, shuffle=True, seed=1))
    assert frames.shape[0] == 30


def test_shuffle_is_seeded_and_complete(tmp_path):
    data = SpikeFileDataset(write_file(tmp_path / "x.h5"))
    dense, labels = data.dense(DT, T_MAX)
    a = data.loader(6, DT, T_MAX, shuffle=True, seed=3)
    b = data.loader(6, DT, T_MAX, shuffle=True, seed=3)
    epoch1, epoch2 = stacked(a), stacked(a)
    np.testing.assert_array_equal(epoch1[0], stacked(b)[0])  # same seed, same batches
    order = np.random.default_rng(3).permutation(37)
    np.testing.assert_array_equal(epoch1[0], dense[order])
    np.testing.assert_array_equal(epoch1[1], labels[order])
    assert not np.array_equal(epoch1[1], epoch2[1]) or not np.array_equal(epoch1[0], epoch2[0])
    rng = np.random.default_rng(3)
    rng.permutation(37)
    np.testing.assert_array_equal(epoch2[0], dense[rng.permutation(37)])  # next epoch: next draw
    other = stacked(data.loader(6, DT, T_MAX, shuffle=True, seed=4))[0]
    assert not np.array_equal(other, epoch1[0])
    chunked = stacked(data.loader(6, DT, T_MAX, shuffle=True, seed=3, chunk_samples=5))  # held from 8 reads
    np.testing.assert_array_equal(chunked[0], epoch1[0])


def test_jitter_matches_jitter_samples(tmp_path):
    data = SpikeFileDataset(write_file(tmp_path / "x.h5"))
    frames, _ = stacked(data.loader(10, DT, T_MAX, pool=10, seed=7, jitter_sigma=20.0))
    rng = np.random.default_rng(7)
    binned = BinnedSpikes(data.path, dt_us=DT, t_max_us=T_MAX, pool=10)
    parts = [binned.samples.subset(range(lo, min(lo + 10, 37))) for lo in range(0, 37, 10)]
    expected = np.concatenate([binned.frames(jitter_samples(part, rng, 20.0)) for part in parts])
    np.testing.assert_array_equal(frames, expected)
    assert not np.array_equal(frames, binned.frames())  # the jitter moved spikes


def test_binned_spikes_loader_streams_its_binning(tmp_path):
    binned = BinnedSpikes(write_file(tmp_path / "x.h5"), dt_us=DT, t_max_us=T_MAX, pool=10)
    frames, _ = stacked(binned.loader(16))
    np.testing.assert_array_equal(frames, binned.frames())
    assert binned.num_classes == 5 and binned._samples is not None  # frames() read it


def test_late_spikes_error_or_drop(tmp_path):
    data = SpikeFileDataset(write_file(tmp_path / "late.h5", late=3))
    # float16(0.6 s) = 0.60009765625 s
    with pytest.raises(DataError, match=r"late\.h5: sample 5: spike at 600097 us is after "
                                        r"t_max_us=500000 \(3 such spike\(s\)"):
        list(data.loader(4, DT, T_MAX))
    with pytest.raises(DataError, match="sample 5"):
        data.dense(DT, T_MAX)  # the same rule as dense()
    loader = data.loader(4, DT, T_MAX, late="drop")
    frames, _ = stacked(loader)
    assert loader.dropped == 3
    clean = SpikeFileDataset(write_file(tmp_path / "clean.h5"))
    np.testing.assert_array_equal(frames, clean.dense(DT, T_MAX)[0])
    frames, _ = stacked(data.loader(4, DT, 700_000))  # a wider window keeps them
    assert frames[5].sum() == clean.dense(DT, T_MAX)[0][5].sum() + 3


@pytest.mark.parametrize("args,match", [
    ((0, DT, T_MAX), "batch_size must be >= 1, got 0"),
    ((-3, DT, T_MAX), "batch_size must be >= 1"),
    ((4, 0, T_MAX), "dt_us must be > 0"),
    ((4, -10, T_MAX), "dt_us must be > 0"),
    ((4, DT, DT - 1), "t_max_us must be >= dt_us"),
    ((4, 2.5, T_MAX), "dt_us must be an integer"),
])
def test_bad_arguments_name_the_argument(tmp_path, args, match):
    data = SpikeFileDataset(write_file(tmp_path / "x.h5"))
    with pytest.raises(ConfigError, match=match):
        data.loader(*args)


def test_bad_pool_late_and_binned_arguments(tmp_path):
    path = write_file(tmp_path / "x.h5")
    with pytest.raises(ConfigError, match="pool=3 must be >= 1 and divide channels=700"):
        SpikeFileDataset(path).loader(4, DT, T_MAX, pool=3)
    with pytest.raises(ConfigError, match="late must be 'error' or 'drop'"):
        SpikeFileDataset(path).loader(4, DT, T_MAX, late="keep")
    with pytest.raises(ConfigError, match=r"x\.h5: t_max_us must be >= dt_us"):
        BinnedSpikes(path, dt_us=DT, t_max_us=10)


def write_raw(path: Path, times: list, units: list, tdtype=np.float32) -> Path:
    with h5py.File(path, "w") as f:
        t = f.create_dataset("spikes/times", (len(times),), dtype=h5py.vlen_dtype(tdtype))
        u = f.create_dataset("spikes/units", (len(units),), dtype=h5py.vlen_dtype(np.uint16))
        for i, (x, y) in enumerate(zip(times, units)):
            t[i], u[i] = np.asarray(x, dtype=tdtype), np.asarray(y, dtype=np.uint16)
        f.create_dataset("labels", data=np.zeros(len(times), dtype=np.uint16))
    return path


def test_float32_times_and_bad_spikes_name_the_sample(tmp_path):
    path = write_raw(tmp_path / "f32.h5", [[0.1, 0.0123456, 0.49], [0.25]], [[1, 2, 3], [4]])
    data = SpikeFileDataset(path)
    np.testing.assert_array_equal(stacked(data.loader(1, DT, T_MAX))[0], data.dense(DT, T_MAX)[0])
    bad = SpikeFileDataset(write_raw(tmp_path / "unit.h5", [[0.1], [0.2, 0.3]], [[1], [5, 700]]))
    with pytest.raises(DataError, match=r"unit\.h5: sample 1: unit 700 is out of range 0\.\.699"):
        list(bad.loader(2, DT, T_MAX))
    neg = SpikeFileDataset(write_raw(tmp_path / "neg.h5", [[0.1], [0.2], [np.nan]], [[1], [2], [3]]))
    with pytest.raises(DataError, match=r"neg\.h5: sample 2: spike time nan s is negative or not finite"):
        list(neg.loader(2, DT, T_MAX, chunk_samples=2))
    mismatched = SpikeFileDataset(write_raw(tmp_path / "len.h5", [[0.1], [0.2, 0.3]], [[1], [2]]))
    with pytest.raises(DataError, match="sample 1: spikes/times has 2 entries but spikes/units has 1"):
        list(mismatched.loader(2, DT, T_MAX))


def test_classification_run_drops_and_records_late_spikes(tmp_path, capsys, monkeypatch):
    """Through `neuromark run`: the test split streams; with late: drop the spikes after
    t_max_us (class 1 spikes at 0.1-0.2 s, t_max 0.15 s) are counted in the results and
    printed; without it the run fails naming the file and sample."""
    import json

    from test_shd_snn import make_corpus

    from neuromark.cli import main

    make_corpus(tmp_path, n_train=10, n_test=6)
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))

    def config(extra: str) -> Path:
        path = tmp_path / "c.yaml"
        path.write_text("task: classification\nbenchmark: {id: late}\ndataset:\n  name: spike_files\n"
                        "  options: {train: train.h5, test: test.h5, dt_us: 50000, t_max_us: 150000, "
                        f"pool: 10{extra}}}\nmodel: {{name: svm, checkpoint: svm.pt}}\n"
                        "eval: {metrics: [classification_accuracy]}\n")
        return path

    assert main(["run", str(config("")), "--out", str(tmp_path / "o1"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "train.h5: sample 1: spike at" in err and "after t_max_us=150000" in err
    assert "late='drop'" in err
    assert main(["run", str(config(", late: drop")), "--out", str(tmp_path / "o2"), "--quiet"]) == 0
    err = capsys.readouterr().err
    dropped = [json.loads(p.read_text()) for p in (tmp_path / "o2").rglob("*.json")]
    found = [d for d in dropped if "dropped_late_spikes" in json.dumps(d)]
    assert found and "spike(s) after t_max_us dropped" in err


def test_reused_batch_memory_is_overwritten(tmp_path):
    """Batches dropped before the next is binned share memory (the kernel zeroes each row
    itself): every batch still equals dense(), and bin_batch overwrites a dirty ``out``."""
    from neuromark.data.spike_stream import bin_batch

    data = SpikeFileDataset(write_file(tmp_path / "x.h5"))
    dense, _ = data.dense(DT, T_MAX)
    loader = data.loader(5, DT, T_MAX, chunk_samples=3)
    pointers = set()
    for i, (frames, _) in enumerate(loader):
        pointers.add(frames.data_ptr())
        np.testing.assert_array_equal(frames.numpy(), dense[5 * i:5 * i + 5])
        del frames
    assert len(pointers) <= 2  # memory was reused, so dirty memory was binned into
    times, units, offsets = next(iter_spike_chunks(data.path, chunk_samples=4))[1:]
    dirty = np.full((4, 72, 700), np.nan, np.float32)
    out, _ = bin_batch(times, units, offsets, dt_us=DT, t_max_us=T_MAX, channels=700, out=dirty)
    np.testing.assert_array_equal(out, dense[:4])


def test_runner_reuses_one_batch_buffer(tmp_path):
    """The runner, its loop and the instrument's step index drop each batch before the next
    is binned, so the loader serves every batch (the short last one included) from one
    buffer; the counts equal those of the same batches held in a list (fresh memory)."""
    snn = pytest.importorskip("snntorch")
    from neuromark import Benchmark
    from neuromark.metrics.complexity import ActivationSparsity, SynapticOperations
    from neuromark.models.snntorch_model import SNNTorchModel

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(700, 8), snn.Leaky(beta=0.9, init_hidden=True,
                                                               output=True)).eval()
    pointers: list[int] = []

    def record(batch):
        pointers.append(batch[0].data_ptr())
        return batch

    adapter = SNNTorchModel(net)
    loader = SpikeFileDataset(write_file(tmp_path / "x.h5")).loader(5, DT, T_MAX, chunk_samples=3)

    def run(batches):
        metrics = [SynapticOperations(), ActivationSparsity()]
        return Benchmark(adapter, batches, [record], metrics=metrics, quiet=True).run().scores

    streamed = run(loader)
    assert len(pointers) == 8 and len(set(pointers)) == 1
    assert loader._buffers and len(loader._buffers) == 1
    held = [(frames.clone(), labels) for frames, labels in loader]
    assert run(held) == streamed and streamed["synaptic_operations"].value["Effective_ACs"] > 0
