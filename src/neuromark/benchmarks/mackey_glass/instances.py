"""Mackey-Glass instances: the settings of one model and its data, and the executor units
that train and forecast one instance each (see :mod:`neuromark.benchmarks.mackey_glass.task`)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from neuromark._progress import progress
from neuromark._threads import torch_threads
from neuromark.benchmarks.mackey_glass.forecasters import LSTM_FORECASTER, Forecaster, ForecasterModel
from neuromark.config import ConfigFile, Seed, StrictModel
from neuromark.context import RunContext
from neuromark.errors import ConfigError, MetricError, ModelOutputError
from neuromark.executors import Unit, is_local
from neuromark.metrics.functional.correctness import smape
from neuromark.metrics.functional.stats import standard_error
from neuromark.metrics.names import build_metrics, metric_names
from neuromark.registry import models
from neuromark.results import Results
from neuromark.tasks.evaluation import evaluate
from neuromark.training.family import registered

#: The metrics measured on the forecast when the config names none (NeuroBench's complexity
#: metrics); sMAPE is not among them: the task scores it from the forecast itself.
DEFAULT_METRICS = ("footprint", "parameter_count", "connection_sparsity", "activation_sparsity",
                   "synaptic_operations")


class DataSettings(StrictModel):
    taus: list[int] = Field(default_factory=lambda: [17], min_length=1)
    instances: int = Field(30, gt=0)
    length: float = Field(20.0, gt=0, description="instance length in Lyapunov times")
    shift: float = Field(0.5, gt=0, description="shift between instances in Lyapunov times")
    dt: float | None = Field(None, gt=0, description="if set, must equal the series' L/75")
    offsets: Literal["rounded", "truncated"] = Field(
        "rounded", description="instance start k * shift * 75 rounded (ours) or truncated "
                               "(NeuroBench's MackeyGlass dataset: int(start_offset))")
    root: str | None = None


class ModelSettings(StrictModel):
    name: str  # a registered forecaster (esn, lstm; :func:`forecaster_for`)
    label: str | None = None
    seed: Seed = 0
    params: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.label or self.name


def forecaster_for(name: str, where: str = "<config>") -> Any:
    """The registered model ``name`` as a Mackey-Glass
    :class:`~neuromark.benchmarks.mackey_glass.forecasters.Forecaster` (the entry itself, or the one it
    carries as ``forecaster``, or, for the kernel's spike classifier ``lstm``, this family's
    LSTM forecaster: a config's ``lstm`` is the LSTM baseline in either task);
    :class:`ConfigError` at ``where`` naming the forecasters registered when the name is
    unknown or the entry is no forecaster."""
    from neuromark.networks.spike_classifiers import SpikeClassifierFamily

    def role(entry: Any) -> Any:
        found = entry if isinstance(entry, Forecaster) else getattr(entry, "forecaster", None)
        if found is None and isinstance(entry, SpikeClassifierFamily) and entry.kind == "lstm":
            found = LSTM_FORECASTER
        return found if isinstance(found, Forecaster) else None

    found = role(models.get(name)) if name in models else None
    if found is not None:
        return found
    known = ", ".join(n for n, e in registered(models) if role(e) is not None)
    problem = ("is registered but is no forecaster (it needs params_model and build(params, seed))"
               if name in models else "is no registered model")
    raise ConfigError(f"{where}: model {name!r} {problem}; the Mackey-Glass forecasters: {known}")


def build_model(model: ModelSettings, params: Any, seed: int):
    """A fresh module of the registered forecaster ``model.name``."""
    return forecaster_for(model.name).build(params, seed)


def forecast_metrics(names: Sequence[str] = DEFAULT_METRICS, config: ConfigFile | None = None) -> list:
    """Fresh instances of the metrics measured on the forecast phase, by registered name
    (:func:`neuromark.metrics.names.build_metrics`: unknown names raise ConfigError with the
    config's file and line)."""

    return build_metrics(names, config, ("metrics",))


def evaluate_instance(module: Any, inputs: Any, targets: Any,
                      metrics: Sequence[str] = DEFAULT_METRICS, device: Any = "cpu",
                      ctx: RunContext | None = None) -> tuple[Results | None, Any]:
    """Forecast the test half as one batch with the runner on ``device``, measuring
    ``metrics`` (registered names); returns (results, predictions on the CPU). Score the predictions with
    :func:`neuromark.metrics.functional.correctness.smape`.

    A forecast that turns non-finite feeds NaN/inf into the model's own layers, which the
    runner's probes refuse to count (or into a metric that does not define NaN). Then the
    forecast is repeated on a copy of the trained model without the runner and
    ``(None, predictions)`` is returned: the caller scores it (non-finite steps count 200)
    and leaves its other figures out. Any other failure is raised. ``ctx``: the run's
    context (coverage, counting path); None: the defaults.
    """
    import copy

    import torch
    from torch.utils.data import DataLoader, TensorDataset

    captured: list[Any] = []

    def capture(output: Any) -> Any:
        captured.append(output.detach().cpu().clone())
        return output

    module.forecast = True
    trained = copy.deepcopy(module)
    loader = DataLoader(TensorDataset(inputs, targets), batch_size=len(inputs), shuffle=False)
    try:
        results = evaluate(ctx if ctx is not None else RunContext(), ForecasterModel(module), loader,
                           forecast_metrics(metrics), postprocessors=[capture], quiet=True,
                           device=device, trained=True)  # fitted (ESN readout) or trained here
    except (MetricError, ModelOutputError):  # NaN refused; anything else is a real failure
        trained.eval()
        with torch.inference_mode():
            predictions = trained(inputs.to(device)).cpu()
        if bool(torch.isfinite(predictions).all()):
            raise
        return None, predictions
    return results, captured[0]


def run_instance(model: ModelSettings, params: Any, tau: int, settings: DataSettings,
                 root: Path | None, k: int, metrics: Sequence[str] = DEFAULT_METRICS,
                 threads: int = 1, device: str = "cpu", ctx: RunContext | None = None
                 ) -> dict[str, Any]:
    """Train and forecast instance ``k`` (one executor unit, on ``threads`` torch threads,
    on ``device``: a resolved device name such as ``cuda:0``):
    its sMAPE, complexity figures (None when the probes could not count them), metric
    info, divergence record (None when finite), final LSTM loss, ``dt`` and ``L``."""
    import torch

    from neuromark.benchmarks.mackey_glass.series import MackeyGlass

    with torch_threads(threads):
        data = MackeyGlass(tau, k, length=settings.length, shift=settings.shift, root=root,
                           offsets=settings.offsets)
        module = build_model(model, params, seed=model.seed + k).to(device)
        x_train, y_train = data.train_split()
        fit = module.fit(x_train.to(device), y_train.to(device))
        x_test, y_test = data.test_split()
        res, predictions = evaluate_instance(module, x_test, y_test, metrics, device, ctx)
        out: dict[str, Any] = {
            "sMAPE": smape(predictions, y_test),  # non-finite steps count 200 (the bound)
            "complexity": None, "info": {}, "diverged": None,
            "loss": fit[-1] if isinstance(fit, list) and fit else None,  # a loss curve
            "dt": data.dt, "lyapunov_time": data.lyapunov_time}
        if res is not None:
            names = metric_names(metrics)
            out["complexity"] = {name: res[name] for name in names if name in res}
            out["info"] = {name: {"unit": res.scores[name].unit,
                                  "higher_is_better": res.scores[name].higher_is_better}
                           for name in names if name in res}
        if not bool(torch.isfinite(predictions).all()):
            first = int((~torch.isfinite(predictions)).reshape(-1).nonzero()[0])
            out["diverged"] = {"instance": k, "first_nonfinite_step": first,
                               "complexity_measured": res is not None}
    return out


def instance_units(model: ModelSettings, params: Any, tau: int, settings: DataSettings,
                   root: Path | None, metrics: Sequence[str], threads: int, where: str,
                   device: str = "cpu", ctx: RunContext | None = None) -> list[Unit]:
    """The independent units of one (model, tau) entry: one per instance (``ctx``: the
    run's context as a unit sees it, :meth:`RunContext.for_unit`)."""
    return [Unit(f"{model.key} tau={tau} instance {k}", where, run_instance,
                 (model, params, tau, settings, root, k, tuple(metrics), threads, device, ctx),
                 num_cpus=threads)
            for k in range(settings.instances)]


def aggregate(model: ModelSettings, tau: int, outs: Sequence[dict[str, Any]],
              nodes: Sequence[str] = ()) -> dict[str, Any]:
    """The (model, tau) entry from its per-instance outputs (in instance order)."""
    smapes = [o["sMAPE"] for o in outs]
    complexity = [o["complexity"] for o in outs if o["complexity"] is not None]
    info = next((o["info"] for o in outs if o["complexity"] is not None), {})
    n = len(smapes)
    out = {"model": model.key, "tau": tau, "sMAPE": sum(smapes) / n,
           "sMAPE_se": standard_error(smapes),
           "per_instance_sMAPE": smapes,
           "diverged": [o["diverged"] for o in outs if o["diverged"] is not None],
           "complexity": _mean_complexity(complexity) if complexity else {},
           "per_instance_complexity": complexity, "metric_info": info,
           "dt": outs[-1]["dt"], "lyapunov_time": outs[-1]["lyapunov_time"],
           "seeds": [model.seed + k for k in range(n)]}
    losses = [o["loss"] for o in outs if o["loss"] is not None]
    if losses:
        out["final_train_loss"] = losses
    if nodes:
        out["nodes"] = list(nodes)
    return out


def run_entries(jobs: Sequence[tuple[ModelSettings, Any, int]], settings: DataSettings,
                root: Path | None, metrics: Sequence[str], threads: int, where: str, *,
                quiet: bool, desc: str, done: Any = None, device: str = "cpu",
                ctx: RunContext | None = None) -> list[dict[str, Any]]:
    """Every instance of the (model, params, tau) ``jobs`` on the run's executor
    (``ctx.executor``; None: in this process); each entry is aggregated (and handed to
    ``done(index, entry)``, e.g. to save it) as soon as its instances are in. Returns the
    entries in the order of ``jobs``."""
    ctx = ctx if ctx is not None else RunContext()
    executor = ctx.executor
    units: list[Unit] = []
    owner: dict[int, tuple[int, int]] = {}  # id(unit) -> (job index, instance)
    for j, (model, params, tau) in enumerate(jobs):
        for k, unit in enumerate(instance_units(model, params, tau, settings, root, metrics,
                                                threads, where, device, ctx.for_unit())):
            owner[id(unit)] = (j, k)
            units.append(unit)
    outs: list[dict[int, Any]] = [{} for _ in jobs]
    entries: list[dict[str, Any] | None] = [None] * len(jobs)
    bar = progress(total=len(units), desc=desc, unit="instance", quiet=quiet)
    smapes: list[float] = []
    try:
        with contextlib.closing(executor.run(units)) as outcomes:
            for outcome in outcomes:
                j, k = owner[id(outcome.unit)]
                outs[j][k] = (outcome.value, outcome.node)
                smapes.append(outcome.value["sMAPE"])
                bar.set_postfix(sMAPE=f"{sum(smapes) / len(smapes):.2f}")
                bar.update()
                if len(outs[j]) == settings.instances:
                    model, _, tau = jobs[j]
                    ordered = [outs[j][i] for i in range(settings.instances)]
                    nodes = [node for _, node in ordered] if not is_local(executor) else ()
                    entries[j] = aggregate(model, tau, [o for o, _ in ordered], nodes)
                    if done is not None:
                        done(j, entries[j])
    finally:
        bar.close()
    return [e for e in entries if e is not None]


def run_instances(model: ModelSettings, params: Any, tau: int, settings: DataSettings,
                  root: Path | None, *, quiet: bool, desc: str,
                  metrics: Sequence[str] = DEFAULT_METRICS, threads: int = 1) -> dict[str, Any]:
    """Train and forecast every instance of one (model, tau) in this process;
    returns per-instance figures and aggregates (:func:`aggregate`).

    ``complexity`` holds the mean over instances of each of ``metrics`` (named as in the
    results); ``metric_info`` their unit and direction, as their metric classes give them.
    """
    return run_entries([(model, params, tau)], settings, root, metrics, threads, "<api>",
                       quiet=quiet, desc=desc)[0]


def _mean_complexity(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean over instances of each figure (dicts such as synaptic_operations by key)."""
    out: dict[str, Any] = {}
    for name in rows[0]:
        values = [r[name] for r in rows]
        if isinstance(values[0], dict):
            out[name] = {k: sum(v[k] for v in values) / len(values) for k in values[0]}
        else:
            out[name] = sum(values) / len(values)
    return out
