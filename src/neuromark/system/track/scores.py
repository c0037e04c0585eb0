"""Scores of the ``system`` task: stage timings, LoadGen figures, power (the accuracy
figure is :mod:`neuromark.system.track.accuracy`'s).

Each function adds :class:`~neuromark.results.Score` entries to ``scores`` and whatever
it found to ``details`` (the results' ``details``: ``loadgen``, ``timing``, ``power``,
``flags``, ``plots``); :mod:`neuromark.system.track.task` calls them in order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuromark.plotting import latency_histogram, power_trace
from neuromark.results import Score
from neuromark.system.loadgen import LoadGenRun, LoadGenSettings
from neuromark.system.power.measure import crop_timeline
from neuromark.system.power.mlperf import two_pass
from neuromark.system.power.windows import Window, analyse, window_power
from neuromark.system.timing import StageTimer
from neuromark.system.track.accuracy import accuracy  # noqa: F401 - its former home


def score_ms(stats: dict[str, Any]) -> Score:
    """Mean latency ± standard error in ms (no error when fewer than two samples)."""
    err = stats["stderr_s"]
    return Score(stats["mean_s"] * 1e3, error=None if err is None else err * 1e3, unit="ms",
                 higher_is_better=False)


def loadgen_scores(run: LoadGenRun, timer: StageTimer | None, settings: LoadGenSettings,
                   details: dict[str, Any], scores: dict[str, Score], out_dir: Path,
                   sut_name: str) -> dict[str, float]:
    """Stage-timing scores, LoadGen figures and the latency plot; returns stage means (s)."""
    details["loadgen"][settings.mode] = {**run.summary, "log_dir": str(run.log_dir),
                                         "response_dtype": run.response_dtype}
    if run.summary.get("validity") == "INVALID":
        details["flags"].append("LoadGen result INVALID: " + "; ".join(run.summary["invalid_reasons"]))
    details["flags"] += [f"LoadGen error: {e}" for e in run.summary.get("errors", [])]
    latency_means: dict[str, float] = {}
    if timer is not None:
        stats = timer.stats()
        details["timing"] = stats
        details["raw_timings_ns"] = timer.raw()
        for stage, st in stats.items():
            scores[f"{stage}_latency"] = score_ms(st)
            latency_means[stage] = st["mean_s"]

        details["plots"].append(str(latency_histogram(timer.samples, out_dir / "latency.png",
                                                      f"{sut_name}: per-sample latency")))
    lat = run.summary.get("latency_s", {})
    if settings.mode == "PerformanceOnly" and lat:
        scores["loadgen_mean_latency"] = Score(lat["mean_s"] * 1e3, unit="ms", higher_is_better=False)
        percentile = (run.summary.get("effective", {}).get("target_latency_percentile")
                      or ("0.99" if settings.scenario in ("MultiStream", "Server") else "0.9"))
        target = f"{float(percentile) * 100:g}"  # the run's percentile (p90, p99, ...)
        if target in lat.get("percentiles_s", {}):
            scores[f"loadgen_p{target}_latency"] = Score(lat["percentiles_s"][target] * 1e3, unit="ms",
                                                         higher_is_better=False)
        if "samples_per_second" in run.summary:
            scores["throughput"] = Score(run.summary["samples_per_second"], unit="samples/s",
                                         higher_is_better=True)
        elif "qps" in run.summary:
            scores["throughput"] = Score(run.summary["qps"]["with_loadgen_overhead"], unit="queries/s",
                                         higher_is_better=True)
    return latency_means


def power_scores(meter: Any, windows: dict[str, tuple[float, float]], counts: dict[str, int],
                 loadgen_window: tuple[float, float], run: LoadGenRun,
                 latency_means: dict[str, float], details: dict[str, Any],
                 scores: dict[str, Score], out_dir: Path, *, latency_rule: str = "measured") -> None:
    """The power analysis of the measured windows (floor, optional idle, active, LoadGen),
    its scores in the spec's names (W and J) and flags, the cropped trace and the plot."""

    flags = details["flags"]
    active = [Window(k, *v) for k, v in windows.items() if k not in ("floor", "idle")]
    idle = Window("idle", *windows["idle"]) if "idle" in windows else None
    amortised = bool(counts) and latency_rule != "data_time"  # the real-time rule: power x data time
    power = analyse(meter, Window("floor", *windows["floor"]), active, latency_s=latency_means,
                    inferences=counts if amortised else None, idle=idle, latency_rule=latency_rule)
    power["amortised"] = amortised
    lg = window_power(meter, Window("loadgen", *loadgen_window), meter.timeline())
    samples = run.summary.get("sample_count")
    lg["samples"] = samples
    lg["energy_per_sample_j"] = lg["energy_j"] / samples if samples else None
    power["loadgen"] = lg
    details["power"] = power
    spans = [*windows.values(), loadgen_window]
    details["power_timeline"] = crop_timeline(meter.timeline(), min(a for a, _ in spans) - 1.0,
                                              max(b for _, b in spans) + 1.0)

    def add(name: str, value: float, unit: str) -> None:
        scores[name] = Score(value, unit=unit, higher_is_better=False)

    add("floor_power", power["floor"]["mean_power_w"], "W")
    if power["floor"]["peak_power_w"] is not None:
        add("floor_peak_power", power["floor"]["peak_power_w"], "W")
    if idle is not None:
        add("idle_power", power["idle"]["mean_power_w"], "W")
    for name, st in power["active"].items():
        add(f"{name}_total_power", st["total_power_w"], "W")
        if st["peak_power_w"] is not None:
            add(f"{name}_peak_power", st["peak_power_w"], "W")
        add(f"{name}_dynamic_power", st["dynamic_power_w"], "W")
        for kind in ("total", "floor", "dynamic"):
            if f"{kind}_energy_per_inference_j" in st:
                add(f"{name}_{kind}_energy_per_inference", st[f"{kind}_energy_per_inference_j"], "J")
    for st in [power["floor"], *([power["idle"]] if idle else []), *power["active"].values(), lg]:
        flags.extend(f for f in st.get("flags", []) if f not in flags)
    if power["amortised"]:
        flags.append("amortised power: a separate stream run, apart from the accuracy and latency "
                     "runs; energy per inference = stream energy / samples")
    if latency_rule == "data_time":
        flags.append("real-time rule: energy per inference = power x data time of one sample")
    scores["loadgen_window_power"] = Score(lg["mean_power_w"], unit="W", higher_is_better=False)
    if lg["peak_power_w"] is not None:
        add("loadgen_window_peak_power", lg["peak_power_w"], "W")
    if lg["energy_per_sample_j"] is not None:
        scores["loadgen_energy_per_sample"] = Score(lg["energy_per_sample_j"], unit="J",
                                                    higher_is_better=False)
    title = f"{details['power_meter']['name']} meter"
    details["plots"].append(str(power_trace(details["power_timeline"],
                                            {**windows, "loadgen": loadgen_window},
                                            out_dir / "power.png", title)))


def mlperf_power(meter: Any, run_pass: Any, out_dir: Path, details: dict[str, Any],
                 scores: dict[str, Score]) -> None:
    """MLPerf Power's ranging and testing passes through a driven ``ptd`` meter
    (``two_pass: true``), laid out under ``out_dir/mlperf_power`` as power-dev expects;
    ``run_pass(folder)`` runs LoadGen once into ``folder``. Adds ``details.mlperf_power`` and
    the score ``mlperf_power``: W (Offline, Server) or mJ per query (SingleStream,
    MultiStream), computed as MLPerf's submission checker computes it."""
    figures = two_pass(meter, run_pass, out_dir / "mlperf_power")
    figures["folder"] = "mlperf_power"  # relative to the benchmark's output folder
    details["mlperf_power"] = figures
    scores["mlperf_power"] = Score(figures["metric"], unit=figures["unit"], higher_is_better=False)
