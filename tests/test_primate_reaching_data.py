"""PrimateReaching reader: tiny MATLAB v7.3 files written here in the real layout (object
references, MATLAB_empty cells, 96 and 192 channels), hand-computed bins and labels."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest

from neuromark.benchmarks.primate_reaching.reader import (
    PrimateReaching,
    bin_session,
    reach_segments,
    read_session,
    split_segments,
)
from neuromark.errors import ConfigError, DataError


def write_mat73(path: Path, t: np.ndarray, cursor: np.ndarray, target: np.ndarray,
                spikes: list[list[np.ndarray | None]]) -> Path:
    """A MATLAB v7.3 file as MATLAB writes it: 512-byte user block with the text header,
    column vectors as (1, K), cells as object references into ``#refs#``; ``None`` is an
    empty cell (uint64 [0, 0] with MATLAB_empty)."""
    units = max(len(c) for c in spikes)
    with h5py.File(path, "w", userblock_size=512) as f:
        refs = f.create_group("#refs#")
        f.create_dataset("t", data=t[None, :]).attrs["MATLAB_class"] = np.bytes_("double")
        for name, arr in (("cursor_pos", cursor), ("target_pos", target)):
            f.create_dataset(name, data=arr.T).attrs["MATLAB_class"] = np.bytes_("double")
        cells = f.create_dataset("spikes", shape=(units, len(spikes)), dtype=h5py.ref_dtype)
        cells.attrs["MATLAB_class"] = np.bytes_("cell")
        for c, channel in enumerate(spikes):
            for u in range(units):
                times = channel[u] if u < len(channel) else None
                if times is None:
                    ds = refs.create_dataset(f"e{c}_{u}", data=np.zeros(2, dtype=np.uint64))
                    ds.attrs["MATLAB_empty"] = np.uint8(1)
                else:
                    ds = refs.create_dataset(f"s{c}_{u}", data=np.asarray(times, float)[None, :])
                ds.attrs["MATLAB_class"] = np.bytes_("double")
                cells[u, c] = ds.ref
    header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: test HDF5 schema 1.00 ."
    with open(path, "r+b") as handle:
        handle.write(header.ljust(116, b" ") + b"\0" * 8 + b"\x00\x02IM")
    return path


T0 = 0.002
K = 12


def tiny(tmp_path: Path, channels: int = 96, name: str = "indy_20160622_01") -> Path:
    t = T0 + 0.004 * np.arange(K)
    cursor = np.stack([np.arange(K) ** 2, -np.arange(K, dtype=float)], 1).astype(float)
    target = np.zeros((K, 2))
    target[3:, 0] = 10.0   # change between samples 2 and 3 -> boundary 2
    target[7:, 1] = 5.0    # boundary 6
    target[9:, 0] = -3.0   # boundary 8
    target[10:, 1] = 1.0   # boundary 9
    spikes: list[list[np.ndarray | None]] = [[None] for _ in range(channels)]
    spikes[0] = [np.array([T0 + 0.005]), np.array([T0 + 0.006, T0 + 0.0061])]  # same bin, 2 units
    spikes[1] = [None, None, np.array([T0 - 0.001, T0 + 0.013])]
    spikes[2] = [np.array([T0 - 0.0045])]  # before E_0 = t0 - 4 ms: dropped
    spikes[channels - 1] = [np.array([T0 + 0.004 * (K - 1) - 0.001])]  # after the last bin: dropped
    return write_mat73(tmp_path / f"{name}.mat", t, cursor, target, spikes)


@pytest.mark.parametrize("channels", [96, 192])
def test_read_dereferences_cells_and_empty_cells(tmp_path, channels):
    rec = read_session(tiny(tmp_path, channels))
    assert rec.channels == channels and rec.t.shape == (K,) and rec.cursor.shape == (K, 2)
    assert rec.spikes[0][1].tolist() == [T0 + 0.006, T0 + 0.0061]
    assert rec.spikes[1][0].size == 0 and rec.spikes[5][0].size == 0  # MATLAB_empty, not 2 zeros
    # t[0] = 2 ms: reading the empty cells' [0, 0] as spikes at 0 s would fill bin 1
    x = bin_session(rec)
    assert x[:, 5:channels - 1].sum() == 0


def test_bins_by_hand(tmp_path):
    x = bin_session(read_session(tiny(tmp_path)))
    assert x.shape == (K, 96) and x.dtype == np.uint8
    # sample k holds [t[k-1] - 4 ms, t[k-1]) = [t[k-2], t[k-1])
    expected = np.zeros((K, 3), dtype=np.uint8)
    expected[3, 0] = 1                 # t0+5, t0+6, t0+6.1 ms all in [t1, t2): OR -> 1
    expected[1, 1] = expected[5, 1] = 1  # t0-1 in [t-1, t0); t0+13 in [t3, t4)
    assert (x[:, :3] == expected).all()
    assert x[:, 95].sum() == 0
    x8 = bin_session(read_session(tiny(tmp_path)), 0.008)  # two sub-bins: [t[k-1] - 8 ms, t[k-1])
    expected8 = expected.copy()
    expected8[1:] += expected[:-1]
    expected8[0:2, 2] = 1  # t0-4.5 ms: before the 4-ms grid, inside [t[k-1] - 8, t[k-1]) for k = 0, 1
    assert (x8[:, :3] == expected8).all()


def test_segments_split_and_labels(tmp_path):
    rec = read_session(tiny(tmp_path))
    segs = reach_segments(rec.target)
    assert segs == [(0, 2), (2, 6), (6, 8), (8, 9), (9, K)]
    assert split_segments(5, 0.5) == {"train": slice(0, 2), "val": slice(2, 3), "test": slice(3, 5)}
    assert split_segments(10, 0.8)["test"] == slice(9, 10)
    test = PrimateReaching(tmp_path, "indy_20160622_01", "test")
    assert len(test) == K - 8 and test.indices.tolist() == list(range(8, K))
    x, y = test[0]
    assert x.shape == (1, 96) and y.tolist() == [2.0 * 8, -1.0]  # central difference of k^2
    _, y_last = test[len(test) - 1]
    assert y_last.tolist() == [2.0 * K - 3, -1.0]  # one-sided at the end
    train = PrimateReaching(tmp_path, "indy_20160622_01", "train")
    assert train[0][1].tolist() == [1.0, -1.0]


def test_history_is_zero_padded_and_oldest_first(tmp_path):
    tiny(tmp_path)
    train = PrimateReaching(tmp_path, "indy_20160622_01", "train", num_steps=3)
    x, _ = train[3]  # recording rows 1, 2, 3
    assert x.shape == (3, 96) and x[:, 0].tolist() == [0, 0, 1] and x[:, 1].tolist() == [1, 0, 0]
    x0, _ = train[0]  # rows -2, -1, 0: zeros, never the recording's end
    assert x0.abs().sum() == 0


def test_stream_chunks(tmp_path):
    tiny(tmp_path)
    test = PrimateReaching(tmp_path, "indy_20160622_01", "test")
    chunks = list(test.stream(3))
    assert [c[0].shape for c in chunks] == [(1, 3, 96), (1, 1, 96)]
    assert [c[2]["new_stream"] for c in chunks] == [True, False]
    with pytest.raises(ConfigError, match="never shuffled"):
        test.loader(4, shuffle=True)


def test_bad_files_and_settings(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_session(tmp_path / "missing.mat")
    bad = tmp_path / "bad.mat"
    bad.write_bytes(b"MATLAB 5.0 MAT-file" + b"\0" * 200)
    with pytest.raises(DataError, match="not a readable MATLAB v7.3"):
        read_session(bad)
    with h5py.File(tmp_path / "nofield.mat", "w") as f:
        f["t"] = np.zeros((1, 5))
    with pytest.raises(DataError, match="no field 'cursor_pos'"):
        read_session(tmp_path / "nofield.mat")
    with pytest.raises(ConfigError, match="multiple of 0.004"):
        PrimateReaching(tmp_path, "x", bin_width=0.005)
    with pytest.raises(ConfigError, match="published session"):
        PrimateReaching(tmp_path, "x").verify()
