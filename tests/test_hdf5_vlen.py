"""The direct read of SHD's variable-length datasets (``data/hdf5_vlen.py``) returns
exactly h5py's values, and leaves to h5py every file it does not read."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from neuromark.data.hdf5_spikes import _read_chunk, iter_spike_chunks
from neuromark.data.hdf5_vlen import VlenPairReader
from neuromark.data.hdf5_write import write_shd_file
from neuromark.errors import DataError


def _samples(n: int = 150, seed: int = 0) -> tuple[list, list]:
    """Sizes from empty to ~9,000 spikes (large objects get their own heap collection,
    small ones share one); times and units not sorted by anything in particular."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice([0, 1, 3, 40, 700, 9000], size=n)
    times = [np.sort(rng.uniform(0, 1, k)) for k in sizes]
    units = [rng.integers(0, 700, k) for k in sizes]
    return times, units


def _h5py_chunks(path: Path, chunk: int) -> list:
    with h5py.File(path, "r") as f:
        n = f["spikes/times"].shape[0]
        return [_read_chunk(f["spikes/times"], f["spikes/units"], path, a, min(n, a + chunk))
                for a in range(0, n, chunk)]


def _same(ours: list, theirs: list) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a[0] == b[0]
        for x, y in zip(a[1:], b[1:]):
            assert x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes()  # bit for bit (float16 NaN patterns included)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_direct_read_equals_h5py(tmp_path, chunk):
    times, units = _samples()
    path = write_shd_file(tmp_path / "s.h5", times, units, np.zeros(len(times), int))
    with h5py.File(path, "r") as f:
        reader = VlenPairReader.open(f, path)
        assert reader is not None  # the fast path is taken on write_shd_file's layout
        first = reader.read(0, min(chunk, len(times)))
        reader.close()
    assert first is not None
    _same(list(iter_spike_chunks(path, chunk_samples=chunk)), _h5py_chunks(path, chunk))


def test_other_layouts_are_left_to_h5py(tmp_path):
    times, units = _samples(20)
    path = write_shd_file(tmp_path / "z.h5", times, units, np.zeros(20, int), compression="gzip")
    with h5py.File(path, "r") as f:
        assert VlenPairReader.open(f, path) is None  # chunked and filtered
    _same(list(iter_spike_chunks(path, chunk_samples=8)), _h5py_chunks(path, 8))


def test_corrupt_heap_is_not_guessed(tmp_path):
    """A collection whose signature is damaged: the direct read gives up, h5py reads the
    chunk and its error names the file and the samples."""
    times, units = _samples(30)
    path = write_shd_file(tmp_path / "c.h5", times, units, np.zeros(30, int))
    with h5py.File(path, "r") as f:
        ds = f["spikes/times"]
        refs = np.fromfile(path, dtype=[("n", "<u4"), ("a", "<u8"), ("i", "<u4")], count=30,
                           offset=ds.id.get_offset())
    sample = int(np.flatnonzero(refs["n"] > 0)[-1])
    data = bytearray(path.read_bytes())
    address = int(refs["a"][sample])
    assert data[address:address + 4] == b"GCOL"
    data[address:address + 4] = b"XXXX"
    path.write_bytes(bytes(data))
    with h5py.File(path, "r") as f:
        reader = VlenPairReader.open(f, path)
        assert reader.read(sample, sample + 1) is None
        reader.close()
    with pytest.raises(DataError, match=rf"{path.name}: samples \d+\.\.\d+ are unreadable"):
        list(iter_spike_chunks(path, chunk_samples=64))
