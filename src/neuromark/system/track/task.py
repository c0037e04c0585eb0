"""Task ``system``: a LoadGen scenario over a registered SUT, stage timings, power windows.

Config (``configs/system/asc_cpu_singlestream.yaml``)::

    task: system
    benchmark: {id: asc_synthetic-cpu_singlestream, version: "1.0"}
    sut: {name: asc_cnn, options: {data: synthetic, samples: 64, threads: 1}}
    loadgen: {scenario: SingleStream, min_query_count: 256, min_duration_s: 1.0,
              expected_latency_s: 0.003}
    timing: {warmup: 10}
    meter: {name: "null", options: {reason: "no power instrument on this CPU"}}
    power: {floor_s: 2.0, active_s: 2.0, amortised: false}

``sut`` names an entry of :data:`neuromark.registry.suts` (:mod:`neuromark.system.suts`),
``meter`` one of :data:`neuromark.registry.meters`; both options are checked at
``validate`` time against the entry's signature. Writes under ``out_dir``:
``loadgen/performanceonly/`` and ``loadgen/accuracyonly/`` (LoadGen's raw logs of the two
runs a submission holds, kept on failure too), ``compliance/<TEST>/`` (with
``compliance:``) and ``latency.png`` / ``power.png``; returns one
:class:`~neuromark.results.Results`. ``profile`` names the rules ``neuromark check`` applies
(:mod:`neuromark.system.rules`); power follows the spec's floor/total protocol
(:mod:`neuromark.system.power.windows`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from neuromark.components import ComponentSpec, accepted, build_component, check_options
from neuromark.config import BenchmarkSettings, ConfigFile, Seed, StrictModel, reject_legacy_keys, validate
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.registry import meters, suts
from neuromark.results import Results, Score, model_identity
from neuromark.system.compliance import TESTS, run_compliance
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.power.measure import measure_windows
from neuromark.system.power.spec import MeterSpec, make_meter
from neuromark.system.quality import FLOAT_MODEL, AccuracyRule
from neuromark.system.sut import BuiltSUT, check_first_response, check_labels, warm_up
from neuromark.system.suts import RUN_ARGUMENTS
from neuromark.system.timing import timer_resolution_ns
from neuromark.system.track.accuracy import accuracy_pass, check_metric, default_metric, postprocess_of
from neuromark.system.track.estimate import EstimateSettings, estimate_energy
from neuromark.system.track.perf import final_runs, prepare, scenario_metric
from neuromark.system.track.scores import (
    accuracy_mode_run,
    loadgen_scores,
    mlperf_power,
    power_scores,
)
from neuromark.tasks.base import BenchmarkTask, TaskPlan, out_dir_of

CITATION = """@article{Yik2025neurobench,
  title = {The neurobench framework for benchmarking neuromorphic computing algorithms and systems},
  author = {Yik, Jason and others}, journal = {Nature Communications}, volume = {16}, pages = {1545},
  year = {2025}}
@misc{mlperf_loadgen, title = {{MLPerf} Inference LoadGen}, howpublished =
  {\\url{https://github.com/mlcommons/inference/tree/master/loadgen}}}"""

#: The results' parent id when ``benchmark.parent`` is not set.
PARENT = "neurobench-system-track"

#: The scenario's MLPerf figure of merit and where it sits in the LoadGen summary.
PRIMARY = {"SingleStream": "p90 latency", "MultiStream": "p99 per-query latency",
           "Server": "completed samples/s within the latency bound", "Offline": "samples/s"}

#: Flat meter keys of older ``power:`` sections and the meter option each became.
OLD_POWER_KEYS = {"meter": "", "reason": "reason", "rapl_root": "root", "gpu_index": "index",
                  "csv": "path", "offset_s": "offset_s", "wall_clock": "wall_clock",
                  "interval_s": "interval_s"}


class TimingConfig(StrictModel):
    warmup: int = Field(10, ge=0, description="untimed samples run before the test")


class PowerWindows(StrictModel):
    """``power:``: the measurement windows in seconds (the instrument is ``meter:``).

    ``floor_s``: the floor window (configured and ready, not asleep); ``active_s``: each
    active window; ``sleep_s``: an optional true idle (sleep) window; ``amortised``: one
    separate long stream run (energy / samples) instead of power × latency; ``latency``:
    ``measured`` (the mean latency of each stage) or ``data_time`` (the real-time rule:
    ``data_time_s`` per inference, default the SUT's ``data_time_s``, 1 s for ASC)."""

    floor_s: float = Field(2.0, gt=0)
    active_s: float = Field(2.0, gt=0)
    sleep_s: float | None = Field(None, gt=0)
    amortised: bool = False
    latency: Literal["measured", "data_time"] = "measured"
    data_time_s: float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _one_rule(self) -> PowerWindows:
        if self.amortised and self.latency == "data_time":
            raise ValueError("amortised: true (energy / samples of a stream run) and latency: "
                             "data_time (power x data time) are two rules; choose one")
        return self


class SystemConfig(StrictModel):
    task: Literal["system"]
    benchmark: BenchmarkSettings | None = Field(
        None, description="identity; default id <sut name>-<scenario>")
    description: str = ""
    sut: ComponentSpec
    loadgen: LoadGenSettings = LoadGenSettings()
    accuracy: AccuracyRule | bool | None = Field(
        None, description="how the AccuracyOnly pass is scored and its quality target "
                          "(neuromark.system.quality); true: scored, no target; false: not scored")
    timing: TimingConfig = TimingConfig()
    meter: MeterSpec | None = Field(None, description="default: not measured (null meter)")
    power: PowerWindows = PowerWindows()
    seed: Seed = 0
    profile: Literal["test", "submission"] = Field(
        "test", description="the rules the submission checker applies (neuromark.system.rules)")
    compliance: bool | list[Literal["TEST01", "TEST04", "TEST05"]] = Field(
        False, description="run the MLPerf compliance tests after the test (true: all three)")
    latency: Literal["measured", "data_time"] | None = Field(
        None, description="the spec's latency rule for energy per inference; same as power.latency")
    estimate: EstimateSettings | None = Field(
        None, description="also estimate energy per inference from the SUT's operation counts "
                          "(energy_estimate, beside the measured energy_per_inference)")

    @model_validator(mode="after")
    def _latency_rule(self) -> SystemConfig:
        """A top-level ``latency:`` is the spec's spelling of ``power.latency``."""
        if self.latency is not None:
            if "latency" in self.power.model_fields_set and self.power.latency != self.latency:
                raise ValueError(f"latency: {self.latency} and power.latency: {self.power.latency} "
                                 "disagree; give one")
            power = PowerWindows(**{**self.power.model_dump(), "latency": self.latency})
            object.__setattr__(self, "power", power)
        return self

    def accuracy_rule(self) -> AccuracyRule | None:
        """The accuracy rule; None for ``accuracy: false`` (the AccuracyOnly run is still
        made, not scored); ``true`` or no ``accuracy:`` score the SUT's outputs with its
        own metric when it gives labels, without a quality target."""
        if self.accuracy is False:
            return None
        return self.accuracy if isinstance(self.accuracy, AccuracyRule) else AccuracyRule()

    def info(self) -> Any:
        """The results' :class:`~neuromark.results.BenchmarkInfo`."""
        settings = self.benchmark or BenchmarkSettings(
            id=f"{self.sut.name}-{self.loadgen.scenario.lower()}")
        if settings.parent is None:
            settings = settings.model_copy(update={"parent": PARENT})
        return settings.info(CITATION)


def _quote(value: Any) -> str:
    """``value`` as YAML: strings double-quoted, so "null" stays a string."""
    import json

    return json.dumps(value)


def _flow(mapping: dict[str, Any]) -> str:
    """``mapping`` in YAML flow style."""
    return "{" + ", ".join(f"{k}: {_quote(v)}" for k, v in mapping.items()) + "}"


def reject_old_spelling(config: ConfigFile) -> None:
    """Clear errors for configs written before ``benchmark:``, ``sut: {name, options}`` and
    ``meter: {name, options}``, each naming the new spelling."""

    reject_legacy_keys(config, ("name", "id", "version"))
    sut = config.data.get("sut")
    if isinstance(sut, dict) and "kind" in sut:
        options = {k: v for k, v in sut.items() if k != "kind"}
        raise ConfigError(f"{config.where(('sut', 'kind'))}: sut.kind is no longer used; write "
                          f"sut: {{name: {_quote(sut['kind'])}, options: {_flow(options)}}}")
    power = config.data.get("power")
    if isinstance(power, dict) and set(power) & set(OLD_POWER_KEYS):
        old = [k for k in power if k in OLD_POWER_KEYS]
        options = {OLD_POWER_KEYS[k]: power[k] for k in old if k != "meter"}
        name = _quote(power.get("meter", "null"))
        raise ConfigError(f"{config.where(('power', old[0]))}: power.{old[0]}: the meter is no longer "
                          f"part of 'power'; write meter: {{name: {name}, options: {_flow(options)}}} "
                          "(power: keeps floor_s, active_s, amortised)")
    if isinstance(power, dict) and "idle_s" in power:
        raise ConfigError(f"{config.where(('power', 'idle_s'))}: power.idle_s is now power.floor_s: "
                          "the configured-and-ready window is the NeuroBench floor window (not "
                          "idle: the device must not sleep); a true idle (sleep) window is "
                          "power.sleep_s")


def run_system(cfg: SystemConfig, config: ConfigFile | None, out_dir: Path,
               ctx: RunContext | None = None) -> Results:
    """Run one system benchmark; see the module docstring for what is written. The SUT's
    ``close`` runs afterwards (torch SUTs restore the thread count there), also on errors.
    ``ctx``: the run's context (the energy estimate's counting); None: the defaults."""

    config_dir = config.path.parent if config is not None and config.path is not None else None
    run_arguments = accepted(suts.get(cfg.sut.name), seed=cfg.seed, config_dir=config_dir)
    built = build_component(suts, cfg.sut, config, ("sut",), **run_arguments)
    if not isinstance(built, BuiltSUT):
        raise ConfigError(f"sut {cfg.sut.name!r}: its factory returned {type(built).__name__}, "
                          "not a neuromark.system.sut.BuiltSUT")
    try:
        argmax = _check_accuracy(cfg, built, config)
        if cfg.estimate is not None and built.workload is None:
            where = (config or ConfigFile(data={})).where(("estimate",))
            raise ConfigError(f"{where}: estimate: SUT {cfg.sut.name!r} (with these options) "
                              "gives no workload whose operations can be counted; remove "
                              "estimate:")
        check_first_response(built, cfg.sut.name, scored=argmax, classes=argmax)  # before any timed run
        return _run(cfg, config, built, Path(out_dir).resolve(), ctx)
    finally:
        if built.close is not None:
            built.close()


def _check_accuracy(cfg: SystemConfig, built: BuiltSUT, config: ConfigFile | None) -> bool:
    """The accuracy rule fits the SUT (before anything runs): a scored rule needs labels, an
    exemption a SUT without them, ``reference: float_model`` a float reference model, and
    the metric must score predictions. Returns whether responses are scored by argmax
    (then checked as class scores)."""
    rule = cfg.accuracy_rule()
    where = (config or ConfigFile(data={})).where(("accuracy",))
    name = cfg.sut.name
    check_labels(built.labels, name, built.library.total_count, classes=False)  # an array at all
    if rule is None:
        return False
    if rule.exempt is not None:
        if built.labels is not None:
            raise ConfigError(f"{where}: accuracy.exempt: SUT {name!r} gives labels, so its "
                              "accuracy can be scored; declare a quality target instead "
                              "(accuracy: {metric, reference, target})")
        return False
    wants_score = cfg.accuracy is True or rule.judged or rule.metric is not None
    if built.labels is None:
        if wants_score:
            raise ConfigError(f"{where}: accuracy: SUT {name!r} has no labels to score; declare "
                              "accuracy: {exempt: <why no quality target applies>}")
        return False
    metric = rule.metric or default_metric(built.labels, built.metric)
    if metric is None:
        raise ConfigError(f"{where}: accuracy.metric: SUT {name!r} gives regression targets and "
                          "names no metric; set accuracy.metric (e.g. sMAPE)")
    check_metric(metric, f"{where}: accuracy.metric")
    if rule.reference == FLOAT_MODEL and built.reference is None:
        raise ConfigError(f"{where}: accuracy.reference: {FLOAT_MODEL}: SUT {name!r} (with these "
                          "options) has no float reference model; give the float model's figure "
                          "as a number")
    return postprocess_of(rule, metric) == "argmax" and built.labels.dtype.kind in "iu"


def _run(cfg: SystemConfig, config: ConfigFile | None, built: Any, out_dir: Path,
         ctx: RunContext | None) -> Results:
    out_dir.mkdir(parents=True, exist_ok=True)
    sut, library, labels, info = built.sut, built.library, built.labels, built.info
    resolution = timer_resolution_ns()
    warm_up(sut, library, cfg.timing.warmup)
    settings = cfg.loadgen
    flags: list[str] = []
    details: dict[str, Any] = {"sut": {"name": sut.name, "entry": cfg.sut.name, **info},
                               "timer_resolution_ns": resolution, "warmup_samples": cfg.timing.warmup,
                               "loadgen": {}, "flags": flags, "plots": []}
    if built.front_end is not None:  # the input encoder's cost, beside the model's (issue 47.4)
        details["front_end"] = built.front_end
    scores: dict[str, Score] = dict(built.scores)  # measured by the SUT (remote: transport)
    meter = make_meter(cfg.meter, config)
    measured = getattr(meter, "measured", True)
    data_time = (_data_time(cfg, info, config)  # checked before anything runs
                 if measured and cfg.power.latency == "data_time" else None)
    perf = prepare(sut, library, settings, out_dir, cfg.profile)  # calibration, search: untimed
    settings = perf.settings  # the effective settings
    details["loadgen"]["calibration"] = perf.calibration
    if perf.search is not None:
        details["loadgen"]["search"] = perf.search
    if measured:
        meter.start()
    try:
        final = final_runs(sut, library, perf, out_dir, meter.mark if measured else None)
        run, settings, lg_window = final.reported, final.settings, final.window
        if perf.search is not None:
            perf.search["final"] = final.runs
        latency_means = loadgen_scores(run, getattr(sut, "timer", None), settings, details, scores,
                                       out_dir, sut.name)
        acc_run = accuracy_mode_run(run, settings, sut, library, details, out_dir)
        rule = cfg.accuracy_rule()
        if rule is not None:
            accuracy_pass(acc_run, built, rule, cfg.sut.name, details, scores)
            if labels is not None and "untrained" in str(info.get("weights", "")):
                flags.append("accuracy of an untrained (seeded random) model: chance level expected")
        if measured:
            windows, counts = measure_windows(meter, sut, library, floor_s=cfg.power.floor_s,
                                              active_s=cfg.power.active_s,
                                              amortised=cfg.power.amortised,
                                              sleep_s=cfg.power.sleep_s)
    finally:
        if measured:
            meter.stop()
    details["power_meter"] = meter.metadata()
    if measured:
        if data_time is not None:
            latency_means = {k: data_time for k in windows}
        if cfg.power.sleep_s is not None and not hasattr(sut, "sleep"):
            flags.append(f"idle window: SUT {sut.name!r} has no sleep() hook; the host was left "
                         "idle, the device was not put to sleep")
        power_scores(meter, windows, counts, lg_window, final.last, latency_means, details, scores, out_dir,
                     latency_rule=cfg.power.latency)
        if getattr(meter, "two_pass", False):  # MLPerf Power: ranging + testing LoadGen runs
            mlperf_power(meter, lambda d: run_test(sut, library, settings, d), out_dir, details, scores)
    else:
        scores["energy_per_inference"] = Score("not measured", unit="", higher_is_better=False)
        flags.append(f"energy not measured: {details['power_meter']['reason']}")
    if cfg.estimate is not None:  # after LoadGen and the power windows: never disturbs them
        scores["energy_estimate"], details["energy_estimate"] = estimate_energy(
            built.workload, cfg.estimate, ctx)
    if cfg.compliance and settings.mode == "PerformanceOnly":
        tests = TESTS if cfg.compliance is True else tuple(cfg.compliance)
        details["compliance"] = run_compliance(sut, library, settings, run, acc_run,
                                               out_dir / "compliance", tests)
        flags += [f"compliance {t}: {v['verdict']}" + (f" ({v['reason']})" if v.get("reason") else "")
                  for t, v in details["compliance"].items()]
    details["profile"] = cfg.profile
    details["primary_metric"] = PRIMARY[settings.scenario]
    if settings.mode == "PerformanceOnly":
        details["scenario_metric"] = metric = scenario_metric(run, settings, perf.search)
        if metric.get("invalid_reason"):
            flags.append(f"scenario metric INVALID: {metric['invalid_reason']}")
        if perf.search is not None and metric.get("value") is not None:
            scores["scenario_metric"] = Score(metric["value"], unit=metric["unit"],
                                              higher_is_better=metric["higher_is_better"])
    effective = cfg.model_copy(update={"loadgen": settings})  # the calibrated settings
    return Results(scores=scores, benchmark=cfg.info(), config=effective.model_dump(),
                   seeds={"seed": cfg.seed, **settings.seeds.model_dump()}, details=details,
                   model=model_identity(cfg.sut.name, cfg.sut.options))


def _data_time(cfg: SystemConfig, info: dict[str, Any], config: ConfigFile | None) -> float:
    """The data time of one sample (s) for the real-time rule: ``power.data_time_s`` or the
    SUT's ``data_time_s``."""
    value = cfg.power.data_time_s or info.get("data_time_s")
    if not value:
        config = config or ConfigFile(data={})
        where = config.where(("latency",) if "latency" in config.data else ("power", "latency"))
        raise ConfigError(f"{where}: power.latency: data_time needs power.data_time_s (SUT "
                          f"{cfg.sut.name!r} does not state the data time of a sample)")
    return float(value)


class SystemTask(BenchmarkTask):
    """Task ``system``: see the module docstring for the YAML schema."""

    name = "system"
    track = "system"  # no model execution rate (LoadGen measures the system)
    #: On the driver, whole: LoadGen's timings and the power meters belong to this machine.
    placement = "driver"

    def plan(self, config: ConfigFile, ctx: RunContext) -> TaskPlan:
        return TaskPlan(config, self.checked(config))

    def checked(self, config: ConfigFile) -> SystemConfig:
        """The config with the SUT's options checked and their defaults filled in; the
        meter's options are checked against its signature too."""

        reject_old_spelling(config)
        cfg = validate(SystemConfig, config.data, config)
        options = check_options(suts, cfg.sut, config, ("sut",), run_arguments=RUN_ARGUMENTS)
        count, samples = cfg.loadgen.performance_sample_count, options.get("samples")
        if count is not None and isinstance(samples, int) and count > samples:
            raise ConfigError(f"{config.where(('loadgen', 'performance_sample_count'))}: "
                              f"loadgen.performance_sample_count: {count} is larger than the "
                              f"sample library (sut.options.samples: {samples})")
        if cfg.meter is not None:
            check_options(meters, cfg.meter, config, ("meter",))
        rule = cfg.accuracy_rule()
        if rule is not None and rule.metric is not None:
            check_metric(rule.metric, f"{config.where(('accuracy', 'metric'))}: accuracy.metric")
        update: dict[str, Any] = {"sut": cfg.sut.model_copy(update={"options": options})}
        if cfg.estimate is not None:
            update["estimate"] = cfg.estimate.checked(config)
        return cfg.model_copy(update=update)

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        return [run_system(plan.settings, plan.config, out_dir_of(ctx), ctx)]


TASK = SystemTask()
