"""Mackey-Glass chaotic function prediction (NeuroBench v1.0, Yik et al. 2025, Methods).

Protocol, per tau and model: ``instances`` windows of ``length`` Lyapunov times L, each
shifted ``shift`` L from the last. On each, the model is re-initialised (seed + instance),
trained on the first half with the ground truth as input (predicting f(t+dt)), then
forecasts the second half autoregressively. The forecast is ONE batch of T samples, one per
timestep, run through :class:`neuromark.runner.Benchmark`, which measures the configured
metrics (default: the complexity metrics of :data:`DEFAULT_METRICS`, per model execution =
per timestep); sMAPE is computed from the captured forecast by
:func:`neuromark.metrics.functional.correctness.smape`. Scores: sMAPE = mean over instances with its
standard error; every other metric = mean over instances (equal sample counts, so this
equals the pooled figure). A forecast with NaN/inf counts 200 per such step and the
instance is flagged as diverged; if the non-finite values reach the model's own layers the
probes cannot count them, and that instance is left out of the complexity means (flagged).

Config (YAML)::

    task: mackey_glass
    benchmark: {id: mackey_glass_tau17-esn, version: "1.0"}   # optional
    data: {taus: [17], instances: 30, length: 20, shift: 0.5}
          # offsets: truncated   # NeuroBench's instance starts (int(k * 37.5)); default rounded
    models:
      - {name: esn, seed: 0, params: {spectral_radius: 1.0}}
    metrics: [footprint, parameter_count, connection_sparsity, activation_sparsity,
              synaptic_operations]   # optional; registered metric names (sMAPE is always on)
    execution_rate_hz: null    # as given, when set; else 1 / the series' dt (as seconds)
    published: {sMAPE: 14.79}  # optional: a publication's figures, kept in details.published
    device: cpu                # cpu (default), cuda, cuda:N or auto; --device overrides

NeuroBench's own ESN protocol (examples/mackey_glass) differs from ours in five details, each
an option: ``data.offsets: truncated`` and the ESN's ``warmup: 45``, ``input_weight_range: 0.5``,
``spectral_scaling: first_eigenvalue`` and ``first_forecast_input: ground_truth``
(configs/neurobench_v1/mackey_glass_esn_neurobench_protocol.yaml, docs/neurobench_v1.md).

``benchmark`` is the shared :class:`neuromark.config.IdentitySettings` (``id``, ``version``,
``parent``, ``citation``); without it the ids are derived (:func:`benchmark_id`), the parent
is ``neurobench-mackey_glass`` and the citation NeuroBench's.

One tau: one results file per model with every score. Several taus: one sweep results file
(``sMAPE[<model>,tau=<tau>]`` scores) and a PNG of sMAPE vs tau; finished (model, tau)
entries are kept under ``<out>/entries/`` and a re-run into the same folder resumes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from neuromark.benchmarks.mackey_glass.instances import (
    DEFAULT_METRICS,
    DataSettings,
    ModelSettings,
    forecast_metrics,
    forecaster_for,
    run_entries,
)
from neuromark.config import (
    ConfigFile,
    IdentitySettings,
    StrictModel,
    resolve_path,
    validate,
)
from neuromark.context import RunContext
from neuromark.devices import DeviceName
from neuromark.errors import ConfigError, DataError
from neuromark.identity import BenchmarkIdentity, ModelIdentity, id_problem, model_identity
from neuromark.io_atomic import to_jsonable, write_json_atomic
from neuromark.metrics.execution_rate import NAME as RATE
from neuromark.metrics.execution_rate import from_step
from neuromark.metrics.names import MetricEntry, metric_names
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan, out_dir_of

PARENT = "neurobench-mackey_glass"
CITATION = """@article{yik2025neurobench,
  title={The neurobench framework for benchmarking neuromorphic computing algorithms and systems},
  author={Yik, Jason and others}, journal={Nature Communications}, volume={16}, pages={1545},
  year={2025}}"""


class MackeyGlassConfig(StrictModel):
    task: Literal["mackey_glass"]
    description: str = ""
    benchmark: IdentitySettings | None = Field(
        None, description="the results identity; without it the ids are derived")
    data: DataSettings = Field(default_factory=DataSettings)
    models: list[ModelSettings] = Field(min_length=1)
    metrics: list[MetricEntry] = Field(default_factory=lambda: list(DEFAULT_METRICS),
                                       description="registered metrics measured on the forecast "
                                       "(names or {name, options})")
    execution_rate_hz: float | None = Field(None, gt=0)
    published: dict[str, Any] | None = Field(
        None, description="figures a publication reports for this row (e.g. NeuroBench's "
                          "leaderboard), copied into each result's details.published beside ours")
    threads: int = Field(1, gt=0, description="torch CPU threads while training/forecasting")
    device: DeviceName = Field("cpu", description="where models train and forecast (cpu, "
                               "cuda, cuda:N, auto; --device overrides)")

    @field_validator("models")
    @classmethod
    def _unique(cls, models: list[ModelSettings]) -> list[ModelSettings]:
        keys = [m.key for m in models]
        if len(set(keys)) != len(keys):
            raise ValueError(f"model names/labels must be unique, got {keys}")
        return models

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, entries: list[MetricEntry]) -> list[MetricEntry]:
        names = metric_names(entries)
        if "sMAPE" in names:
            raise ValueError("sMAPE is always scored from the forecast (non-finite steps count "
                             "200); leave it out of metrics")
        if len(set(names)) != len(names):
            raise ValueError(f"metric names must be unique, got {names}")
        return entries


def benchmark_id(cfg: MackeyGlassConfig, model: ModelSettings | None, tau: int) -> str:
    """The benchmark id, the same for every model (each result's model block tells them
    apart): ``benchmark.id``, else ``mackey-glass-tau<tau>``; the sweep (``model=None``) is
    ``benchmark.id`` or ``mackey-glass-tau-sweep``."""
    given = cfg.benchmark.id if cfg.benchmark else None
    if model is None:
        return given or "mackey-glass-tau-sweep"
    return given or f"mackey-glass-tau{tau}"


def model_block(model: ModelSettings, resolved: dict[str, Any]) -> ModelIdentity:
    """The results' model identity: the model's name, its resolved ``params`` and ``seed``
    as options (``resolved``: its entry of the resolved config), its key as the label."""
    return model_identity(model.name, {"params": resolved["params"], "seed": resolved["seed"]},
                          None, model.key)


def benchmark_info(cfg: MackeyGlassConfig, bench_id: str) -> BenchmarkIdentity:
    """The configured identity with ``bench_id``; the parent defaults to NeuroBench's task."""
    info = (cfg.benchmark or IdentitySettings(id=bench_id)).info(CITATION, id=bench_id)
    return info if info.parent else dataclasses.replace(info, parent=PARENT)


def _model_params(model: ModelSettings, config: ConfigFile | None, index: int):
    where = f"{config.where(('models', index, 'name')) if config else '<config>'}: models.{index}.name"
    forecaster = forecaster_for(model.name, where)  # a registered model (neuromark.registry)
    return validate(forecaster.params_model, model.params, config, ("models", index, "params"))


def _check_fits_training(params: Any, settings: DataSettings, config: ConfigFile | None,
                         index: int) -> None:
    """An ESN warm-up must leave training steps for the readout, and an LSTM chunk must fit
    in the training half (``length`` L at 75 points per L, halved)."""
    from neuromark.benchmarks.mackey_glass.series import POINTS_PER_LYAPUNOV_TIME

    n_train = int(round(settings.length * POINTS_PER_LYAPUNOV_TIME)) // 2
    key, value = ("warmup", getattr(params, "warmup", None))
    if value is None:
        key, value = ("chunk", getattr(params, "chunk", None))
        if value is None:  # a forecaster with neither
            return
        bad = value > n_train
    else:
        bad = value >= n_train
    if bad:
        where = config.where(("models", index, "params", key)) if config else "<config>"
        raise ConfigError(f"{where}: models[{index}].params.{key}={value} does not fit the "
                          f"training half of {n_train} steps (data.length={settings.length} L)")


def _root(settings: DataSettings, config: ConfigFile | None) -> Path | None:
    return resolve_path(settings.root, config) if settings.root else None


def check_data(settings: DataSettings, config: ConfigFile | None = None) -> None:
    """Every tau has an intact series (sha256), every instance window fits, ``dt`` (if set)
    matches."""
    from neuromark.benchmarks.mackey_glass.series import (
        DATA_DIR,
        available_taus,
        entry,
        instance_stop,
        verify_file,
    )

    root = _root(settings, config)

    def where(key: str) -> str:
        return f"{config.where(('data', key)) if config else '<config>'}: data.{key}"

    known = available_taus(root)
    for tau in settings.taus:
        if tau not in known:
            raise ConfigError(f"{where('taus')}: no Mackey-Glass series for tau={tau} "
                              f"(available: {', '.join(map(str, known))})")
        row = entry(tau, root)
        verify_file((root or DATA_DIR) / row.file, root or DATA_DIR)
        stop = instance_stop(settings.instances - 1, settings.length, settings.shift)
        if stop > row.n_points:
            raise ConfigError(
                f"{where('instances')}: instance {settings.instances - 1} of tau={tau} ends at "
                f"sample {stop - 1}, past the end of the series ({row.n_points} samples = "
                f"{row.n_points // 75} L); reduce data.instances, data.shift or data.length")
        if settings.dt is not None and not math.isclose(settings.dt, row.dt, rel_tol=1e-9):
            raise ConfigError(f"{where('dt')}: dt={settings.dt} does not match the tau={tau} "
                              f"series' dt={row.dt} (L/75); remove data.dt or set it to the "
                              f"series' value")


def execution_rate(cfg: MackeyGlassConfig, tau: int, root: Path | None) -> dict[str, Any]:
    """``details.model_execution_rate`` of tau's results (:mod:`neuromark.metrics.execution_rate`):
    ``execution_rate_hz`` (or ``benchmark.execution_rate_hz``) as stated, else one forecast
    step per sample of tau's series, dt = L/75 in the equation's time units, read as seconds."""
    from neuromark.benchmarks.mackey_glass.series import entry

    stated = cfg.execution_rate_hz or (cfg.benchmark.execution_rate_hz if cfg.benchmark else None)
    if stated is not None:
        return {"value": float(stated), "unit": "Hz", "source": "config",
                "derivation": "execution_rate_hz, as the config states it"}
    dt = entry(tau, root).dt
    return from_step(dt, f"the tau={tau} series as sampled, dt = L/75 = {dt:g} time units of the "
                         f"equation, one prediction each; the equation's time has no unit, read "
                         f"here as 1 s")


def _flags(entry: dict[str, Any]) -> list[str]:
    return [f"{entry['model']} tau={entry['tau']}: instance {d['instance']} diverged (non-finite "
            f"forecast from step {d['first_nonfinite_step']}; counted as sMAPE 200 per step"
            + ("" if d.get("complexity_measured", True) else
               "; its complexity could not be counted and is left out of the means") + ")"
            for d in entry["diverged"]]


#: What this task's sMAPE is, beside the figure (a system-track ESN reports a one-step sMAPE).
HEADLINE_NOTE = ("free-running forecast: the model predicts the second half of each series "
                 "from its own outputs; lower is better")


def _single_results(entry: dict[str, Any], cfg: MackeyGlassConfig, model: ModelSettings,
                    resolved: dict[str, Any]) -> Results:
    c = entry["complexity"]
    scores = {"sMAPE": Score(entry["sMAPE"], entry["sMAPE_se"], "%", False)}
    for name in metric_names(cfg.metrics):
        if name in c:
            scores[name] = Score(c[name], **entry["metric_info"][name])
    details = {k: v for k, v in entry.items() if k not in ("sMAPE", "sMAPE_se", "metric_info")}
    details["flags"] = _flags(entry)
    if cfg.published:
        details["published"] = dict(cfg.published)
    details["headline_note"] = HEADLINE_NOTE  # what sMAPE is here (reports, leaderboards)
    if not c and cfg.metrics:
        details["flags"].append("no complexity figures: every instance diverged")
    return Results(scores=scores, benchmark=benchmark_info(cfg, benchmark_id(cfg, model, entry["tau"])),
                   config=resolved, seeds={"models": {model.key: entry["seeds"]}},
                   details=details,
                   model=model_block(model, resolved["models"][cfg.models.index(model)]))


def _fingerprint(resolved: dict[str, Any], index: int, tau: int) -> str:
    """What an entry of the sweep depends on: the data settings other than the list of
    taus, model ``index`` with its parameters resolved (defaults filled in), tau, the
    metrics when they are not the default ones and the forecaster's ``revision`` when it has
    one (a module whose figures changed: its entries saved before are recomputed)."""
    data = {k: v for k, v in resolved["data"].items() if k != "taus"}
    key = {"data": data, "model": resolved["models"][index], "tau": tau}
    revision = getattr(forecaster_for(resolved["models"][index]["name"]), "revision", 0)
    if revision:  # 0: the keys of older entries
        key["revision"] = revision
    if resolved["metrics"] != list(DEFAULT_METRICS):  # default: the keys of older entries
        key["metrics"] = resolved["metrics"]
    return hashlib.sha256(json.dumps(to_jsonable(key), sort_keys=True).encode()).hexdigest()[:16]


def _saved_entry(cache: Path) -> dict[str, Any] | None:
    """A finished sweep entry saved at ``cache`` (None when absent); anything there that is
    not one raises :class:`~neuromark.errors.DataError` naming the file (it is never
    replaced silently)."""
    if not cache.exists():
        return None
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{cache}: not a readable Mackey-Glass entry ({exc}); move it away "
                        f"to recompute it") from None
    entry = saved.get("entry") if isinstance(saved, dict) else None
    if not isinstance(entry, dict) or not isinstance(saved.get("fingerprint"), str) or not (
            isinstance(entry.get("sMAPE"), (int, float)) and not isinstance(entry["sMAPE"], bool)
            and math.isfinite(entry["sMAPE"])):
        raise DataError(f"{cache}: not a Mackey-Glass entry (needs 'fingerprint' and an "
                        f"'entry' with a finite 'sMAPE'); move it away to recompute it")
    return saved


class MackeyGlassTask(TaskBase):
    """The ``mackey_glass`` task (see the module docstring)."""

    name = "mackey_glass"
    train_note = ("each instance trains its own model on that instance's training half inside "
                  "the run, so there is no checkpoint to cache")
    #: Its instances are units of the run's executor; the task itself runs on the driver.
    placement = "units"

    settings_model = MackeyGlassConfig

    def check(self, cfg: MackeyGlassConfig, config: ConfigFile, ctx: RunContext) -> None:
        for i, model in enumerate(cfg.models):  # derived results ids are file names too
            for tau in cfg.data.taus[:1]:
                problem = id_problem(model.key) or id_problem(benchmark_id(cfg, model, tau))
                if problem:
                    raise ConfigError(f"{config.where(('models', i))}: models[{i}]: results "
                                      f"id {problem}")
        forecast_metrics(cfg.metrics, config)  # unknown names: ConfigError with file:line
        for i, model in enumerate(cfg.models):
            _check_fits_training(_model_params(model, config, i), cfg.data, config, i)
        check_data(cfg.data, config)  # a corrupt data file raises ChecksumError naming it
        return None

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        cfg, config = plan.settings, plan.config
        root = _root(cfg.data, config)
        device = ctx.device_for(cfg.device, config.where(("device",)), announce=True,
                                label=str(config.path or self.name))
        used = ctx.device_record(device, cfg.device)
        out_dir = out_dir_of(ctx)
        params = [_model_params(m, config, i) for i, m in enumerate(cfg.models)]
        resolved = cfg.model_dump()
        for m, p in zip(resolved["models"], params):
            m["params"] = p.model_dump()
        sweep = len(cfg.data.taus) > 1
        where = str(config.path or "<config>")
        found: dict[tuple[int, int], dict[str, Any]] = {}
        todo: list[tuple[ModelSettings, Any, int]] = []
        keys: list[tuple[int, int, Path, str]] = []
        for index, (model, p) in enumerate(zip(cfg.models, params)):
            for tau in cfg.data.taus:
                cache = out_dir / "entries" / f"{model.key}_tau{tau}.json"
                stamp = _fingerprint(resolved, index, tau)
                saved = _saved_entry(cache) if sweep else None
                if saved is not None and saved.get("fingerprint") == stamp:
                    found[index, tau] = saved["entry"]
                    continue
                todo.append((model, p, tau))
                keys.append((index, tau, cache, stamp))

        def done(j: int, entry: dict[str, Any]) -> None:  # the driver saves each entry
            index, tau, cache, stamp = keys[j]
            if sweep:
                write_json_atomic(cache, {"fingerprint": stamp, "entry": entry})
            found[index, tau] = entry

        if todo:
            desc = (f"{todo[0][0].key} tau={todo[0][2]}" if len(todo) == 1
                    else f"mackey_glass {len(todo)} entries")
            run_entries(todo, cfg.data, root, cfg.metrics, cfg.threads, where, quiet=ctx.quiet,
                        desc=desc, done=done, device=str(device), ctx=ctx)
        entries = [found[i, tau] for i in range(len(cfg.models)) for tau in cfg.data.taus]
        out = ([_single_results(e, cfg, m, resolved) for e, m in zip(entries, cfg.models)]
               if not sweep else [self._sweep_results(entries, cfg, resolved, out_dir)])
        rates = {tau: execution_rate(cfg, tau, root) for tau in cfg.data.taus}
        for results in out:  # one tau: its rate; a sweep: each tau's (dt differs)
            results.details[RATE] = rates[cfg.data.taus[0]] if not sweep else {
                "value": None, "unit": "Hz", "source": rates[cfg.data.taus[0]]["source"],
                "derivation": "one rate per tau (per_tau; its dt differs)",
                "per_tau": {str(t): r["value"] for t, r in rates.items()}}
        for results in out:
            results.provenance = {"device": used}
        return out

    @staticmethod
    def _sweep_results(entries: list[dict[str, Any]], cfg: MackeyGlassConfig,
                       resolved: dict[str, Any], out_dir: Path) -> Results:
        from neuromark.benchmarks.mackey_glass.plot import plot_smape_vs_tau  # numpy, matplotlib

        scores = {f"sMAPE[{e['model']},tau={e['tau']}]": Score(e["sMAPE"], e["sMAPE_se"], "%", False)
                  for e in entries}
        plot = plot_smape_vs_tau(entries, out_dir / "smape_vs_tau.png")
        flags = [f for e in entries for f in _flags(e)]
        return Results(scores=scores, benchmark=benchmark_info(cfg, benchmark_id(cfg, None, 0)),
                       config=resolved,
                       seeds={"models": {m.key: [m.seed + k for k in range(cfg.data.instances)]
                                         for m in cfg.models}},
                       details={"entries": entries, "flags": flags,
                                # relative to the run folder, where report.md lies
                                "plots": [f"{out_dir.name}/{plot.name}"]},
                       model=(model_block(cfg.models[0], resolved["models"][0])
                              if len(cfg.models) == 1 else None))  # several: in the scores


TASK = MackeyGlassTask()
