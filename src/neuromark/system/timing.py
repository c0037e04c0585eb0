"""NeuroBench system-track timing: per-sample stage timers and latency statistics.

Rules (NeuroBench system track, ASC task): one inference is one sample at batch size 1;
time starts when the sample is in memory and ends when its last timestep is processed.
Pre-processing and inference are timed separately on one monotonic clock
(:func:`time.perf_counter_ns`, CLOCK_MONOTONIC on Linux), and reported as mean ± standard
error, median, p90, p99, min and max. Raw per-sample timings are kept (compressed when
large, see :func:`encode_ns`).
"""

from __future__ import annotations

import base64
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neuromark.errors import DataError
from neuromark.metrics.functional.stats import standard_error

#: Raw timing arrays longer than this are stored zlib-compressed + base64 in results.
RAW_INLINE_LIMIT = 1000


def now_s() -> float:
    """The shared monotonic clock in seconds (the same clock the power meters use)."""
    return time.perf_counter_ns() * 1e-9


def timer_resolution_ns(repeats: int = 2000) -> dict[str, float]:
    """Measured resolution of ``perf_counter_ns``: the smallest non-zero step between two
    consecutive reads, their median, and the clock's declared resolution (ns)."""
    clock = time.perf_counter_ns
    deltas = []
    for _ in range(repeats):
        a = clock()
        b = clock()
        while b == a:
            b = clock()
        deltas.append(b - a)
    arr = np.asarray(deltas, dtype=np.int64)
    return {"min_step_ns": float(arr.min()), "median_step_ns": float(np.median(arr)),
            "declared_ns": time.get_clock_info("perf_counter").resolution * 1e9}


def latency_stats(samples_ns: np.ndarray | list[int], *, name: str = "latency"
                  ) -> dict[str, float | None]:
    """Summary of per-sample durations (ns in, seconds out).

    Returns ``n``, ``mean_s``, ``stderr_s`` (sample std / sqrt(n), ddof=1, by
    :func:`~neuromark.metrics.functional.stats.standard_error`: None for n=1, "no error"),
    ``median_s``, ``p90_s``, ``p99_s`` (linear interpolation, numpy's default), ``min_s``,
    ``max_s``. Empty input raises :class:`DataError` naming ``name``.
    """
    arr = np.asarray(samples_ns, dtype=np.float64)
    if arr.size == 0:
        raise DataError(f"{name}: no timed samples (did every sample fall in the warm-up?)")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise DataError(f"{name}: timings must be finite and non-negative")

    sec = arr * 1e-9
    return {
        "n": int(sec.size),
        "mean_s": float(sec.mean()),
        "stderr_s": standard_error(sec.tolist()),
        "median_s": float(np.percentile(sec, 50)),
        "p90_s": float(np.percentile(sec, 90)),
        "p99_s": float(np.percentile(sec, 99)),
        "min_s": float(sec.min()),
        "max_s": float(sec.max()),
    }


def encode_ns(samples_ns: np.ndarray | list[int]) -> dict[str, Any] | list[int]:
    """Raw timings for a results file: a plain list up to :data:`RAW_INLINE_LIMIT`
    values, else ``{"encoding": "zlib+base64", "dtype": "<i8", "n": N, "data": "..."}``."""
    arr = np.asarray(samples_ns, dtype="<i8")
    if arr.size <= RAW_INLINE_LIMIT:
        return [int(v) for v in arr]
    data = base64.b64encode(zlib.compress(arr.tobytes(), 6)).decode("ascii")
    return {"encoding": "zlib+base64", "dtype": "<i8", "n": int(arr.size), "data": data}


def decode_ns(raw: dict[str, Any] | list[int]) -> np.ndarray:
    """Inverse of :func:`encode_ns`: an int64 array of nanoseconds."""
    if isinstance(raw, list):
        return np.asarray(raw, dtype=np.int64)
    if raw.get("encoding") != "zlib+base64":
        raise DataError(f"raw timings: unknown encoding {raw.get('encoding')!r}")
    arr = np.frombuffer(zlib.decompress(base64.b64decode(raw["data"])), dtype=raw["dtype"])
    if arr.size != raw["n"]:
        raise DataError(f"raw timings: expected {raw['n']} values, decoded {arr.size}")
    return arr.astype(np.int64)


@dataclass
class StageTimer:
    """Per-sample durations of named stages (e.g. ``preprocess``, ``inference``).

    The first ``warmup`` records of each stage are discarded (kept apart in ``warm``).

    Example:
        >>> timer = StageTimer(("preprocess", "inference"), warmup=1)
        >>> timer.add("preprocess", 1500)
    """

    stages: tuple[str, ...]
    warmup: int = 0
    samples: dict[str, list[int]] = field(default_factory=dict)
    warm: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.warmup < 0:
            raise DataError(f"warm-up count must be >= 0, got {self.warmup}")
        for stage in self.stages:
            self.samples.setdefault(stage, [])
            self.warm.setdefault(stage, [])

    def add(self, stage: str, duration_ns: int) -> None:
        """Record one sample's duration of ``stage`` (ns)."""
        if len(self.warm[stage]) < self.warmup:
            self.warm[stage].append(duration_ns)
        else:
            self.samples[stage].append(duration_ns)

    def reset(self) -> None:
        for stage in self.stages:
            self.samples[stage] = []
            self.warm[stage] = []

    def stats(self) -> dict[str, dict[str, float | None]]:
        """:func:`latency_stats` of every stage, plus ``total`` when all stages have the
        same number of samples (their per-sample sum)."""
        out = {s: latency_stats(self.samples[s], name=s) for s in self.stages}
        counts = {len(self.samples[s]) for s in self.stages}
        if len(self.stages) > 1 and len(counts) == 1:
            total = np.sum([np.asarray(self.samples[s], dtype=np.int64) for s in self.stages], axis=0)
            out["total"] = latency_stats(total, name="total")
        return out

    def raw(self) -> dict[str, Any]:
        """Raw per-sample ns of every stage (see :func:`encode_ns`)."""
        return {s: encode_ns(self.samples[s]) for s in self.stages}
