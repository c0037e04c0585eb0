"""The performance runs of the ``system`` task: calibration, the scenario's search, the
final run(s), and the figure the scenario is judged on.

:func:`prepare` runs before the power meter starts: the untimed calibration
(:mod:`neuromark.system.calibration`) and, with ``loadgen.search``, the probes of
:mod:`neuromark.system.search` (each a LoadGen run under ``<out>/loadgen/search/``).
:func:`final_runs` then runs the test itself: one run into ``loadgen/performanceonly``,
or, after a Server search, ``final_runs`` (five) runs at the found rate into
``loadgen/final_<i>``, reporting the minimum (the paper's rule); when a run of the five is
INVALID the rate is lowered by the search tolerance and the five are run again (at most
``BACKOFFS`` times). :func:`scenario_metric` says which figure the scenario is judged on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuromark.system.calibration import MARGIN, choose, measure
from neuromark.system.loadgen import AUTO, LoadGenRun, LoadGenSettings, run_test
from neuromark.system.rules import PERCENTILE
from neuromark.system.search import Probe, SearchResult, SearchSettings, search_rate, search_streams

#: Times the five final runs are repeated at a lower rate when one of them is INVALID.
BACKOFFS = 3
#: Default probe length (s) per submission profile (never above the config's min_duration_s).
PROBE_DURATION_S = {"test": 1.0, "submission": 10.0}
#: A failed Server probe whose load (rate x mean latency: the mean number of queries in the
#: SUT, Little's law) is below this had almost no queueing: a lower rate cannot pass.
IDLE_LOAD = 0.05


@dataclass
class PerfPlan:
    """What the final runs use: effective settings, how many runs, the records so far."""

    settings: LoadGenSettings
    final_runs: int = 1
    calibration: dict[str, Any] = field(default_factory=dict)
    search: dict[str, Any] | None = None
    tolerance: float = 0.05


@dataclass
class FinalRuns:
    """The reported run (its figure is the one judged), the last run (the one inside the
    LoadGen power window, ``window``) and every final run's record."""

    reported: LoadGenRun
    last: LoadGenRun
    window: tuple[float, float] | None
    runs: list[dict[str, Any]]
    settings: LoadGenSettings


def _stream_count(settings: LoadGenSettings) -> int:
    return (settings.samples_per_query or 8) if settings.scenario == "MultiStream" else 1


def prepare(sut: Any, library: Any, settings: LoadGenSettings, out_dir: Path,
            profile: str = "test") -> PerfPlan:
    """Calibrate (when a setting is ``auto`` or a search is asked for) and search; see the
    module docstring. Runs before the power meter starts."""
    if settings.mode != "PerformanceOnly":
        return PerfPlan(settings, calibration={"measured": False, "reason": "AccuracyOnly: "
                                               "every sample once, LoadGen's defaults"})
    calibration = (measure(sut, library, samples_per_query=_stream_count(settings))
                   if settings.needs_calibration() else None)
    effective, record = choose(settings, calibration)
    if not settings.search:
        return PerfPlan(effective, calibration=record)
    options = settings.search if isinstance(settings.search, SearchSettings) else SearchSettings()
    duration = options.probe_duration_s or PROBE_DURATION_S.get(profile, 1.0)
    duration = min(duration, settings.min_duration_s) if settings.min_duration_s else duration
    folder = out_dir / "loadgen" / "search"
    figures = record["figures"]
    if settings.scenario == "Server":
        return _search_server(sut, library, effective, options, duration, folder, record)
    return _search_streams(sut, library, settings, effective, options, duration, folder, record,
                           figures)


def _summary_info(run: LoadGenRun) -> dict[str, Any]:
    summary = run.summary
    lat = summary.get("latency_s", {})
    return {"validity": summary.get("validity"), "invalid_reasons": summary.get("invalid_reasons", []),
            "query_count": summary.get("query_count"), "percentiles_s": lat.get("percentiles_s", {}),
            "early_stopping_latency_s": summary.get("early_stopping_latency_s"),
            "scheduled_samples_per_second": summary.get("scheduled_samples_per_second"),
            "samples_per_second": summary.get("samples_per_second"), "log_dir": str(run.log_dir),
            "mean_latency_s": lat.get("mean_s"),
            "latency_bound_s": (summary.get("effective", {}).get("target_latency_ns") or 0) * 1e-9 or None}


def _percentile_key(percentile: float) -> str:
    return f"{percentile * 100:g}"


def _hopeless_by_calibration(figures: dict[str, Any] | None, bound: float | None,
                             per_query: int) -> str | None:
    """Why no value can pass, seen in the calibration (None: it cannot tell): the median
    latency of one unloaded sample already exceeds the bound (queueing only adds to it)."""
    if not figures or not bound:
        return None
    sample_median = figures["p50_s"] / max(per_query, 1)
    if sample_median > bound:
        return (f"the calibration shows that no value can pass: an unloaded sample takes "
                f"{sample_median * 1e3:.4g} ms (median of {figures['queries']} queries), more "
                f"than the latency bound {bound * 1e3:.4g} ms; nothing was searched")
    return None


class _Budget:
    """The search's estimated LoadGen time: ``affordable(value)`` refuses a probe whose
    estimated length (``length(value)`` s) would take the total beyond ``limit_s``."""

    def __init__(self, limit_s: float, length: Any, what: str) -> None:
        self.limit_s, self.length, self.what, self.spent_s = limit_s, length, what, 0.0

    def __call__(self, value: float) -> str | None:
        need = float(self.length(value))
        if self.spent_s + need > self.limit_s:
            return (f"the probe at {self.what} {value:g} would take about {need:.3g} s (after "
                    f"{self.spent_s:.3g} s of probes), beyond loadgen.search.max_search_s = "
                    f"{self.limit_s:g} s")
        self.spent_s += need
        return None


def _search_server(sut: Any, library: Any, effective: LoadGenSettings, options: SearchSettings,
                   duration: float, folder: Path, record: dict[str, Any]) -> PerfPlan:
    base = effective.model_dump()
    percentile = effective.target_latency_percentile or PERCENTILE["Server"] or 0.99

    def probe(rate: float) -> Probe:
        settings = LoadGenSettings.model_validate({**base, "target_qps": rate, "min_duration_s": duration,
                                                   "max_duration_s": 0.0})
        run = run_test(sut, library, settings, folder / f"probe_{len(probes) + 1:02d}")
        probes.append(rate)
        return Probe(rate, run.summary.get("validity") == "VALID", _summary_info(run))

    def give_up(failed: Probe) -> str | None:
        info = failed.info
        mean, bound = info.get("mean_latency_s"), info.get("latency_bound_s") or effective.latency_bound_s
        tail = info.get("percentiles_s", {}).get(_percentile_key(percentile))
        if mean is None or tail is None or not bound or tail <= bound:
            return None
        load = failed.value * mean
        if load < IDLE_LOAD:
            return (f"the probe at {failed.value:g} samples/s shows that no rate can pass: its "
                    f"p{_percentile_key(percentile)} latency {tail * 1e3:.4g} ms exceeds the bound "
                    f"{bound * 1e3:.4g} ms with the SUT nearly idle (rate x mean latency = "
                    f"{load:.3g} < {IDLE_LOAD}), so a lower rate cannot help")
        return None

    probes: list[float] = []
    budget = _Budget(options.max_search_s, lambda rate: max(duration, effective.min_query_count / rate),
                     "target_qps")
    hopeless = _hopeless_by_calibration(record.get("figures"), effective.latency_bound_s, 1)
    if hopeless:
        result = SearchResult(None, [], hopeless)
    else:
        result = search_rate(probe, float(effective.target_qps), tolerance=options.tolerance,
                             max_probes=options.max_probes, give_up=give_up, affordable=budget)
    rate = result.best if result.best is not None else min(probes, default=float(effective.target_qps))
    search = {"scenario": "Server", "searched": "target_qps", "probe_duration_s": duration,
              "final_runs": options.final_runs, "max_search_s": options.max_search_s,
              "estimated_probe_s": budget.spent_s, **result.record()}
    final = LoadGenSettings.model_validate({**base, "target_qps": rate})
    # nothing passed: one run at that rate gives the logs, without the backed-off batches
    runs = options.final_runs if result.best is not None else 1
    return PerfPlan(final, runs, record, search, options.tolerance)


def _search_streams(sut: Any, library: Any, settings: LoadGenSettings, effective: LoadGenSettings,
                    options: SearchSettings, duration: float, folder: Path, record: dict[str, Any],
                    figures: dict[str, Any] | None) -> PerfPlan:
    base = effective.model_dump()
    bound = float(settings.latency_bound_s or 0.0)

    def settings_for(k: int, min_duration: float) -> LoadGenSettings:
        update: dict[str, Any] = {"samples_per_query": k, "min_duration_s": min_duration}
        if settings.expected_latency_s == AUTO and figures is not None:
            sample_p10 = figures["p10_s"] / figures["samples_per_query"]
            update["expected_latency_s"] = float(f"{sample_p10 * k / MARGIN:.4g}")
        return LoadGenSettings.model_validate({**base, **update})

    def probe(k: float) -> Probe:
        run = run_test(sut, library, settings_for(int(k), duration),
                       folder / f"probe_{len(tried) + 1:02d}_k{int(k)}")
        tried.append(int(k))
        info = _summary_info(run)
        p99 = info["early_stopping_latency_s"] or info["percentiles_s"].get("99")
        info["p99_query_latency_s"] = p99
        valid = run.summary.get("validity") == "VALID"
        return Probe(int(k), valid and p99 is not None and p99 <= bound, info)

    tried: list[int] = []
    per_query = figures["samples_per_query"] if figures else 1
    sample_s = figures["p50_s"] / per_query if figures else 0.0
    budget = _Budget(options.max_search_s,
                     lambda k: max(duration, effective.min_query_count * k * sample_s),
                     "samples_per_query")
    hopeless = _hopeless_by_calibration(figures, bound, per_query)
    if hopeless:
        result = SearchResult(None, [], hopeless)
    else:
        result = search_streams(probe, max_streams=library.performance_count,
                                max_probes=options.max_probes, affordable=budget)
    best = int(result.best) if result.best is not None else 1
    search = {"scenario": "MultiStream", "searched": "samples_per_query", "latency_bound_s": bound,
              "probe_duration_s": duration, "max_search_s": options.max_search_s,
              "estimated_probe_s": budget.spent_s, **result.record()}
    return PerfPlan(settings_for(best, effective.min_duration_s), 1, record, search,
                    options.tolerance)


def final_runs(sut: Any, library: Any, plan: PerfPlan, out_dir: Path, mark: Any = None) -> FinalRuns:
    """Run the test: one run, or after a Server search batches of ``plan.final_runs`` at
    the found rate (lowered when one is INVALID). ``mark(label) -> t`` (a power meter's)
    frames each run; the window of the last one is returned. The SUT's stage timer is
    reset before each batch, so the timings cover the reported batch."""
    settings = plan.settings
    records: list[dict[str, Any]] = []
    for attempt in range(BACKOFFS + 1):
        if getattr(sut, "timer", None) is not None:
            sut.timer.reset()
        runs: list[LoadGenRun] = []
        window = None
        for i in range(plan.final_runs):
            folder = (out_dir / "loadgen" / settings.mode.lower() if plan.final_runs == 1
                      else out_dir / "loadgen" / f"final_{attempt * plan.final_runs + i + 1}")
            t0 = mark("loadgen_start") if mark else None
            runs.append(run_test(sut, library, settings, folder))
            window = (t0, mark("loadgen_end")) if mark else None
            records.append({"attempt": attempt + 1, "target_qps": settings.target_qps,
                            **_summary_info(runs[-1])})
        invalid = [r for r in runs if r.summary.get("validity") != "VALID"]
        if plan.final_runs == 1 or not invalid or attempt == BACKOFFS:
            break
        rate = float(f"{float(settings.target_qps) * (1 - plan.tolerance):.4g}")
        settings = LoadGenSettings.model_validate({**settings.model_dump(), "target_qps": rate})
    reported = invalid[0] if invalid else min(runs, key=_server_figure)
    return FinalRuns(reported, runs[-1], window, records, settings)


def _server_figure(run: LoadGenRun) -> float:
    s = run.summary
    return float(s.get("scheduled_samples_per_second") or s.get("samples_per_second") or 0.0)


def scenario_metric(run: LoadGenRun, settings: LoadGenSettings,
                    search: dict[str, Any] | None) -> dict[str, Any]:
    """The figure the scenario is judged on (MLPerf Inference paper, Table 2), with its
    percentile and LoadGen's verdict: SingleStream the early-stopping estimate of the
    target-percentile latency, MultiStream the same per query (streams after a search),
    Server the scheduled samples/s (the minimum of the final runs after a search),
    Offline samples/s. A search that found no passing value makes it INVALID, with no
    value and ``invalid_reason``, whatever LoadGen said of the final run."""
    summary = run.summary
    scenario = settings.scenario
    percentile = float(summary.get("effective", {}).get("target_latency_percentile")
                       or settings.target_latency_percentile or PERCENTILE[scenario] or 0) or None
    out: dict[str, Any] = {"scenario": scenario, "validity": summary.get("validity"),
                           "percentile": percentile, "searched": search is not None}
    lat = summary.get("latency_s", {})
    if scenario in ("SingleStream", "MultiStream") and not (search and scenario == "MultiStream"):
        key = f"{percentile * 100:g}" if percentile else "90"
        observed = lat.get("percentiles_s", {}).get(key)
        estimate = summary.get("early_stopping_latency_s")
        what = "per-query latency" if scenario == "MultiStream" else "latency"
        # one p{key} everywhere: the table's loadgen_p{key}_latency is LoadGen's observed
        # percentile; the scenario is judged on the early-stopping estimate (an upper bound
        # of that percentile, MLPerf's rule), named as such, the observed one beside it
        value = estimate or observed
        name = f"early-stopping p{key} {what} estimate" if estimate else f"p{key} {what}"
        out.update(name=name, value=None if value is None else value * 1e3, unit="ms",
                   higher_is_better=False,
                   observed_ms=None if observed is None else observed * 1e3,
                   observed_name=f"loadgen_p{key}_latency")
    elif scenario == "MultiStream":
        out.update(name=f"streams (samples per query) with p{percentile * 100:g} <= "
                        f"{search['latency_bound_s'] * 1e3:g} ms",
                   value=settings.samples_per_query, unit="streams", higher_is_better=True)
    elif scenario == "Server":
        bound = summary.get("effective", {}).get("target_latency_ns")
        bound_text = f" within {bound * 1e-6:g} ms" if bound else ""
        rule = " (minimum of the final runs)" if search else ""
        out.update(name=f"scheduled samples/s, p{percentile * 100:g}{bound_text}{rule}",
                   value=_server_figure(run), unit="samples/s", higher_is_better=True)
    else:
        out.update(name="samples/s", value=summary.get("samples_per_second"), unit="samples/s",
                   higher_is_better=True, percentile=None)
    if search and scenario in ("Server", "MultiStream") and search.get("best") is None:
        out.update(validity="INVALID", value=None, invalid_reason=(
            f"the {search.get('searched')} search found no passing value ({search.get('stopped')})"))
    elif search and scenario == "MultiStream":  # LoadGen does not judge the bound: we do
        key = f"{percentile * 100:g}" if percentile else "99"
        tail = summary.get("early_stopping_latency_s") or lat.get("percentiles_s", {}).get(key)
        bound = search.get("latency_bound_s")
        if tail is None or (bound and tail > bound):
            out.update(validity="INVALID", invalid_reason=(
                f"the final run at {settings.samples_per_query} streams has no p{key} per-query "
                "latency" if tail is None else
                f"the final run's p{key} per-query latency {tail * 1e3:.4g} ms at "
                f"{settings.samples_per_query} streams exceeds the bound {bound * 1e3:.4g} ms"))
    return out
