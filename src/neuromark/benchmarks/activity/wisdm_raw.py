"""WISDM raw files (UCI 507, Weiss et al. 2019): parse, check, resample, join, window.

Layout: ``<root>/wisdm-dataset/raw/{phone,watch}/{accel,gyro}/data_<subject>_<sensor>_<device>.txt``
(NeuroBench's recursive unzip gives ``wisdm-dataset/wisdm-dataset/raw``; both are found).
Each line is ``subject,activity,timestamp,x,y,z;`` (trailing ``;``), UTF-8/ASCII.

NeuroBench's procedure (``research/wave4-tasks.md`` §B; generator of neurobench
``e540cc4:neurobench/datasets/WISDM.py``), re-implemented in numpy:

1. per sensor and (subject, activity), the timestamps (read as nanoseconds, pandas'
   reading of an integer; the README says "Unix time", the unit is UNVERIFIED, hence the
   ``timestamp_unit`` option) are binned into 50-ms bins (``resample('50ms').first()``):
   the earliest row of a bin is kept, empty bins vanish; **dropped rule** ``same_50ms_bin``;
2. per (subject, activity), each accelerometer row takes the gyroscope row of the latest
   bin at or before its own (``merge_asof`` backward, no tolerance); accelerometer rows
   with no earlier gyroscope row are dropped (``dropna``): rule ``no_gyro_at_or_before``;
   gyroscope rows that no accelerometer row took are counted as ``gyro_unused``;
3. windows of ``window`` consecutive joined rows (stride ``window``) per subject, in
   class order; the partial tail is dropped: rule ``partial_window_tail``.

Bad lines (wrong field count, non-numbers, NaN/inf, a value beyond float32's range (the
windows are float32: it would become infinity), an unknown activity code, another subject
than the file name's, a negative timestamp, a timestamp that overflows int64 nanoseconds in
the declared unit, bytes that are not UTF-8) are a :class:`DataError` naming file, line and
rule, or with ``on_invalid="drop"`` dropped and counted per file and rule.

Whole-file checks, always errors: a file with no valid row (the subject would silently
vanish from the split), and the timestamp unit checked against the data: WISDM samples at
20 Hz, so the median step between a file's distinct timestamps, in the declared unit, must
lie within :data:`PLAUSIBLE_STEP_NS` (1 ms .. 10 s); all rows at one timestamp, or
timestamps in milliseconds read as nanoseconds, are named with the unit that would fit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from neuromark.errors import DataError

#: Activity codes of the README (there is no N).
ACTIVITIES = {"A": "walking", "B": "jogging", "C": "stairs", "D": "sitting", "E": "standing",
              "F": "typing", "G": "brushing teeth", "H": "eating soup", "I": "eating chips",
              "J": "eating pasta", "K": "drinking", "L": "eating sandwich", "M": "kicking (soccer)",
              "O": "playing catch (tennis)", "P": "dribbling (basketball)", "Q": "writing",
              "R": "clapping", "S": "folding clothes"}
#: NeuroBench's 7 "general hand-oriented" classes, in its index order.
NEUROBENCH_CLASSES = ("P", "O", "F", "Q", "R", "G", "S")
SUBJECTS = tuple(range(1600, 1651))
DEVICES = ("phone", "watch")
SENSORS = ("accel", "gyro")
_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000}
#: The median step between a file's distinct timestamps (ns) a 20-Hz recording can have.
PLAUSIBLE_STEP_NS = (1_000_000, 10_000_000_000)
_NOMINAL_STEP_NS = 50_000_000  # 20 Hz
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_FILE = re.compile(r"data_(\d+)_(accel|gyro)_(phone|watch)\.txt")


def raw_folder(root: Path) -> Path:
    """The ``raw`` folder below ``root`` (``wisdm-dataset/raw``, NeuroBench's
    ``wisdm-dataset/wisdm-dataset/raw``, or ``root`` itself when it is ``raw``)."""
    for candidate in (root / "wisdm-dataset" / "raw", root / "wisdm-dataset" / "wisdm-dataset" / "raw",
                      root / "raw", root):
        if (candidate / "watch").is_dir() or (candidate / "phone").is_dir():
            return candidate
    return root / "wisdm-dataset" / "raw"


def raw_file(raw: Path, subject: int, sensor: str, device: str) -> Path:
    return raw / device / sensor / f"data_{subject}_{sensor}_{device}.txt"


def subjects_present(raw: Path, device: str) -> list[int]:
    """Subjects with any file of ``device`` (either sensor)."""
    found = set()
    for sensor in SENSORS:
        for path in (raw / device / sensor).glob("data_*.txt"):
            match = _FILE.fullmatch(path.name)
            if match and match.group(3) == device:
                found.add(int(match.group(1)))
    return sorted(found)


@dataclass
class SensorRows:
    """One file's valid rows: activity code (N,) '<U1', timestamp (N,) int64 ns, xyz (N, 3)."""

    activity: np.ndarray
    time_ns: np.ndarray
    xyz: np.ndarray
    dropped: dict[str, int] = field(default_factory=dict)  # invalid lines per rule


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: byte {exc.start} ({data[exc.start:exc.start + 1]!r}) is "
                        "not UTF-8; WISDM lines are ASCII 'subject,activity,timestamp,x,y,z;'") from None


def read_sensor_file(path: Path, subject: int, *, on_invalid: str = "error",
                     timestamp_unit: str = "ns") -> SensorRows:
    """Parse and check one raw file (see the module docstring for the rules)."""
    if not path.is_file():
        raise DataError(f"{path}: missing (each subject needs both the accel and the gyro file)")
    lines = _decode(path).splitlines()
    rows: list[list[str]] = []
    numbers: list[int] = []
    bad: list[tuple[int, str, str]] = []  # (line, rule, text)
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        parts = text.rstrip(";").split(",")
        if len(parts) != 6:
            bad.append((number, "fields", text))
            continue
        rows.append(parts)
        numbers.append(number)
    cols = list(zip(*rows)) if rows else [()] * 6
    keep = np.ones(len(rows), bool)
    subj = _numbers(cols[0], np.int64, keep, bad, numbers, "subject_not_integer")
    time = _numbers(cols[2], np.int64, keep, bad, numbers, "timestamp_not_integer")
    xyz = np.stack([_numbers(c, np.float64, keep, bad, numbers, "value_not_number") for c in cols[3:]], 1) \
        if rows else np.zeros((0, 3))
    activity = np.array(cols[1], dtype="<U8") if rows else np.zeros(0, "<U1")
    scale = _UNIT_NS[timestamp_unit]
    finite = np.isfinite(xyz).all(1)
    for mask, rule in ((keep & (subj != subject), f"subject_not_{subject}"),
                       (keep & ~np.isin(activity, list(ACTIVITIES)), "unknown_activity"),
                       (keep & (time < 0), "negative_timestamp"),
                       (keep & (time > np.iinfo(np.int64).max // scale),
                        f"timestamp_overflows_int64_at_unit_{timestamp_unit}"),
                       (keep & ~finite, "non_finite_value"),
                       (keep & finite & (np.abs(np.where(finite[:, None], xyz, 0)) > _FLOAT32_MAX).any(1),
                        "value_overflows_float32")):
        for i in np.flatnonzero(mask):
            bad.append((numbers[i], rule, ",".join(rows[i])))
        keep &= ~mask
    dropped: dict[str, int] = {}
    if bad:
        first = min(bad)
        if on_invalid != "drop":
            raise DataError(f"{path}:{first[0]}: {first[1]}: {first[2][:80]!r} (expected "
                            f"'{subject},<activity code>,<timestamp>,x,y,z;'; {len(bad)} bad line(s); "
                            "dataset option on_invalid: drop drops and counts them)")
        for _, rule, _ in bad:
            dropped[rule] = dropped.get(rule, 0) + 1
    if not keep.any():
        raise DataError(f"{path}: no valid row ({len(lines)} line(s), {len(bad)} invalid); a "
                        f"subject's file must hold its recording, or the subject silently "
                        "vanishes from the split")
    time_ns = time[keep] * scale
    check_time_unit(path, time_ns, timestamp_unit)
    return SensorRows(activity[keep].astype("<U1"), time_ns, xyz[keep], dropped)


def check_time_unit(path: Path, time_ns: np.ndarray, unit: str) -> None:
    """:class:`DataError` when the median step between the distinct timestamps of a file
    (ns, read in ``unit``) is outside :data:`PLAUSIBLE_STEP_NS`, or when every row has one
    timestamp; the message names the unit that would give WISDM's 50 ms."""
    distinct = np.unique(time_ns)
    if len(time_ns) > 1 and len(distinct) == 1:
        raise DataError(f"{path}: all {len(time_ns)} rows have the timestamp {int(distinct[0])}; "
                        "a 20-Hz recording needs increasing timestamps")
    if len(distinct) < 2:
        return
    step = float(np.median(np.diff(distinct)))
    low, high = PLAUSIBLE_STEP_NS
    if low <= step <= high:
        return
    raw_step = step / _UNIT_NS[unit]
    fits = [u for u, f in _UNIT_NS.items() if low <= raw_step * f <= high]
    best = min(fits, key=lambda u: abs(np.log(raw_step * _UNIT_NS[u] / _NOMINAL_STEP_NS))) if fits else None
    hint = f"; timestamp_unit: {best} would fit" if best else ""
    raise DataError(f"{path}: the median step between timestamps is {raw_step:g} {unit} = "
                    f"{step / 1e6:g} ms at timestamp_unit {unit!r}; WISDM samples at 20 Hz (50 ms), so "
                    f"a step outside {low / 1e6:g} ms .. {high / 1e9:g} s means a wrong unit{hint}")


def _numbers(values: Sequence[str], dtype: type, keep: np.ndarray, bad: list[tuple[int, str, str]],
             numbers: list[int], rule: str) -> np.ndarray:
    """``values`` as ``dtype``; unparsable entries are 0, marked in ``keep`` and ``bad``."""
    try:
        return np.array(values, dtype=dtype)
    except (ValueError, OverflowError):
        out = np.zeros(len(values), dtype)
        for i, v in enumerate(values):
            try:
                out[i] = np.array(v, dtype=dtype)
            except (ValueError, OverflowError):
                if keep[i]:
                    bad.append((numbers[i], rule, v))
                keep[i] = False
        return out


def first_per_bin(time_ns: np.ndarray, period_ns: int) -> tuple[np.ndarray, np.ndarray]:
    """(kept row indices, bin start times): the earliest row of each occupied ``period_ns``
    bin (ties: file order), bins in time order: pandas' ``resample(period).first()``, which
    first sorts the rows by time with a stable sort."""
    bins = time_ns // period_ns
    order = np.argsort(time_ns, kind="stable")
    first = np.ones(len(order), bool)
    first[1:] = bins[order][1:] != bins[order][:-1]
    kept = order[first]
    return kept, bins[kept] * period_ns


@dataclass
class JoinCounts:
    """Rows dropped by the procedure, per rule (the module docstring)."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, rule: str, n: int) -> None:
        if n:
            self.counts[rule] = self.counts.get(rule, 0) + int(n)


def join_activity(accel: SensorRows, gyro: SensorRows, code: str, period_ns: int,
                  counts: JoinCounts) -> np.ndarray:
    """(rows, 6) accel xyz + gyro xyz of one (subject, activity), joined as documented."""
    parts = []
    for rows in (accel, gyro):
        mask = rows.activity == code
        kept, start = first_per_bin(rows.time_ns[mask], period_ns)
        counts.add("same_50ms_bin", int(mask.sum()) - len(kept))
        parts.append((start, rows.xyz[mask][kept]))
    (ta, xa), (tg, xg) = parts
    match = np.searchsorted(tg, ta, side="right") - 1
    ok = match >= 0
    counts.add("no_gyro_at_or_before", int((~ok).sum()))
    counts.add("gyro_unused", len(tg) - len(np.unique(match[ok])))
    return np.concatenate([xa[ok], xg[match[ok]]], axis=1)


def windows_of(joined: np.ndarray, window: int, counts: JoinCounts) -> np.ndarray:
    """(n, window, 6) non-overlapping windows; the partial tail is counted and dropped."""
    n = len(joined) // window
    counts.add("partial_window_tail", len(joined) - n * window)
    return joined[:n * window].reshape(n, window, joined.shape[1])
