"""SPEC PTDaemon's sample log (``spl.txt``) and MLPerf's power metric over it.

PTDaemon (the SPEC power analyzer daemon that MLPerf Power drives through
``mlcommons/power-dev``) writes one line per analyzer reading::

    Time,12-23-2020 10:21:51.496,Watts,23.430000,Volts,228.370000,Amps,0.204280,PF,0.502300,Mark,testing

(``power-dev/ptd_client_server/logs_example/*/spl.txt``): the time as
``%m-%d-%Y %H:%M:%S.%f`` with milliseconds, then name,value pairs; ``Mark`` is the label of
the ``Go`` command that started the measurement (power-dev: ``<session>_ranging`` /
``<session>_testing``). The full PTDaemon log (its ``-l`` file, ``ptd_logs.txt``) holds
other lines too; only lines starting with ``Time,`` are samples, as MLPerf's checker reads
them. A ``Time,`` line that does not parse is an error naming the file and line.

Clocks: PTDaemon writes the director's local time; ``timezone_s`` is that clock's offset in
seconds *west* of UTC (power-dev's ``server.json`` ``timezone``, Python's ``time.timezone``):
UTC = logged time + ``timezone_s``. MLPerf's submission checker takes 0 (both logs in UTC).
LoadGen's ``power_begin`` / ``power_end`` use the same format, in UTC
(``loadgen/utils.cc``, ``DateTimeStringForPower``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.errors import DataError

#: The time format of spl.txt and of LoadGen's power_begin / power_end.
TIME_FORMAT = "%m-%d-%Y %H:%M:%S.%f"
#: The name of each value field, in the order PTDaemon writes them.
FIELDS = ("Watts", "Volts", "Amps", "PF")


def parse_time(text: str, timezone_s: float = 0.0) -> float:
    """UNIX seconds of a PTDaemon / LoadGen time string (``12-23-2020 10:21:51.496``)
    logged ``timezone_s`` seconds west of UTC; ValueError when it does not parse."""
    stamp = datetime.strptime(text.strip(), TIME_FORMAT).replace(tzinfo=timezone.utc)
    return stamp.timestamp() + timezone_s


def format_time(unix_s: float, timezone_s: float = 0.0) -> str:
    """The PTDaemon / LoadGen spelling of UNIX time ``unix_s`` (milliseconds, truncated)."""
    stamp = datetime.fromtimestamp(unix_s - timezone_s, tz=timezone.utc)
    return stamp.strftime("%m-%d-%Y %H:%M:%S.") + f"{stamp.microsecond // 1000:03d}"


def sample_line(unix_s: float, watts: float, volts: float, amps: float, pf: float,
                mark: str, timezone_s: float = 0.0) -> str:
    """One spl.txt line (no line end), as PTDaemon writes it (six decimals)."""
    return (f"Time,{format_time(unix_s, timezone_s)},Watts,{watts:.6f},Volts,{volts:.6f},"
            f"Amps,{amps:.6f},PF,{pf:.6f},Mark,{mark}")


def parse_line(line: str, where: str, timezone_s: float = 0.0
               ) -> tuple[float, tuple[float, float, float, float], str] | None:
    """``(unix_s, (watts, volts, amps, pf), mark)`` of a sample line; None for a line that
    is not a sample (no ``Time,`` prefix); :class:`DataError` naming ``where`` otherwise."""
    text = line.rstrip("\r\n")
    if not text.startswith("Time,"):
        return None
    parts = text.split(",")
    if len(parts) < 12 or [parts[i] for i in (2, 4, 6, 8, 10)] != [*FIELDS, "Mark"]:
        raise DataError(f"{where}: expected Time,<t>,Watts,<W>,Volts,<V>,Amps,<A>,PF,<pf>,"
                        f"Mark,<label>, got {text[:120]!r}")
    try:
        t = parse_time(parts[1], timezone_s)
    except ValueError:
        raise DataError(f"{where}: time {parts[1]!r} is not MM-DD-YYYY HH:MM:SS.mmm") from None
    try:
        values = tuple(float(parts[i]) for i in (3, 5, 7, 9))
    except ValueError:
        raise DataError(f"{where}: not a number in {text[:120]!r}") from None
    if not all(np.isfinite(values)):  # PTDaemon logs nan on a bad reading
        raise DataError(f"{where}: non-finite reading in {text[:120]!r}")
    if values[0] <= 0:  # MLPerf's checker does not count such samples either
        raise DataError(f"{where}: power sample of {values[0]:g} W; a sample must be > 0 W (an "
                        f"analyzer fault, ranging or wiring error), in {text[:120]!r}")
    if values[1] < 0 or values[2] < 0 or abs(values[3]) > 1:  # RMS volts, amps; |PF| <= 1
        raise DataError(f"{where}: volts {values[1]:g} and amps {values[2]:g} must be >= 0 and "
                        f"the power factor {values[3]:g} within -1..1, in {text[:120]!r}")
    return t, values, ",".join(parts[11:])  # type: ignore[return-value]


#: Longest line accepted in a PTDaemon log, and from PTDaemon itself (bytes).
MAX_LINE_BYTES = 65536


@dataclass
class SplTrace:
    """Samples read so far: UNIX times (s), the four values and the mark of each."""

    t: list[float] = field(default_factory=list)
    watts: list[float] = field(default_factory=list)
    volts: list[float] = field(default_factory=list)
    amps: list[float] = field(default_factory=list)
    pf: list[float] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)

    def select(self, mark: str | None) -> SplTrace:
        """The samples of one mark (all of them for None)."""
        if mark is None:
            return self
        keep = [i for i, m in enumerate(self.marks) if m == mark]
        return SplTrace(*([getattr(self, k)[i] for i in keep]
                          for k in ("t", "watts", "volts", "amps", "pf", "marks")))


class SplTail:
    """Reads an spl.txt (or the whole PTDaemon log) incrementally: each :meth:`poll` parses
    the complete lines appended since the last one, so a run in progress can be followed
    (a half-written last line waits for its end). A file that shrinks is an error."""

    def __init__(self, path: str | Path, timezone_s: float = 0.0, *, from_end: bool = False
                 ) -> None:
        self.path = Path(path)
        self.timezone_s = timezone_s
        self.trace = SplTrace()
        self._offset = self.path.stat().st_size if from_end and self.path.is_file() else 0
        self._partial = b""
        self._lineno = 0 if not from_end else -1  # unknown line numbers after a skip
        self._last: dict[str, float] = {}  # the last time of each mark
        self.lines: list[str] = []  # every line read (samples and messages), for ptd_logs.txt

    def poll(self) -> SplTrace:
        """Parse what was appended; returns the trace so far."""
        if not self.path.is_file():
            raise DataError(f"PTDaemon log not found: {self.path}")
        size = self.path.stat().st_size
        if size < self._offset:
            raise DataError(f"{self.path}: the file shrank from {self._offset} to {size} bytes "
                            "while it was read (overwritten by another PTDaemon run?)")
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            data = handle.read(size - self._offset)
        self._offset += len(data)
        chunks = (self._partial + data).split(b"\n")
        self._partial = chunks.pop()
        if len(self._partial) > MAX_LINE_BYTES:
            chunks.append(self._partial)  # reported below with its line number
        for raw in chunks:
            if self._lineno >= 0:
                self._lineno += 1
            if len(raw) > MAX_LINE_BYTES:
                where = f"{self.path}:{self._lineno}" if self._lineno >= 0 else f"{self.path}"
                raise DataError(f"{where}: a line of more than {MAX_LINE_BYTES} bytes; PTDaemon "
                                "writes lines of about 100 (not a PTDaemon log?)")
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            self.lines.append(line)
            where = f"{self.path}:{self._lineno}" if self._lineno >= 0 else f"{self.path}"
            parsed = parse_line(line, where, self.timezone_s)
            if parsed is None:
                continue
            t, (w, v, a, pf), mark = parsed
            tr = self.trace
            if t < self._last.get(mark, -np.inf):  # a clock step between sessions is allowed
                raise DataError(f"{where}: time goes backwards ({line[5:28]!r} after an "
                                f"earlier sample of mark {mark!r})")
            self._last[mark] = t
            tr.t.append(t)
            tr.watts.append(w)
            tr.volts.append(v)
            tr.amps.append(a)
            tr.pf.append(pf)
            tr.marks.append(mark)
        return self.trace


def read_spl(path: str | Path, mark: str | None = None, timezone_s: float = 0.0) -> SplTrace:
    """Every sample of a finished spl.txt (of ``mark`` only, when given)."""
    return SplTail(path, timezone_s).poll().select(mark)


def window_watts(trace: SplTrace, power_begin: str, power_end: str,
                 client_timezone_s: float = 0.0) -> tuple[list[float], float]:
    """(Watts samples strictly between LoadGen's ``power_begin`` and ``power_end``, samples
    of 0 W or less skipped; the window's length in s) as MLPerf's checkers take them.

    ``power_begin`` / ``power_end`` were logged ``client_timezone_s`` seconds west of UTC
    (0 for LoadGen versions that log UTC; the SUT's ``client.json`` ``timezone`` for older
    ones); ``trace`` holds UNIX times read with the analyzer's own ``timezone_s``. The length
    is a datetime difference (exact to the microsecond), not one of two UNIX floats. No
    sample in the window raises :class:`DataError` (the checker marks the result invalid)."""
    begin, end = parse_time(power_begin, client_timezone_s), parse_time(power_end, client_timezone_s)
    watts = [w for t, w in zip(trace.t, trace.watts) if begin < t < end and w > 0]
    if not watts:
        zone = "UTC" if not client_timezone_s else f"{client_timezone_s:g} s west of UTC"
        raise DataError(f"no power samples between power_begin {power_begin} and power_end "
                        f"{power_end} ({zone}); check the analyzer's timezone_s and clock sync")
    duration = (datetime.strptime(power_end, TIME_FORMAT)
                - datetime.strptime(power_begin, TIME_FORMAT)).total_seconds()
    return watts, duration


def mlperf_power_metric(trace: SplTrace, power_begin: str, power_end: str, scenario: str,
                        query_count: int, client_timezone_s: float = 0.0) -> dict[str, Any]:
    """MLPerf's power figure of a run, computed as its current submission checker computes
    it (``mlcommons/inference``, ``tools/submission/submission_checker.py``,
    ``get_power_metric``): the mean of the Watts samples of :func:`window_watts`, then W for
    Offline and Server, and for SingleStream and MultiStream the energy per query in
    mJ = mean W × (power_end − power_begin) s × 1000 / ``result_query_count``. (LoadGen
    versions of MLPerf v1.0 and older: :mod:`neuromark.system.power.mlperf_results`.)"""
    watts, duration = window_watts(trace, power_begin, power_end, client_timezone_s)
    avg = sum(watts) / len(watts)
    out: dict[str, Any] = {"scenario": scenario, "avg_power_w": avg, "duration_s": duration,
                           "samples": len(watts), "query_count": query_count,
                           "power_begin": power_begin, "power_end": power_end}
    if scenario in ("Offline", "Server"):
        out.update(metric=avg, unit="W")
    elif scenario in ("SingleStream", "MultiStream"):
        if query_count < 1:
            raise DataError(f"{scenario}: result_query_count must be >= 1, got {query_count}")
        out.update(metric=avg * duration * 1000.0 / query_count, unit="mJ/query")
    else:
        raise DataError(f"unknown LoadGen scenario {scenario!r}")
    return out
