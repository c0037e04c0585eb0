"""Calibration: a short untimed run measures the SUT, then LoadGen's settings are chosen.

LoadGen pre-generates its queries before a test from the settings (``GenerateQueries``):
``2 * min_duration / expected_latency`` queries for SingleStream and MultiStream,
``min_duration * target_qps`` for Server, one query of ``~1.1 * min_duration *
target_qps`` samples for Offline, and at least ``min_query_count``. When the SUT is faster
than the settings say, LoadGen runs out of queries before ``min_duration`` and the run is
INVALID ("min duration not met"). :func:`measure` issues a few queries through the same
SUT (after its warm-up; LoadGen is not involved, nothing is scored) and :func:`choose`
resolves every ``"auto"`` setting from what it measured:

- SingleStream / MultiStream: ``expected_latency_s = p10 of the query latency / MARGIN``,
  so LoadGen has ``2 * MARGIN`` times the queries ``min_duration`` needs at the
  calibrated p10 (the extra ones are never issued: LoadGen stops once ``min_duration``
  and ``min_query_count`` are met);
- Server: ``target_qps = UTILISATION / mean sample latency`` (a queue half busy);
- Offline: ``target_qps = MARGIN / mean sample latency`` (the coalesced query lasts at
  least ``min_duration`` unless the SUT runs MARGIN times faster than calibrated);
- every scenario with a latency percentile: ``min_query_count``, when the config does not
  set it, is raised (never above ``max_query_count``) to what LoadGen's early stopping needs at
  that percentile (:func:`early_stopping_queries`: 64 queries at p90, 662 at p99 for the
  stream scenarios; Server ``SERVER_MARGIN`` times the 459 a p99 run with no query over
  the bound needs), since fewer make the run INVALID whatever the SUT does.

A number in the config is never replaced. The measured figures and the chosen settings
go to ``details.loadgen.calibration``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from neuromark.system.loadgen import AUTO, MAX_QUERIES, LoadGenSettings
from neuromark.system.rules import PERCENTILE

#: Headroom of the pre-generated queries (stream scenarios) and of Offline's expected QPS.
MARGIN = 2.0
#: Server without a search: the share of the calibrated capacity offered as target_qps.
UTILISATION = 0.5
#: Server: queries beyond the early-stopping minimum with no query over the bound.
SERVER_MARGIN = 1.5
#: Calibration length: at most QUERIES queries; stop after BUDGET_S once MIN_QUERIES ran.
QUERIES = 200
MIN_QUERIES = 50
BUDGET_S = 2.0
#: LoadGen's early-stopping confidence (results.cc).
CONFIDENCE = 0.99


def early_stopping_queries(percentile: float, overlatency: int) -> int:
    """LoadGen's ``MinPassingQueriesFinder``: the fewest queries ``h`` under the bound such
    that, with ``overlatency`` queries over it, ``P(Binomial(h + t, 1 - p) <= t) < 1 -
    confidence``. E.g. 44 (p90, t=0), 63 (p90, t=1), 459 (p99, t=0), 661 (p99, t=1)."""
    q = 1.0 - percentile
    h = max(1, math.floor(math.log(1 - CONFIDENCE) / math.log(percentile)) - 1)
    while True:
        n = h + overlatency
        cdf = sum(math.comb(n, x) * q ** x * percentile ** (n - x) for x in range(overlatency + 1))
        if cdf < 1 - CONFIDENCE:
            return h
        h += 1


def min_queries(scenario: str, percentile: float) -> int:
    """Queries a run needs for LoadGen's early stopping: ``h(t=1) + 1`` for the stream
    scenarios (64 at p90, 662 at p99), ``SERVER_MARGIN * h(t=0)`` for Server (689 at p99),
    1 for Offline (no early stopping)."""
    if scenario in ("SingleStream", "MultiStream"):
        return early_stopping_queries(percentile, 1) + 1
    if scenario == "Server":
        return math.ceil(SERVER_MARGIN * early_stopping_queries(percentile, 0))
    return 1


@dataclass
class Calibration:
    """Latencies (s) of the calibration queries, each of ``samples_per_query`` samples."""

    latencies_s: np.ndarray
    samples_per_query: int
    duration_s: float

    def figures(self) -> dict[str, Any]:
        lat = self.latencies_s
        q10, q50, q90, q99 = np.percentile(lat, [10, 50, 90, 99])
        return {"queries": int(lat.size), "samples_per_query": self.samples_per_query,
                "duration_s": self.duration_s, "mean_s": float(lat.mean()), "p10_s": float(q10),
                "p50_s": float(q50), "p90_s": float(q90), "p99_s": float(q99),
                "min_s": float(lat.min()), "max_s": float(lat.max()),
                "sample_mean_s": float(lat.mean()) / self.samples_per_query}


def measure(sut: Any, library: Any, *, samples_per_query: int = 1, queries: int = QUERIES,
            min_queries: int = MIN_QUERIES, budget_s: float = BUDGET_S,
            clock: Callable[[], int] = time.perf_counter_ns) -> Calibration:
    """Issue up to ``queries`` queries of ``samples_per_query`` samples through ``sut``
    (one after the other, as SingleStream does; stopping after ``budget_s`` once
    ``min_queries`` ran), timing each ``issue`` call with ``clock`` (ns). The samples are
    loaded before and unloaded after (untimed); the SUT's stage timer is reset after, so
    the test starts empty."""
    count = min(library.performance_count, max(1, queries * samples_per_query))
    indices = list(range(count))
    library.load(indices)
    latencies: list[int] = []
    start = clock()
    try:
        position = 0
        while len(latencies) < queries:
            batch = [indices[(position + i) % count] for i in range(samples_per_query)]
            position += samples_per_query
            t0 = clock()
            sut.issue(batch)
            t1 = clock()
            latencies.append(t1 - t0)
            if len(latencies) >= min_queries and (t1 - start) * 1e-9 >= budget_s:
                break
    finally:
        library.unload(indices)
        if getattr(sut, "timer", None) is not None:
            sut.timer.reset()
    return Calibration(np.asarray(latencies, dtype=np.float64) * 1e-9, samples_per_query,
                       (clock() - start) * 1e-9)


def _round(value: float, digits: int = 4) -> float:
    """``value`` to ``digits`` significant digits (settings a person reads)."""
    return float(f"{value:.{digits}g}")


def choose(settings: LoadGenSettings, calibration: Calibration | None
           ) -> tuple[LoadGenSettings, dict[str, Any]]:
    """The effective settings (every ``"auto"`` of the scenario resolved from
    ``calibration``, ``min_query_count`` raised to the early-stopping minimum) and the
    record for ``details.loadgen.calibration``: the measured figures, what was chosen and
    why. ``calibration`` may be None when nothing is ``auto``."""
    scenario = settings.scenario
    percentile = settings.target_latency_percentile or PERCENTILE[scenario]
    update: dict[str, Any] = {}
    rules: list[str] = []
    figures = calibration.figures() if calibration is not None else None
    if settings.mode == "PerformanceOnly" and percentile is not None:
        need = min_queries(scenario, percentile)
        if settings.max_query_count:
            need = min(need, settings.max_query_count)
        if settings.min_query_count < need and "min_query_count" in settings.model_fields_set:
            rules.append(f"min_query_count {settings.min_query_count} kept (explicit), below the "
                         f"{need} queries LoadGen's early stopping needs at p{percentile * 100:g} "
                         f"({scenario}): expect INVALID")
        elif settings.min_query_count < need:
            update["min_query_count"] = need
            rules.append(f"min_query_count {settings.min_query_count} -> {need}: LoadGen's early "
                         f"stopping at p{percentile * 100:g} needs {need} queries ({scenario})")
    stream = scenario in ("SingleStream", "MultiStream")
    field = "expected_latency_s" if stream else "target_qps"
    if getattr(settings, field) == AUTO:
        if figures is None:
            raise ValueError(f"loadgen.{field}: auto needs a calibration run")
        if stream:
            floor = 2 * settings.min_duration_s * MARGIN / MAX_QUERIES
            value = max(_round(figures["p10_s"] / MARGIN), floor)
            rules.append(f"expected_latency_s = calibrated p10 query latency {figures['p10_s']:.4g} s "
                         f"/ {MARGIN:g} = {value:.4g} s: LoadGen pre-generates "
                         f"{2 * settings.min_duration_s / value:.0f} queries for min_duration_s "
                         f"{settings.min_duration_s:g}")
        elif scenario == "Server":
            value = _round(UTILISATION / figures["sample_mean_s"])
            rules.append(f"target_qps = {UTILISATION:g} / calibrated mean sample latency "
                         f"{figures['sample_mean_s']:.4g} s = {value:.4g}")
        else:
            value = _round(MARGIN / figures["sample_mean_s"])
            rules.append(f"target_qps = {MARGIN:g} / calibrated mean sample latency "
                         f"{figures['sample_mean_s']:.4g} s = {value:.4g} (Offline expected QPS)")
        update[field] = value
    effective = LoadGenSettings.model_validate({**settings.model_dump(), **update})
    record = {"measured": figures is not None, "figures": figures,
              "chosen": {k: v for k, v in update.items()}, "rules": rules,
              "explicit": [k for k in ("expected_latency_s", "target_qps", "min_query_count")
                           if k in settings.model_fields_set and k not in update]}
    return effective, record
