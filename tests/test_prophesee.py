"""Prophesee .dat / _bbox.npy readers: round trips, windows, old names, bad files."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE, make_camera_events
from neuromark.data.prophesee import (
    BOX_DTYPE,
    iter_dat,
    make_boxes,
    read_boxes,
    read_dat,
    read_dat_header,
    write_boxes,
    write_dat,
)
from neuromark.errors import DataError


def _events(n: int = 5000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.sort(rng.integers(0, 2_000_000, n))
    return make_camera_events(t, rng.integers(0, 1280, n), rng.integers(0, 720, n), rng.integers(0, 2, n))


def test_dat_round_trip_exact(tmp_path):
    ev = _events()
    path = write_dat(tmp_path / "a_td.dat", ev, width=1280, height=720)
    header = read_dat_header(path)
    assert (header.width, header.height, header.version) == (1280, 720, 2)
    for backend in ("numpy", "auto"):
        got = read_dat(path, backend=backend)
        assert got.dtype == CAMERA_EVENT_DTYPE
        np.testing.assert_array_equal(got, ev)
    # the raw words follow the documented bit layout
    raw = np.fromfile(path, dtype="<u4", offset=header.offset)
    x0, y0, p0 = (int(ev[k][0]) for k in "xyp")
    assert int(raw[1]) == x0 | (y0 << 14) | (p0 << 28)


def test_windows_equal_whole_file(tmp_path):
    ev = _events(seed=1)
    path = write_dat(tmp_path / "b_td.dat", ev, width=1280, height=720)
    parts = list(iter_dat(path, 50_000))
    np.testing.assert_array_equal(np.concatenate(parts), ev)
    assert all(np.all((p["t"] >= 50_000 * i) & (p["t"] < 50_000 * (i + 1))) for i, p in enumerate(parts))
    win = read_dat(path, start_us=123_456, end_us=654_321)
    np.testing.assert_array_equal(win, ev[(ev["t"] >= 123_456) & (ev["t"] < 654_321)])
    assert len(read_dat(path, start_us=5_000_000)) == 0
    np.testing.assert_array_equal(read_dat(path, end_us=1000), ev[ev["t"] < 1000])


def test_expelliarmus_reads_equal(tmp_path):
    pytest.importorskip("expelliarmus")
    ev = _events(seed=2)
    path = write_dat(tmp_path / "c_td.dat", ev, width=1280, height=720)
    np.testing.assert_array_equal(read_dat(path, backend="expelliarmus"), read_dat(path, backend="numpy"))


def test_bad_dat_files(tmp_path):
    path = write_dat(tmp_path / "d_td.dat", _events(10), width=1280, height=720)
    path.write_bytes(path.read_bytes() + b"\x01\x02\x03")
    with pytest.raises(DataError, match="whole number of 8-byte records"):
        read_dat(path, backend="numpy")
    bad = tmp_path / "e_td.dat"
    bad.write_bytes(b"% Version 2\n% Height 720\n\x0c\x10" + bytes(16))
    with pytest.raises(DataError, match="event size is 16"):
        read_dat(bad)
    with pytest.raises(ValueError, match="time-ordered"):
        write_dat(tmp_path / "f.dat", _events(10)[::-1], width=1280, height=720)


def test_boxes_round_trip_and_old_names(tmp_path):
    boxes = make_boxes([10, 20], [1.5, 2], [3, 4], [30, 40], [20, 25], [2, 0], [0.9, 0.5], [7, 8])
    path = write_boxes(tmp_path / "a_bbox.npy", boxes)
    got = read_boxes(path)
    assert got.dtype == BOX_DTYPE and got.dtype.itemsize == 40
    np.testing.assert_array_equal(got, boxes)
    old = np.zeros(2, [("ts", "<u8"), ("x", "<f4"), ("y", "<f4"), ("w", "<f4"), ("h", "<f4"),
                       ("class_id", "u1"), ("confidence", "<f4"), ("track_id", "<u4")])
    for name in ("x", "y", "w", "h", "class_id", "track_id"):
        old[name] = boxes[name]
    old["ts"], old["confidence"] = boxes["t"], boxes["class_confidence"]
    np.save(tmp_path / "old_bbox.npy", old)
    np.testing.assert_array_equal(read_boxes(tmp_path / "old_bbox.npy"), boxes)
    np.save(tmp_path / "plain.npy", np.zeros(3))
    with pytest.raises(DataError, match="structured"):
        read_boxes(tmp_path / "plain.npy")


# EVT2 only: expelliarmus' EVT3 *encoder* writes no new TIME_HIGH when the high part moves
# (it relies on its decoder reading a TIME_LOW decrease as an overflow, its issue #19), so
# its EVT3 files break Prophesee's layout; neuromark's EVT3 decoder is tested on words
# built by hand (tests/test_prophesee_evt.py) and on Prophesee's own sample instead.
@pytest.mark.parametrize("encoding", ["evt2"])
def test_raw_files_through_expelliarmus(tmp_path, encoding):
    expelliarmus = pytest.importorskip("expelliarmus")
    from neuromark.data.prophesee import read_raw

    ev = _events(500, seed=4)
    ev["t"] //= 20  # dense (gaps < 4096 us): expelliarmus' own EVT3 encoder drops time-high
    # steps on sparse streams, so the round trip is only exact for dense ones
    arr = np.zeros(len(ev), [("t", "<i8"), ("x", "<i2"), ("y", "<i2"), ("p", "u1")])
    for name in ("t", "x", "y", "p"):
        arr[name] = ev[name]
    expelliarmus.Wizard(encoding=encoding).save(str(tmp_path / "a.raw"), arr)
    got = read_raw(tmp_path / "a.raw", encoding, width=1280, height=720)
    for name in ("t", "x", "y", "p"):
        np.testing.assert_array_equal(got[name], ev[name])
