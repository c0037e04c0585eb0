"""Task ``system``: a LoadGen scenario over a registered SUT, stage timings, power windows.

The results name the system apart from the benchmark (``details.system``,
:mod:`.identity`; the file ``<benchmark id>--<system label>.json``), record the machine's
load around the timed runs (``details.load``, :mod:`.load`) and say how the energy was
obtained (``details.energy_source``: measured, an estimate from counted operations when no
meter is attached and the SUT's workload can be counted, or not measured).

The run, in order: build the SUT, check its accuracy rule and first response
(:mod:`.accuracy`), calibrate and search, then the final performance run(s) (:mod:`.perf`),
the AccuracyOnly run and its verdict (:mod:`.accuracy`), the power windows, the energy
estimate (:mod:`.estimate`), the compliance tests; each part's scores come from
:mod:`.scores`. The config's schema is :mod:`.config` (:class:`SystemConfig`).

``sut`` names an entry of :data:`neuromark.registry.suts` (:mod:`neuromark.system.suts`),
``meter`` one of :data:`neuromark.registry.meters`; both options are checked when the
config is planned, against the entry's signature. Writes under ``ctx.out_dir``:
``loadgen/performanceonly/`` and ``loadgen/accuracyonly/`` (LoadGen's raw logs of the two
runs a submission holds, kept on failure too), ``compliance/<TEST>/`` (with
``compliance:``) and ``latency.png`` / ``power.png``; returns one
:class:`~neuromark.results.Results`. ``profile`` names the rules ``neuromark check`` applies
(:mod:`neuromark.system.rules`); power follows the spec's floor/total protocol
(:mod:`neuromark.system.power.windows`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuromark.components import accepted, build_component, check_options
from neuromark.config import ConfigFile, validate
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.registry import meters, suts
from neuromark.results import Results, Score
from neuromark.system.compliance import TESTS, run_compliance
from neuromark.system.loadgen import run_test
from neuromark.system.power.measure import measure_windows
from neuromark.system.power.spec import make_meter
from neuromark.system.sut import BuiltSUT, check_first_response, warm_up
from neuromark.system.suts import RUN_ARGUMENTS
from neuromark.system.timing import timer_resolution_ns
from neuromark.system.track.accuracy import accuracy_mode_run, accuracy_pass, check_metric, check_rule
from neuromark.system.track.config import SystemConfig
from neuromark.system.track.estimate import EstimateSettings, estimate_energy, estimate_from_counts
from neuromark.system.track.identity import system_block, system_identity, system_label
from neuromark.system.track.load import LoadMonitor
from neuromark.system.track.perf import final_runs, prepare, scenario_metric
from neuromark.system.track.scores import loadgen_scores, mlperf_power, power_scores
from neuromark.tasks.base import TaskBase, TaskPlan, out_dir_of, task_results

#: The scenario's MLPerf figure of merit and where it sits in the LoadGen summary.
PRIMARY = {"SingleStream": "p90 latency", "MultiStream": "p99 per-query latency",
           "Server": "completed samples/s within the latency bound", "Offline": "samples/s"}


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
        argmax = check_rule(cfg, built, config)
        if cfg.estimate is not None and built.workload is None and built.operation_counts is None:
            where = (config or ConfigFile(data={})).where(("estimate",))
            raise ConfigError(f"{where}: estimate: SUT {cfg.sut.name!r} (with these options) "
                              "gives no workload whose operations can be counted; remove "
                              "estimate:")
        check_first_response(built, cfg.sut.name, scored=argmax, classes=argmax)  # before any timed run
        return _run(cfg, config, built, Path(out_dir).resolve(), ctx)
    finally:
        if built.close is not None:
            built.close()


def _run(cfg: SystemConfig, config: ConfigFile | None, built: Any, out_dir: Path,
         ctx: RunContext | None) -> Results:
    out_dir.mkdir(parents=True, exist_ok=True)
    sut, library, labels, info = built.sut, built.library, built.labels, built.info
    resolution = timer_resolution_ns()
    warm_up(sut, library, cfg.timing.warmup)
    settings = cfg.loadgen
    flags: list[str] = []
    label = system_label(cfg.sut.name, cfg.sut.label, info)
    details: dict[str, Any] = {"system": system_block(cfg.sut.name, cfg.sut.options, info, label),
                               "sut": {"name": sut.name, "entry": cfg.sut.name, **info},
                               "timer_resolution_ns": resolution, "warmup_samples": cfg.timing.warmup,
                               "loadgen": {}, "flags": flags, "plots": []}
    if built.front_end is not None:  # the input encoder's cost, beside the model's (issue 47.4)
        details["front_end"] = built.front_end
    scores: dict[str, Score] = dict(built.scores)  # measured by the SUT (remote: transport)
    meter = make_meter(cfg.meter, config)
    measured = getattr(meter, "measured", True)
    data_time = (_data_time(cfg, info, config)  # checked before anything runs
                 if measured and cfg.power.latency == "data_time" else None)
    load = LoadMonitor().__enter__()  # what else runs, around the timed runs (issue 57.6)
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
        load.__exit__(None, None, None)
        details["load"] = load.record()
        if (busy := load.flag()) is not None:
            flags.append(busy)
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
        load._stop.set()  # the sampling thread ends on errors too
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
    estimate = cfg.estimate
    countable = built.workload is not None or built.operation_counts is not None
    if estimate is None and not measured and countable:
        estimate = EstimateSettings()  # energy never silent (issue 57.7): the shipped profiles
    if estimate is not None and built.workload is None and built.operation_counts is not None:
        scores["energy_estimate"], details["energy_estimate"] = estimate_from_counts(
            built.operation_counts, estimate)
    elif estimate is not None:  # after LoadGen and the power windows: never disturbs them
        scores["energy_estimate"], details["energy_estimate"] = estimate_energy(
            built.workload, estimate, ctx)
    details["energy_source"] = _energy_source(measured, details, estimate)  # text: a detail
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
    return task_results(scores, benchmark=cfg.info(),
                        model=system_identity(cfg.sut.name, cfg.sut.options, label),
                        effective=effective.model_dump(), device=None,  # the SUT's own hardware
                        seeds={"seed": cfg.seed, **settings.seeds.model_dump()}, details=details)


def _energy_source(measured: bool, details: dict[str, Any],
                   estimate: EstimateSettings | None) -> str:
    """How the energy figure was obtained, in words the leaderboard shows (issue 57.7):
    ``measured (meter M)``, ``estimate (profiles; from counted operations)`` or ``not
    measured``; never empty."""
    if measured:
        return f"measured (meter {details['power_meter'].get('name', '?')})"
    if estimate is not None:
        shipped = all(str(p).startswith("horowitz45") for p in estimate.profiles)
        return ("estimate from counted operations" + (" (Horowitz 2014, 45 nm)" if shipped else
                f" ({len(estimate.profiles)} profile(s), details.energy_estimate)"))
    return "not measured (no meter; no countable workload for an estimate)"


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


class SystemTask(TaskBase):
    """Task ``system``: see the module docstring for the YAML schema."""

    name = "system"
    track = "system"  # no model execution rate (LoadGen measures the system)
    #: On the driver, whole: LoadGen's timings and the power meters belong to this machine.
    placement = "driver"

    settings_model = SystemConfig

    def settings_of(self, config: ConfigFile) -> SystemConfig:
        """The checked settings (:meth:`checked`); the default ``plan()`` keeps them."""
        return self.checked(config)

    def checked(self, config: ConfigFile) -> SystemConfig:
        """The config with the SUT's options checked and their defaults filled in; the
        meter's options are checked against its signature too."""

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
