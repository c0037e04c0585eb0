"""Input contract of the camera-event readers (Prophesee ``.dat``, ``_bbox.npy`` boxes,
DVS Gesture ``.npy``), checked on whole columns with numpy before any work.

Event rules, in the order they are checked:

- ``finite time``: no NaN or infinite time (float files);
- ``time range``: ``0 <= t <= MAX_TIME_US`` (2^53 µs: no overflow when converted);
- ``inside the sensor``: ``0 <= x < width`` and ``0 <= y < height``;
- ``integer coordinates``: whole-number pixels (float files: x = 3.5 would be truncated);
- ``polarity``: ``p`` is 0 or 1 (where a reader passes it: DVS Gesture's column);
- ``time order``: times non-decreasing (shuffled or reversed records are refused);
- ``time gap``: no gap between consecutive events (and, where windows start at 0, before
  the first one) above ``MAX_GAP_US`` (60 s): one event at t = 2^32-1 µs in a 3-s file
  would otherwise make it a 71-minute stream of empty windows.

Box rules: ``finite box`` (x, y, w, h finite) and ``positive size`` (w > 0, h > 0).

``on_invalid="error"`` (the default) raises :class:`DataError` naming the file, the first
record that breaks a rule, the rule and how many records break it. ``on_invalid="drop"``
drops them and counts them per rule instead: records outside the sensor or range first,
then the fewest records that restore the order (a late outlier, or an early one), then
every run of events but the longest one that no gap above the limit interrupts.
"""

from __future__ import annotations

import os

import numpy as np

from neuromark.errors import DataError

#: The largest event time accepted (µs): 2^53, exact in float64, far from int64 overflow.
MAX_TIME_US = 2 ** 53
#: The largest gap between consecutive events accepted (µs): one Gen4 recording's length.
MAX_GAP_US = 60_000_000
ON_INVALID = ("error", "drop")
_CHUNK = 1 << 22


def _check_mode(on_invalid: str) -> None:
    if on_invalid not in ON_INVALID:
        raise ValueError(f"on_invalid must be 'error' or 'drop', got {on_invalid!r}")


def _refuse(path: object, rule: str, bad: np.ndarray, detail: str, offset: int = 0) -> None:
    first = int(np.flatnonzero(bad)[0])
    text = detail(first) if callable(detail) else detail
    raise DataError(f"{path}: record {offset + first}: {rule}: {text} "
                    f"({int(bad.sum())} record(s) break this rule; dataset option on_invalid: drop "
                    "drops and counts them)")


def _steps(t: np.ndarray, start: float | None) -> tuple[np.ndarray, np.ndarray]:
    """(time of the record before each one, the step from it); the first record's is
    ``start``, or itself when None."""
    before = np.concatenate([t[:1] if start is None else np.array([start], t.dtype), t[:-1]])
    return before, t - before


def _fractional(a: np.ndarray) -> np.ndarray:
    """Finite values with a fractional part (float columns; integers have none)."""
    return np.isfinite(a) & (a != np.floor(a)) if a.dtype.kind == "f" else np.zeros(len(a), bool)


def _all_valid(t: np.ndarray, x: np.ndarray, y: np.ndarray, width: int | None, height: int | None,
               start: float | None, p: np.ndarray | None = None) -> bool:
    """Every rule holds (reductions only, the fast path of valid files)."""
    if not len(t):
        return True
    if p is not None and not ((p == 0) | (p == 1)).all():
        return False
    if (x.dtype.kind == "f" or y.dtype.kind == "f") and (_fractional(x).any() or _fractional(y).any()):
        return False
    if t.dtype.kind == "f" and not np.isfinite(t).all():
        return False
    if not (t.dtype.kind == "u" and t.dtype.itemsize <= 4) and not 0 <= t.min() <= t.max() <= MAX_TIME_US:
        return False
    if width is not None and height is not None and len(x) and not (
            0 <= x.min() <= x.max() < width and 0 <= y.min() <= y.max() < height):
        return False
    step = np.diff(t)  # unsigned: a decrease wraps round to a huge step, refused below
    first = 0 if start is None else t[0].item() - start
    return bool(0 <= first <= MAX_GAP_US and (not len(step) or 0 <= step.min() <= step.max() <= MAX_GAP_US))


def _ordered(t: np.ndarray) -> np.ndarray:
    """Keep-mask of a non-decreasing subsequence: records below an earlier one dropped, or
    records above a later one dropped, whichever drops fewer."""
    late_ok = t >= np.maximum.accumulate(t)
    early_ok = t <= np.minimum.accumulate(t[::-1])[::-1]
    return late_ok if late_ok.sum() >= early_ok.sum() else early_ok


def check_events(path: object, t: np.ndarray, x: np.ndarray, y: np.ndarray, *, width: int | None,
                 height: int | None, on_invalid: str = "error", from_zero: bool = False, offset: int = 0,
                 previous: float | None = None, p: np.ndarray | None = None
                 ) -> tuple[np.ndarray | None, dict[str, int]]:
    """(keep-mask or None when every record is valid, dropped count per rule) of events
    with times ``t`` (µs, any numeric dtype), pixels ``x, y`` and (optional) polarities
    ``p``; see the module.

    ``from_zero``: the gap before the first event counts (windows start at t = 0).
    ``offset``/``previous``: the index and time of the record before ``t[0]`` (chunks)."""
    _check_mode(on_invalid)
    drop = on_invalid == "drop"
    t, x, y = np.asarray(t), np.asarray(x), np.asarray(y)
    start = 0 if from_zero and previous is None else previous
    p = None if p is None else np.asarray(p)
    if _all_valid(t, x, y, width, height, start, p):
        return None, {}
    exact = t.dtype.kind == "u" and t.dtype.itemsize <= 4  # finite, in range: nothing to check
    tf = t.astype(np.int64) if t.dtype.kind in "ui" else t.astype(np.float64)
    counts: dict[str, int] = {}
    keep = np.ones(len(tf), bool)
    spans = []
    if tf.dtype.kind == "f":
        spans.append(("finite time", lambda: ~np.isfinite(tf), "time is NaN or infinite"))
    if not exact:
        spans.append(("time range", lambda: ~((tf >= 0) & (tf <= MAX_TIME_US)),
                      lambda i: f"t = {tf[i]:.17g} µs outside [0, 2^53]"))
    if width is not None and height is not None:
        def outside() -> np.ndarray:
            inside = (x < width) & (y < height)
            if x.dtype.kind != "u" or y.dtype.kind != "u":
                inside &= (x >= 0) & (y >= 0)
            return ~inside
        spans.append(("inside the sensor", outside, lambda i: f"(x, y) = ({x[i]:g}, {y[i]:g}) outside "
                      f"the {width}x{height} sensor"))
    if x.dtype.kind == "f" or y.dtype.kind == "f":
        spans.append(("integer coordinates", lambda: _fractional(x) | _fractional(y),
                      lambda i: f"(x, y) = ({x[i]:.17g}, {y[i]:.17g}) is not a whole pixel"))
    if p is not None:
        spans.append(("polarity", lambda: ~((p == 0) | (p == 1)),
                      lambda i: f"p = {p[i]:.17g} (a polarity is 0 or 1)"))
    for rule, find, detail in spans:
        bad = find() & keep
        if bad.any():
            if not drop:
                _refuse(path, rule, bad, detail, offset)
            counts[rule] = int(bad.sum())
            keep &= ~bad
    idx = np.flatnonzero(keep) if counts else None
    tk = tf if idx is None else tf[idx]
    before, step = _steps(tk, start)
    if (step < 0).any():
        if not drop:
            _refuse(path, "time order", step < 0, lambda i: f"t = {tk[i]:.17g} µs is before the previous "
                    f"record's {before[i]:.17g} µs (records must be time-ordered)", offset)
        order = _ordered(tk)
        idx = np.arange(len(tf)) if idx is None else idx
        counts["time order"] = int((~order).sum())
        keep[idx[~order]] = False
        idx, tk = idx[order], tk[order]
        before, step = _steps(tk, start)
    if (step > MAX_GAP_US).any():
        if not drop:
            _refuse(path, "time gap", step > MAX_GAP_US, lambda i: f"t = {tk[i]:.17g} µs is "
                    f"{step[i] / 1e6:.6g} s after the previous record (limit {MAX_GAP_US / 1e6:g} s: "
                    "an absurd time)", offset)
        run = np.cumsum(step > MAX_GAP_US)
        longest = np.argmax(np.bincount(run))
        idx = np.arange(len(tf)) if idx is None else idx
        counts["time gap"] = int((run != longest).sum())
        keep[idx[run != longest]] = False
    return (keep if counts else None), counts


def check_dat(path: str | os.PathLike[str], records: np.ndarray, width: int | None, height: int | None,
              on_invalid: str = "error") -> tuple[np.ndarray, dict[str, int]]:
    """(sorted indices of the records dropped, count per rule) of a ``.dat`` file's records;
    in ``error`` mode read in chunks of 4 Mi records (no copy of the whole file)."""
    _check_mode(on_invalid)
    n = len(records)
    step = n if on_invalid == "drop" else _CHUNK
    dropped, counts = [np.zeros(0, np.int64)], {}
    previous: int | None = None
    for lo in range(0, n, max(step, 1)):
        chunk = records[lo:lo + step]
        t, w = np.asarray(chunk["t"]), np.asarray(chunk["w"])
        keep, found = check_events(path, t, w & 0x3FFF, (w >> 14) & 0x3FFF, width=width, height=height,
                                   on_invalid=on_invalid, from_zero=True, offset=lo, previous=previous)
        previous = int(t[-1])
        if keep is not None:
            dropped.append(lo + np.flatnonzero(~keep))
            counts = found
    return np.concatenate(dropped), counts


def check_boxes(path: object, boxes: np.ndarray,
                on_invalid: str = "error") -> tuple[np.ndarray, dict[str, int]]:
    """(the valid boxes, dropped count per rule): finite x, y, w, h; w and h positive."""
    _check_mode(on_invalid)
    cols = {k: np.asarray(boxes[k], np.float64) for k in ("x", "y", "w", "h")}
    finite = np.ones(len(boxes), bool)
    for c in cols.values():
        finite &= np.isfinite(c)
    rules = [("finite box", ~finite, "x, y, w, h must be finite"),
             ("positive size", finite & ~((cols["w"] > 0) & (cols["h"] > 0)),
              lambda i: f"w = {cols['w'][i]:g}, h = {cols['h'][i]:g} (both must be > 0)")]
    counts: dict[str, int] = {}
    keep = np.ones(len(boxes), bool)
    for rule, bad, detail in rules:
        if bad.any():
            if on_invalid == "error":
                _refuse(path, rule, bad, detail)
            counts[rule] = int(bad.sum())
            keep &= ~bad
    return (boxes if not counts else boxes[keep]), counts
