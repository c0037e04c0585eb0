"""The ``system`` task: a LoadGen scenario over a SUT, stage timings, power windows, plots.

Writes under ``out_dir``: ``loadgen/<mode>/`` (LoadGen's raw logs, kept on failure too) and
``latency.png`` / ``power.png``; returns one :class:`~neuromark.results.Results`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.config import ConfigFile, validate
from neuromark.errors import ConfigError, DataError
from neuromark.results import BenchmarkInfo, Results, Score
from neuromark.system.config import AscSUT, EsnSUT, PowerConfig, SleepSUTConfig, SystemConfig
from neuromark.system.loadgen import LoadGenRun, run_test
from neuromark.system.sut import InMemoryLibrary, NullSUT, SleepSUT, StagedSUT
from neuromark.system.timing import StageTimer, now_s, timer_resolution_ns

CITATION = """@article{Yik2025neurobench,
  title = {The neurobench framework for benchmarking neuromorphic computing algorithms and systems},
  author = {Yik, Jason and others}, journal = {Nature Communications}, volume = {16}, pages = {1545},
  year = {2025}}
@misc{mlperf_loadgen, title = {{MLPerf} Inference LoadGen}, howpublished =
  {\\url{https://github.com/mlcommons/inference/tree/master/loadgen}}}"""

#: The scenario's MLPerf figure of merit and where it sits in the LoadGen summary.
PRIMARY = {"SingleStream": "p90 latency", "MultiStream": "p99 per-query latency",
           "Server": "completed samples/s within the latency bound", "Offline": "samples/s"}


def make_meter(cfg: PowerConfig, config: ConfigFile | None = None) -> Any:
    """The configured :class:`~neuromark.system.power.protocol.PowerMeter`, from
    :data:`neuromark.registry.meters` (as the QUBO task's ``meter``)."""
    from neuromark.config import resolve_path
    from neuromark.registry import meters

    options: dict[str, Any]
    if cfg.meter == "null":
        options = {"reason": cfg.reason}
    elif cfg.meter == "rapl":
        options = {"root": cfg.rapl_root, "interval_s": cfg.interval_s}
    elif cfg.meter == "nvml":
        options = {"index": cfg.gpu_index, "interval_s": cfg.interval_s}
    else:
        options = {"path": resolve_path(cfg.csv or "", config), "offset_s": cfg.offset_s,
                   "wall_clock": cfg.wall_clock}
    return meters.get(cfg.meter)(**options)


def build_sut(cfg: SystemConfig, config: ConfigFile | None) -> tuple[Any, InMemoryLibrary, Any, dict]:
    """``(sut, library, labels or None, info)`` for the configured SUT."""
    s = cfg.sut
    if isinstance(s, AscSUT):
        from neuromark.system.asc import build_pipeline

        pipe = build_pipeline(data=s.data, samples=s.samples, seed=cfg.seed, train_epochs=s.train_epochs,
                              int8=s.int8, threads=s.threads, weights=s.weights, n_mels=s.n_mels,
                              config_dir=config.path.parent if config and config.path else None)
        return pipe.sut, pipe.library, pipe.labels, pipe.info
    if isinstance(s, EsnSUT):
        from neuromark.system.esn import build_esn_pipeline

        library, sut, info = build_esn_pipeline(data=s.data, tau=s.tau, samples=s.samples, seed=cfg.seed,
                                                threads=s.threads, reservoir_size=s.reservoir_size)
        return sut, library, None, info
    library = InMemoryLibrary(f"{s.kind}-indices", lambda i: i, s.samples)
    if isinstance(s, SleepSUTConfig):
        return SleepSUT(s.sleep_s), library, None, {"sleep_s": s.sleep_s}
    return NullSUT(), library, None, {}


def _warm_up(sut: Any, library: InMemoryLibrary, n: int) -> None:
    if n == 0:
        return
    idx = [i % library.total_count for i in range(n)]
    library.load(sorted(set(idx)))
    for i in idx:
        if isinstance(sut, StagedSUT):
            sut.run_one(i)
        else:
            sut.issue([i])
    library.unload(sorted(set(idx)))
    if getattr(sut, "timer", None) is not None:
        sut.timer.reset()


def _score_ms(stats: dict[str, float]) -> Score:
    return Score(stats["mean_s"] * 1e3, error=stats["stderr_s"] * 1e3, unit="ms", higher_is_better=False)


def _power_phase(cfg: PowerConfig, meter: Any, sut: Any, library: InMemoryLibrary
                 ) -> tuple[dict[str, tuple[float, float]], dict[str, int]]:
    """Idle window, then active windows for pre-processing and inference (or one stream
    window in amortised mode, or for a SUT without stages); returns windows and the
    inference counts of stream windows. The meter is already running."""
    indices = list(range(library.performance_count))
    library.load(indices)
    windows: dict[str, tuple[float, float]] = {}
    counts: dict[str, int] = {}
    a = meter.mark("idle_start")
    time.sleep(cfg.idle_s)
    windows["idle"] = (a, meter.mark("idle_end"))
    if cfg.amortised or not isinstance(sut, StagedSUT):
        a, n = meter.mark("stream_start"), 0
        while now_s() - a < cfg.active_s:
            sut.issue([indices[n % len(indices)]])
            n += 1
        windows["stream"] = (a, meter.mark("stream_end"))
        counts["stream"] = n
    else:
        a, n, feats = meter.mark("preprocess_start"), 0, []
        while now_s() - a < cfg.active_s:
            feats.append(sut.preprocess(library.get(indices[n % len(indices)])))
            n += 1
            if len(feats) > len(indices):
                feats.pop(0)
        windows["preprocess"] = (a, meter.mark("preprocess_end"))
        a, n = meter.mark("inference_start"), 0
        while now_s() - a < cfg.active_s:
            sut.infer(feats[n % len(feats)])
            n += 1
        windows["inference"] = (a, meter.mark("inference_end"))
    library.unload(indices)
    return windows, counts


def _crop_timeline(timeline: dict[str, Any], t0: float, t1: float, max_points: int = 20000
                   ) -> dict[str, Any]:
    """The trace within ``[t0, t1]`` for the results file and plots, thinned by a stride to
    at most ``max_points`` (energies are computed on the full trace before this)."""
    t = np.asarray(timeline["t_s"], dtype=np.float64)
    p = np.asarray(timeline["power_w"], dtype=np.float64)
    keep = (t >= t0) & (t <= t1)
    t, p = t[keep], p[keep]
    stride = max(1, -(-t.size // max_points))
    return {"t_s": t[::stride].tolist(), "power_w": p[::stride].tolist(),
            "marks": timeline.get("marks", []), "stride": stride}


def _power_scores(power: dict[str, Any], scores: dict[str, Score], flags: list[str]) -> None:
    """Scores and flags of the power analysis (W and J)."""
    scores["idle_power"] = Score(power["idle"]["mean_power_w"], unit="W", higher_is_better=False)
    for name, st in power["active"].items():
        scores[f"{name}_power"] = Score(st["mean_power_w"], unit="W", higher_is_better=False)
        scores[f"{name}_dynamic_power"] = Score(st["dynamic_power_w"], unit="W", higher_is_better=False)
        if "energy_per_inference_j" in st:
            scores[f"{name}_energy_per_inference"] = Score(st["energy_per_inference_j"], unit="J",
                                                           higher_is_better=False)
            scores[f"{name}_dynamic_energy_per_inference"] = Score(
                st["dynamic_energy_per_inference_j"], unit="J", higher_is_better=False)
        if "warning" in st:
            flags.append(st["warning"])
    if "warning" in power["idle"]:
        flags.append(power["idle"]["warning"])
    if power["amortised"]:
        flags.append("amortised power mode: energy per inference = stream energy / samples")
    lg = power.get("loadgen")
    if lg:
        scores["loadgen_window_power"] = Score(lg["mean_power_w"], unit="W", higher_is_better=False)
        if lg.get("energy_per_sample_j") is not None:
            scores["loadgen_energy_per_sample"] = Score(lg["energy_per_sample_j"], unit="J",
                                                        higher_is_better=False)


def _accuracy(run: LoadGenRun, labels: np.ndarray) -> Score:
    """Score an AccuracyOnly log with our ``classification_accuracy`` metric: responses
    decoded with the recorded dtype, postprocessed by argmax over the logits."""
    import torch

    from neuromark.metrics.base import Step
    from neuromark.registry import metrics
    from neuromark.system.loadgen_log import ACCURACY, read_accuracy_log

    responses = read_accuracy_log(run.log_dir / ACCURACY, run.response_dtype)
    if not responses:
        raise DataError(f"{run.log_dir / ACCURACY}: no responses logged")
    order = sorted(responses)
    predictions = torch.as_tensor([int(np.argmax(responses[i])) for i in order])
    metric = metrics.get("classification_accuracy")()
    metric.update(Step(0, predictions, torch.as_tensor(labels[order]), len(order)))
    return metric.compute()


def _timing_and_loadgen(run: LoadGenRun, timer: StageTimer | None, settings: Any, details: dict[str, Any],
                        scores: dict[str, Score], out_dir: Path, sut_name: str) -> dict[str, float]:
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
            scores[f"{stage}_latency"] = _score_ms(st)
            latency_means[stage] = st["mean_s"]
        from neuromark.plotting import latency_histogram

        details["plots"].append(str(latency_histogram(timer.samples, out_dir / "latency.png",
                                                      f"{sut_name}: per-sample latency")))
    lat = run.summary.get("latency_s", {})
    if settings.mode == "PerformanceOnly" and lat:
        scores["loadgen_mean_latency"] = Score(lat["mean_s"] * 1e3, unit="ms", higher_is_better=False)
        target = "99" if settings.scenario == "MultiStream" else "90"
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


def _accuracy_pass(run: LoadGenRun, settings: Any, sut: Any, library: InMemoryLibrary, labels: np.ndarray,
                   details: dict[str, Any], scores: dict[str, Score], out_dir: Path) -> None:
    """Score the AccuracyOnly run (running one after the performance run if needed)."""
    acc_run = run
    if settings.mode != "AccuracyOnly":
        acc_settings = settings.model_copy(update={"mode": "AccuracyOnly"})
        acc_run = run_test(sut, library, acc_settings, out_dir / "loadgen" / "accuracyonly")
        details["loadgen"]["AccuracyOnly"] = {**acc_run.summary, "log_dir": str(acc_run.log_dir),
                                              "response_dtype": acc_run.response_dtype}
    scores["classification_accuracy"] = _accuracy(acc_run, labels)


def run_system(cfg: SystemConfig, config: ConfigFile | None, out_dir: Path) -> Results:
    """Run one system benchmark; see the module docstring for what is written. Torch's
    intra-op thread count (set by torch SUTs) is restored afterwards, so later benchmarks
    in a suite are not affected."""
    if cfg.sut.kind not in ("asc_cnn", "esn"):
        return _run_system(cfg, config, out_dir)
    import torch

    threads = torch.get_num_threads()
    try:
        return _run_system(cfg, config, out_dir)
    finally:
        torch.set_num_threads(threads)


def _run_system(cfg: SystemConfig, config: ConfigFile | None, out_dir: Path) -> Results:
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    sut, library, labels, info = build_sut(cfg, config)
    resolution = timer_resolution_ns()
    _warm_up(sut, library, cfg.timing.warmup)
    timer: StageTimer | None = getattr(sut, "timer", None)
    settings = cfg.loadgen
    flags: list[str] = []
    details: dict[str, Any] = {"sut": {"name": sut.name, "kind": cfg.sut.kind, **info},
                               "timer_resolution_ns": resolution, "warmup_samples": cfg.timing.warmup,
                               "loadgen": {}, "flags": flags, "plots": []}
    scores: dict[str, Score] = {}
    meter = make_meter(cfg.power, config)
    measured = getattr(meter, "measured", True)
    marks: dict[str, float] = {}
    if measured:
        meter.start()
        marks["loadgen_start"] = meter.mark("loadgen_start")
    try:
        run = run_test(sut, library, settings, out_dir / "loadgen" / settings.mode.lower())
        if measured:
            marks["loadgen_end"] = meter.mark("loadgen_end")
        latency_means = _timing_and_loadgen(run, timer, settings, details, scores, out_dir, sut.name)
        if labels is not None and (cfg.accuracy or settings.mode == "AccuracyOnly"):
            _accuracy_pass(run, settings, sut, library, labels, details, scores, out_dir)
            if "untrained" in str(info.get("weights", "")):
                flags.append("accuracy of an untrained (seeded random) model: chance level expected")
        if measured:
            windows, counts = _power_phase(cfg.power, meter, sut, library)
    finally:
        if measured:
            meter.stop()
    details["power_meter"] = meter.metadata()
    if not measured:
        scores["energy_per_inference"] = Score("not measured", unit="", higher_is_better=False)
        flags.append(f"energy not measured: {details['power_meter']['reason']}")
    else:
        from neuromark.plotting import power_trace
        from neuromark.system.power.windows import Window, analyse, window_power

        active = [Window(k, *v) for k, v in windows.items() if k != "idle"]
        power = analyse(meter, Window("idle", *windows["idle"]), active, latency_s=latency_means,
                        inferences=counts or None)
        power["amortised"] = bool(counts)
        lg_window = window_power(meter, Window("loadgen", marks["loadgen_start"], marks["loadgen_end"]))
        samples = run.summary.get("sample_count")
        lg_window["samples"] = samples
        lg_window["energy_per_sample_j"] = lg_window["energy_j"] / samples if samples else None
        power["loadgen"] = lg_window
        details["power"] = power
        spans = [*windows.values(), (marks["loadgen_start"], marks["loadgen_end"])]
        details["power_timeline"] = _crop_timeline(meter.timeline(), min(a for a, _ in spans) - 1.0,
                                                   max(b for _, b in spans) + 1.0)
        _power_scores(power, scores, flags)
        plot_windows = {**windows, "loadgen": (marks["loadgen_start"], marks["loadgen_end"])}
        title = f"{details['power_meter']['name']} meter"
        details["plots"].append(str(power_trace(details["power_timeline"], plot_windows,
                                                out_dir / "power.png", title)))
    details["primary_metric"] = PRIMARY[settings.scenario]
    name = cfg.name or f"{cfg.sut.kind}-{settings.scenario.lower()}"
    return Results(scores=scores, benchmark=BenchmarkInfo(name, cfg.version, "neurobench-system-track",
                                                          CITATION),
                   config=cfg.model_dump(), seeds={"seed": cfg.seed, **settings.seeds.model_dump()},
                   details=details)


class SystemTask:
    """Task ``system``: see :mod:`neuromark.system.config` for the YAML schema."""

    name = "system"

    def validate(self, config: ConfigFile) -> SystemConfig:
        cfg = validate(SystemConfig, config.data, config)
        if cfg.power.meter == "csv" and not cfg.power.csv:
            raise ConfigError(f"{config.where(('power', 'meter'))}: power.csv: the csv meter needs "
                              "the trace file path")
        if cfg.accuracy and cfg.sut.kind != "asc_cnn":
            raise ConfigError(f"{config.where(('accuracy',))}: accuracy: SUT kind {cfg.sut.kind!r} "
                              "has no labels to score; use asc_cnn or set accuracy: false")
        return cfg

    def run(self, config: ConfigFile, out_dir: Path, *, quiet: bool = False) -> list[Results]:
        return [run_system(self.validate(config), config, out_dir)]


TASK = SystemTask()
