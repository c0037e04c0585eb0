"""Prophesee files: ``.dat`` CD events and ``_bbox.npy`` box labels (Gen4 / 1 Mpx layout).

``.dat`` (Prophesee's ``dat_events_tools`` layout, version 2): ASCII header lines that
start with ``"% "`` (``% Height 720``, ``% Width 1280``, ...), then two bytes (event type,
event size = 8), then 8-byte little-endian records: u32 ``t`` in µs and a u32 word with
x in bits 0-13, y in bits 14-27 and the polarity in bit 28.

``_bbox.npy``: a structured array (itemsize 40) ``t`` i8 µs, ``x, y, w, h`` f4 (pixels,
top-left corner), ``class_id`` u4, ``track_id`` u4, ``class_confidence`` f4. Older files
name the time ``ts`` and the score ``confidence``; :func:`read_boxes` renames them.

Prophesee ``.raw`` files (EVT 2.0 / 3.0): :func:`read_raw` and friends, from
:mod:`~neuromark.data.prophesee_raw_read` (neuromark's own decoders).

Windowed reads (:func:`read_dat` with ``start_us``/``end_us``, :func:`iter_dat`) memory-map
the records and binary-search ``t`` (records are time-ordered), so a 60-s file is never
loaded whole. A whole-file read uses ``expelliarmus`` when it is installed (measured equal
and faster, ``bench/prophesee_read.py``) and numpy otherwise.

Example:
    >>> ev = read_dat("moorea_2019-02-19_005_td_2257500000_2317500000_td.dat",
    ...               start_us=500_000, end_us=550_000)  # doctest: +SKIP
    >>> ev.dtype.names
    ('t', 'x', 'y', 'p')
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neuromark.data.event_contract import check_boxes, check_dat
from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE
from neuromark.data.prophesee_raw_read import (  # noqa: F401 (the .raw readers, re-exported)
    RawRead,
    raw_encoding,
    raw_geometry,
    read_raw,
    read_raw_checked,
    read_raw_file,
)
from neuromark.errors import DataError

#: On-disk record of a ``.dat`` file.
DAT_RECORD = np.dtype([("t", "<u4"), ("w", "<u4")])
#: Event types of CD (change detection) events in ``.dat`` headers.
CD_EVENT_TYPES = (0, 12)
#: The modern ``_bbox.npy`` dtype (itemsize 40).
BOX_DTYPE = np.dtype({"names": ["t", "x", "y", "w", "h", "class_id", "track_id", "class_confidence"],
                      "formats": ["<i8", "<f4", "<f4", "<f4", "<f4", "<u4", "<u4", "<f4"],
                      "offsets": [0, 8, 12, 16, 20, 24, 28, 32], "itemsize": 40})
_OLD_NAMES = {"ts": "t", "confidence": "class_confidence"}
_MASK14 = 0x3FFF


@dataclass(frozen=True)
class DatHeader:
    """A ``.dat`` header: sensor size in pixels, byte offset of the first record."""

    width: int | None
    height: int | None
    version: int
    event_type: int
    offset: int
    lines: tuple[str, ...]


def _dat_version(path: object, text: str) -> int:
    """The ``% Version`` of a ``.dat`` header: a whole number (``2``, or ``2.0`` written
    as a decimal); this reader knows versions 0 to 2."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value.is_integer() or not 0 <= value <= 2:
        raise DataError(f"{path}: header '% Version {text}' is not a .dat version this reader "
                        "knows (0, 1 or 2: a whole number)")
    return int(value)


def read_dat_header(path: str | os.PathLike[str]) -> DatHeader:
    """Parse a ``.dat`` header; :class:`DataError` naming the file for a foreign layout."""
    keys: dict[str, str] = {}
    lines: list[str] = []
    with open(path, "rb") as f:
        while True:
            pos = f.tell()
            first = f.read(1)
            if first != b"%":
                f.seek(pos)
                break
            raw = first + f.readline()
            try:
                line = raw.decode("ascii").rstrip("\r\n")
            except UnicodeDecodeError:
                raise DataError(f"{path}: header line at byte {pos} is not ASCII") from None
            lines.append(line)
            parts = line[1:].strip().split(None, 1)
            if len(parts) == 2:
                keys[parts[0].lower()] = parts[1].strip()
        version = _dat_version(path, keys.get("version", "0"))
        event_type, size = 0, 8
        if version >= 2:
            pair = f.read(2)
            if len(pair) != 2:
                raise DataError(f"{path}: truncated .dat header (no event type/size bytes)")
            event_type, size = pair[0], pair[1]
        offset = f.tell()
    if size != 8:
        raise DataError(f"{path}: .dat event size is {size} bytes, expected 8 (CD events)")
    if event_type not in CD_EVENT_TYPES:
        raise DataError(f"{path}: .dat event type {event_type} is not CD events {CD_EVENT_TYPES}")

    def _int(name: str) -> int | None:
        try:
            return int(keys[name]) if name in keys else None
        except ValueError:
            raise DataError(f"{path}: header '% {name.title()} {keys[name]}' is not an integer") from None

    return DatHeader(_int("width"), _int("height"), version, event_type, offset, tuple(lines))


def dat_records(path: str | os.PathLike[str], header: DatHeader) -> np.ndarray:
    """The records of a ``.dat`` file as a read-only memory map (unchecked)."""
    size = os.path.getsize(path) - header.offset
    if size % DAT_RECORD.itemsize:
        raise DataError(f"{path}: {size} bytes of events is not a whole number of 8-byte records "
                        "(truncated file?)")
    if size == 0:
        return np.zeros(0, DAT_RECORD)
    return np.memmap(path, dtype=DAT_RECORD, mode="r", offset=header.offset)


def decode_records(records: np.ndarray) -> np.ndarray:
    """8-byte ``.dat`` records -> :data:`CAMERA_EVENT_DTYPE` (t µs, x, y, p)."""
    w = np.asarray(records["w"])
    out = np.empty(records.shape[0], CAMERA_EVENT_DTYPE)
    out["t"] = records["t"]
    out["x"] = w & _MASK14
    out["y"] = (w >> 14) & _MASK14
    out["p"] = (w >> 28) & 1
    return out


def _index(t_column: np.ndarray, value: int) -> int:
    """First record with ``t >= value`` by binary search on the memory map (no copy)."""
    return bisect.bisect_left(t_column, value)


class _Kept:
    """The ``t`` column without the ``dropped`` records, as a lazy sequence for bisect."""

    def __init__(self, t: np.ndarray, dropped: np.ndarray) -> None:
        self.t, self.dropped = t, dropped
        self.shift = dropped - np.arange(len(dropped))  # kept records before each dropped one

    def raw(self, k: int) -> int:
        return k + int(np.searchsorted(self.shift, k, "right"))

    def __len__(self) -> int:
        return len(self.t) - len(self.dropped)

    def __getitem__(self, k: int) -> int:
        return int(self.t[self.raw(k)])


def read_dat(path: str | os.PathLike[str], *, start_us: int | None = None,
             end_us: int | None = None, backend: str = "auto", on_invalid: str = "error",
             dropped: np.ndarray | None = None) -> np.ndarray:
    """Events with ``start_us <= t < end_us`` (either bound optional) as
    :data:`CAMERA_EVENT_DTYPE`; records must be time-ordered, as Prophesee writes them.

    ``backend``: ``"numpy"`` (memory map), ``"expelliarmus"`` (whole files only), or
    ``"auto"``: expelliarmus for a whole-file read when importable, else numpy.
    A whole-file read checks the input contract (:mod:`~neuromark.data.event_contract`;
    ``on_invalid``); a windowed read trusts a file checked by
    :func:`~neuromark.data.event_contract.check_dat`, skipping its ``dropped`` records.
    """
    header = read_dat_header(path)
    whole = start_us is None and end_us is None
    if backend not in ("auto", "numpy", "expelliarmus"):
        raise ValueError(f"backend must be 'auto', 'numpy' or 'expelliarmus', got {backend!r}")
    if backend == "expelliarmus" and not whole:
        raise ValueError("the expelliarmus backend reads whole files only (its time windows "
                         "overrun their end); use backend='numpy' for windows")
    records = dat_records(path, header)
    if whole:  # the contract on the records first (expelliarmus would unwrap unsorted times)
        dropped = check_dat(path, records, header.width, header.height, on_invalid)[0]
        arr = None
        if not len(dropped) and backend != "numpy" and header.version >= 2:
            arr = _read_expelliarmus(path, required=backend == "expelliarmus")
        if arr is None:
            arr = decode_records(records)
        return np.delete(arr, dropped) if len(dropped) else arr
    t = records["t"] if dropped is None or not len(dropped) else _Kept(records["t"], dropped)
    lo = 0 if start_us is None else _index(t, max(int(start_us), 0))
    hi = len(t) if end_us is None else _index(t, max(int(end_us), 0))
    if isinstance(t, _Kept):
        lo, hi = (t.raw(k) if k < len(t) else len(records) for k in (lo, max(lo, hi)))
        inside = dropped[np.searchsorted(dropped, lo):np.searchsorted(dropped, hi)] - lo
        return np.delete(decode_records(records[lo:hi]), inside)
    return decode_records(records[lo:max(lo, hi)])


def _read_expelliarmus(path: str | os.PathLike[str], *, required: bool) -> np.ndarray | None:
    try:
        import expelliarmus
    except ImportError:
        if required:
            raise ImportError("backend='expelliarmus' needs `pip install expelliarmus`") from None
        return None
    raw = expelliarmus.Wizard(encoding="dat").read(str(path))
    if raw.dtype.itemsize == CAMERA_EVENT_DTYPE.itemsize and raw.dtype.fields is not None and all(
            raw.dtype.fields[k][1] == CAMERA_EVENT_DTYPE.fields[k][1] for k in ("t", "x", "y", "p")):
        return raw.view(CAMERA_EVENT_DTYPE)  # same layout; p is 0/1, so u1 -> i1 is exact
    out = np.empty(raw.shape[0], CAMERA_EVENT_DTYPE)
    for name in ("t", "x", "y", "p"):
        out[name] = raw[name]
    return out


def iter_dat(path: str | os.PathLike[str], window_us: int, *, start_us: int = 0,
             end_us: int | None = None) -> Iterator[np.ndarray]:
    """Consecutive windows ``[start_us + k*window_us, start_us + (k+1)*window_us)`` up to
    ``end_us`` (default: the last event), each read from the memory map on its own."""
    if window_us <= 0:
        raise ValueError(f"window_us must be positive, got {window_us}")
    header = read_dat_header(path)
    records = dat_records(path, header)
    if end_us is None:
        end_us = int(records["t"][-1]) + 1 if len(records) else start_us
    t = records["t"]
    lo = _index(t, start_us)
    for begin in range(start_us, end_us, window_us):
        hi = _index(t, min(begin + window_us, end_us))
        yield decode_records(records[lo:hi])
        lo = hi


def write_dat(path: str | os.PathLike[str], events: np.ndarray, *, width: int, height: int,
              date: str = "2019-01-01 00:00:00") -> Path:
    """Write events (fields t µs, x, y, p; time-ordered) as a version-2 ``.dat`` file."""
    t = np.asarray(events["t"])
    if t.size and (np.any(np.diff(t) < 0) or t[0] < 0 or t[-1] >= 2 ** 32):
        raise ValueError("events must be time-ordered with 0 <= t < 2**32 µs")
    x, y, p = (np.asarray(events[k]).astype(np.int64) for k in ("x", "y", "p"))
    if x.size and (x.min() < 0 or y.min() < 0 or x.max() >= width or y.max() >= height):
        raise ValueError(f"event coordinates outside the {width}x{height} sensor")
    records = np.empty(t.shape[0], DAT_RECORD)
    records["t"] = t
    records["w"] = (x | (y << 14) | ((p & 1) << 28)).astype(np.uint32)
    header = (f"% Data file containing CD events.\n% Version 2\n% Date {date}\n"
              f"% Height {height}\n% Width {width}\n").encode("ascii")
    path = Path(path)
    with open(path, "wb") as f:
        f.write(header + bytes([12, 8]))
        records.tofile(f)
    return path


def read_boxes(path: str | os.PathLike[str], on_invalid: str = "error") -> np.ndarray:
    """Box labels as :data:`BOX_DTYPE` (old ``ts``/``confidence`` names accepted); boxes
    that are not finite or not of positive size refused (``on_invalid="drop"``: dropped)."""
    return check_boxes(path, load_boxes(path), on_invalid)[0]


def load_boxes(path: str | os.PathLike[str]) -> np.ndarray:
    """Box labels as :data:`BOX_DTYPE`, unchecked (:func:`read_boxes` checks them)."""
    try:
        raw = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"{path}: not a readable .npy box file: {exc}") from None
    if raw.dtype.names is None:
        raise DataError(f"{path}: boxes must be a structured array, got dtype {raw.dtype}")
    names = [_OLD_NAMES.get(n, n) for n in raw.dtype.names]
    missing = [n for n in BOX_DTYPE.names or () if n not in names and n != "track_id"]
    if missing:
        raise DataError(f"{path}: box fields {missing} missing (got {list(raw.dtype.names)})")
    out = np.zeros(raw.shape[0], BOX_DTYPE)
    for old, new in zip(raw.dtype.names, names):
        if new in out.dtype.names:
            out[new] = raw[old]
    return out


def write_boxes(path: str | os.PathLike[str], boxes: np.ndarray) -> Path:
    """Write boxes (fields of :data:`BOX_DTYPE`) as a ``_bbox.npy`` file."""
    out = np.zeros(len(boxes), BOX_DTYPE)
    for name in BOX_DTYPE.names or ():
        if name in (boxes.dtype.names or ()):
            out[name] = boxes[name]
    path = Path(path)
    np.save(path, out)
    return path


def make_boxes(t: object, x: object, y: object, w: object, h: object, class_id: object,
               class_confidence: object = 1.0, track_id: object = 0) -> np.ndarray:
    """Boxes of :data:`BOX_DTYPE` from columns (broadcast)."""
    cols = np.broadcast_arrays(*(np.asarray(c) for c in (t, x, y, w, h, class_id, track_id,
                                                          class_confidence)))
    out = np.zeros(cols[0].shape[0] if cols[0].ndim else 1, BOX_DTYPE)
    for name, col in zip(("t", "x", "y", "w", "h", "class_id", "track_id", "class_confidence"), cols):
        out[name] = col.reshape(-1)
    return out
