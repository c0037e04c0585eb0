"""Power traces logged by external instruments (multimeters, USB power monitors) as CSV.

Format: a header row, then one row per reading, with columns either ``t_s,power_w`` or
``t_s,voltage_v,current_a`` (power = V × I), and optionally ``mark`` (a label on the rows
where the instrument saw a sync mark, e.g. a GPIO edge). ``t_s`` must increase strictly,
and a power below zero is an error naming the line unless the meter declares that its
instrument reads below zero (``signed: true``, e.g. a bidirectional current sensor). The
file is read as UTF-8 (a byte-order mark before the header is dropped); other bytes are an
error naming the file, line and byte offset (:func:`~neuromark.data.clips.read_utf8`).

Alignment with the host's monotonic clock: ``host_t = t_s + offset_s``, with ``offset_s``
given, or found from sync marks: the mean of ``host_time(label) - trace_time(label)``
over the labels marked both by :meth:`CsvTraceMeter.mark` on the host and in the trace.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.data.clips import read_utf8
from neuromark.errors import DataError
from neuromark.system.power.protocol import PowerSamples
from neuromark.system.timing import now_s


def _header(file: Path, text: str) -> list[str]:
    cols = [c.strip() for c in next(csv.reader(io.StringIO(text, newline="")), [])]
    if "t_s" not in cols or not ("power_w" in cols or {"voltage_v", "current_a"} <= set(cols)):
        raise DataError(f"{file}: expected columns t_s,power_w or t_s,voltage_v,current_a "
                        f"(optionally mark), got {','.join(cols) or 'no header'}")
    return cols


def _fast(text: str, cols: list[str], signed: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """All-numeric traces through numpy's C parser; None when anything looks wrong (the
    row-by-row reader then finds and names the line)."""
    try:
        data = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError:
        return None
    if data.shape[1] != len(cols) or not np.all(np.isfinite(data)):
        return None
    t = data[:, cols.index("t_s")]
    if "power_w" in cols:
        p = data[:, cols.index("power_w")]
    else:
        p = data[:, cols.index("voltage_v")] * data[:, cols.index("current_a")]
    if t.size < 2 or np.any(np.diff(t) <= 0) or (not signed and np.any(p < 0)):
        return None
    return np.ascontiguousarray(t), np.ascontiguousarray(p)


def read_trace(path: str | Path, *, signed: bool = False
               ) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """``(t_s, power_w, marks)`` of a CSV trace; bad rows raise :class:`DataError` with the
    line, as does a negative power unless ``signed`` (the instrument reads below zero)."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"power trace not found: {file}")
    text = read_utf8(file, "the power trace")
    cols = _header(file, text)
    if "mark" not in cols:
        fast = _fast(text, cols, signed)
        if fast is not None:
            return fast[0], fast[1], {}
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        reader.fieldnames = cols
        next(reader, None)  # the header row, already checked
        use_power = "power_w" in cols
        t, p, marks = [], [], {}
        for row in reader:
            line = reader.line_num
            try:
                ti = float(row["t_s"])
                pi = (float(row["power_w"]) if use_power
                      else float(row["voltage_v"]) * float(row["current_a"]))
            except (TypeError, ValueError):
                raise DataError(f"{file}:{line}: not a number in {dict(row)}") from None
            if not (np.isfinite(ti) and np.isfinite(pi)):
                raise DataError(f"{file}:{line}: non-finite value in {dict(row)}")
            if pi < 0 and not signed:
                raise DataError(f"{file}:{line}: negative power {pi} W; a power trace reads >= 0 "
                                "(set the meter option signed: true if the instrument can "
                                "read below zero)")
            if t and ti <= t[-1]:
                raise DataError(f"{file}:{line}: time is non-monotonic (t_s={ti} after {t[-1]}); "
                                "t_s must increase strictly")
            label = (row.get("mark") or "").strip()
            if label:
                marks[label] = ti
            t.append(ti)
            p.append(pi)
    if len(t) < 2:
        raise DataError(f"{file}: needs at least 2 readings, found {len(t)}")
    return np.asarray(t), np.asarray(p), marks


def wall_to_host_offset(reads: int = 5) -> float:
    """``now_s() - time.time()``, the read with the tightest bracket of ``reads`` tries (s)."""
    import time

    best = (float("inf"), 0.0)
    for _ in range(reads):
        a = now_s()
        wall = time.time()
        b = now_s()
        best = min(best, (b - a, 0.5 * (a + b) - wall))
    return best[1]


class CsvTraceMeter(PowerSamples):
    """A meter over a recorded CSV trace; ``energy``/``timeline`` use host-clock seconds.

    Args:
        path: the CSV file (read when ``stop`` is called, or at once when it exists).
        offset_s: ``host_t = t_s + offset_s``; None means align by sync marks (or 0 when the
            trace has none, i.e. the trace is already on the host clock).
        wall_clock: ``t_s`` are UNIX times (``time.time()``, e.g. an instrument logging wall
            clock over NTP); the offset to the monotonic clock is measured now.
        signed: the instrument can read below zero (a bidirectional sensor); otherwise a
            negative reading is an error naming its line.
    """

    name = "csv"
    measured = True
    point: str | None = None  # declared in the config (meter.point): where the probe sits

    def __init__(self, path: str | Path, offset_s: float | None = None,
                 components: list[str] | None = None, wall_clock: bool = False,
                 signed: bool = False) -> None:
        self.path = Path(path)
        self.signed = signed
        if wall_clock:
            if offset_s is not None:
                raise DataError(f"{path}: give either offset_s or wall_clock, not both")
            offset_s = wall_to_host_offset()
        self.offset_s = offset_s
        self.wall_clock = wall_clock
        self.components = components or ["as wired to the instrument"]
        self.host_marks: dict[str, float] = {}
        self._trace: tuple[np.ndarray, np.ndarray, dict[str, float]] | None = None
        self.aligned_by = "offset"

    def start(self) -> None:
        pass

    def stop(self) -> None:
        """Read the trace, afresh: a logger may have written to it since an earlier read."""
        self._trace = None
        self._arrays()

    def mark(self, label: str) -> float:
        t = now_s()
        self.host_marks[label] = t
        return t

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._trace is None:
            self._trace = read_trace(self.path, signed=self.signed)
        t, p, marks = self._trace
        return t + self.offset(), p

    def offset(self) -> float:
        """The trace-to-host offset (s)."""
        if self.offset_s is not None:
            return self.offset_s
        if self._trace is None:
            self._trace = read_trace(self.path, signed=self.signed)
        marks = self._trace[2]
        common = sorted(set(marks) & set(self.host_marks))
        if not marks:
            self.aligned_by = "none (trace on host clock)"
            return 0.0
        if not common:
            raise DataError(f"{self.path}: sync marks {sorted(marks)} in the trace but none of them "
                            f"was marked on the host ({sorted(self.host_marks) or 'no host marks'})")
        self.aligned_by = f"sync marks {common}"
        return float(np.mean([self.host_marks[k] - marks[k] for k in common]))

    def _source(self) -> str:
        return str(self.path)

    def _marks(self) -> list[tuple[str, float]]:
        return sorted(self.host_marks.items(), key=lambda kv: kv[1])

    def metadata(self) -> dict[str, Any]:
        t, _ = self._arrays()
        rate = (t.size - 1) / (t[-1] - t[0])
        return {"name": self.name, "measured": True, "reason": "", "file": str(self.path),
                "point": self.point,
                "components": self.components, "sample_rate_hz": float(rate),
                "offset_s": self.offset(),
                "aligned_by": "wall clock (time.time)" if self.wall_clock else self.aligned_by}
