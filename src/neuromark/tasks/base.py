"""The task protocol: ``plan(config, ctx) -> plan`` validates once, ``run(plan, ctx)`` executes.

A task is a registry entry (``tasks``) with:

- ``name``: its config's ``task:`` value;
- ``placement``: where it runs under a distributed executor (``"unit"``: the whole suite
  entry is one unit, the default; ``"units"``: on the driver, handing its own units to
  ``ctx.executor``; ``"driver"``: on the driver, whole, e.g. the system track, whose timings
  and meters belong to this machine);
- ``plan(config, ctx)``: check the config fully, without running anything; raise
  :class:`~neuromark.errors.ConfigError` naming file and line; return a plan that keeps
  ``config`` (attribute ``config``) and whatever validation built, so that nothing is
  validated twice;
- ``run(plan, ctx) -> list[Results]``: run it, writing artefacts under ``ctx.out_dir``;
- optional ``train(plan, ctx, *, checkpoint=None, retrain=True)``: train the checkpoint the
  task caches (:mod:`neuromark.training`) and return its
  :class:`~neuromark.training.checkpoints.Prepared` (``neuromark train CONFIG``); a task
  without one says why in ``train_note``;
- optional ``example_input(plan, prepared, choice, where)``: for ``neuromark export``, when
  ``train`` returns several models (e.g. one per session), the one to export, the input
  batch to check it on and a dict the export report adds; ``choice`` is ``--session``
  (None: the task's default).

:class:`TaskBase` is the base the built-in tasks share: subclasses set
:attr:`TaskBase.settings_model` and implement :meth:`TaskBase.check` and
:meth:`TaskBase.execute`. :func:`require_task` is where a registered object meets the
protocol: one without ``plan`` or ``run`` is refused, naming the task and what it lacks
(the one check, :func:`neuromark.registry.task_contract`). :func:`plan_and_run` plans and
runs one config outside the suite (scripts, tests).

The task kit (issue 46), so that a task writes only what is its own:

- **default plan.** Set :attr:`TaskBase.settings_model` (the config's pydantic model;
  an unknown key, an old spelling included, is a ``file:line`` error naming the allowed
  keys) and override :meth:`TaskBase.check` for the task's own checks. ``plan()``
  validates, checks the settings' ``device`` and returns ``TaskPlan(config, settings,
  parts=check(...))``, whose ``plan.NAME`` reads a part, else a setting;
- **units.** ``ctx.run_units(units, aggregate=None, desc=None, unit="unit")``
  (:meth:`RunContext.run_units`) runs independent :class:`~neuromark.executors.Unit` s on the
  run's executor and returns their values in unit order, or ``aggregate(values)``;
- **results.** :func:`task_results` builds the :class:`~neuromark.results.Results` with the
  model identity, the device (``ctx.device_record(device, settings.device)``) and the
  effective config as keyword arguments without defaults, so none is forgotten;
- **files.** ``ctx.artefact(name)`` (:meth:`RunContext.artefact`) is the path of a file the
  task writes under ``ctx.out_dir``, its folder made; names that leave it are refused.

A minimal task::

    class Doubling(TaskBase):
        name = "doubling"
        settings_model = DoublingConfig          # a StrictModel with task, benchmark, device

        def check(self, settings, config, ctx):
            return {"factor": 2}                 # plan.parts

        def execute(self, plan, ctx):
            values = ctx.run_units([Unit(f"x={x}", str(plan.config.path), double, (x,))
                                    for x in plan.settings.inputs])
            return [task_results({"sum": Score(sum(values))}, benchmark=plan.benchmark.info(""),
                                 model=None, effective=plan.settings, device=None)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from neuromark.config import ConfigFile
from neuromark.config import validate as validate_settings
from neuromark.context import NO_OUT_DIR, RunContext
from neuromark.identity import BenchmarkIdentity, ModelIdentity
from neuromark.metrics.execution_rate import attach
from neuromark.registry import TASK_PLACEMENTS, RegistryContractError, task_contract
from neuromark.results import Results, Score

#: Where a task runs under a distributed executor (see the module docstring).
PLACEMENTS = TASK_PLACEMENTS


@runtime_checkable
class Task(Protocol):
    """A benchmark protocol driven by a config file."""

    name: str
    placement: str

    def plan(self, config: ConfigFile, ctx: RunContext) -> Any:
        """Check ``config`` fully without running it; the plan keeps ``config``."""

    def run(self, plan: Any, ctx: RunContext) -> list[Results]:
        """Run a plan, writing any artefacts (plots, logs) under ``ctx.out_dir``."""


def require_task(task: Any) -> Task:
    """``task`` when it keeps the task protocol (a ``name``, a ``placement``, callable
    ``plan`` and ``run``: :func:`neuromark.registry.task_contract`, the one check of it),
    else :class:`~neuromark.registry.RegistryContractError` naming the task and what it
    lacks (a task of the first protocol, ``validate`` without ``plan``, among them)."""
    problem = task_contract(task)
    if problem is not None:
        name = getattr(task, "name", None) or type(task).__name__
        raise RegistryContractError(f"task {name!r} ({type(task).__module__}."
                                    f"{type(task).__qualname__}) breaks the tasks contract: it "
                                    f"needs {problem}")
    return task


@dataclass
class TaskPlan:
    """A validated config: the file, its typed settings and what validation built.

    ``plan.NAME`` reads ``parts[NAME]`` (what :meth:`TaskBase.check` built, e.g. the
    resolved torch device), else the settings' ``NAME`` (``plan.benchmark``)."""

    config: ConfigFile
    settings: Any
    parts: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("config", "settings", "parts"):
            raise AttributeError(name)
        if name in self.parts:
            return self.parts[name]
        return getattr(self.settings, name)


def plan_config(plan: Any) -> ConfigFile:
    """The config a plan was made from."""
    config = getattr(plan, "config", None)
    if not isinstance(config, ConfigFile):
        raise TypeError(f"a task's plan must keep its config (attribute 'config'), got "
                        f"{type(plan).__name__}")
    return config


class TaskBase:
    """Base of the built-in tasks: the default :meth:`plan` (``settings_model`` +
    :meth:`check`) and :meth:`run` (:meth:`execute`, then the execution rate)."""

    name: ClassVar[str] = ""
    placement: ClassVar[str] = "unit"
    #: Why ``neuromark train`` has nothing to train for this task (a task without ``train``).
    train_note: ClassVar[str] = ""
    #: "algorithm" (every result gets the model execution rate,
    #: :mod:`neuromark.metrics.execution_rate`) or "system" (LoadGen, QUBO: none).
    track: ClassVar[str] = "algorithm"

    #: The pydantic model (a :class:`~neuromark.components.StrictModel`) of the task's
    #: config; the default :meth:`plan` validates the whole config against it.
    settings_model: ClassVar[type[Any] | None] = None

    def plan(self, config: ConfigFile, ctx: RunContext) -> Any:
        """The default opening every task shares, once: validate ``config`` against
        :attr:`settings_model` (errors name file and line), check the settings' ``device``
        (:meth:`check_device`), then the task's own :meth:`check`; returns
        ``TaskPlan(config, settings, parts)`` with the parts :meth:`check` returned. A task
        without :attr:`settings_model` overrides ``plan``."""
        if self.settings_model is None:
            raise NotImplementedError(f"task {self.name!r}: set settings_model (the pydantic "
                                      "model of its config) or override plan()")
        settings = self.settings_of(config)
        self.check_device(settings, config, ctx)
        parts = self.check(settings, config, ctx)
        return TaskPlan(config, settings, dict(parts) if parts else {})

    def settings_of(self, config: ConfigFile) -> Any:
        """``config`` validated against :attr:`settings_model`;
        :class:`~neuromark.errors.ConfigError` names file and line (an unknown key: the
        keys allowed there)."""
        assert self.settings_model is not None
        return validate_settings(self.settings_model, config.data, config)

    def check_device(self, settings: Any, config: ConfigFile, ctx: RunContext) -> None:
        """Where the settings have a ``device`` (a config's ``device:`` key), the device is
        possible here (``--device`` overrides it): CUDA asked for where there is none is a
        :class:`~neuromark.errors.ConfigError` naming ``device:``'s file and line."""
        configured = getattr(settings, "device", None)
        if isinstance(configured, str):
            ctx.device_for(configured, config.where(("device",)))

    def check(self, settings: Any, config: ConfigFile, ctx: RunContext) -> dict[str, Any] | None:
        """The task's own checks of its validated ``settings``, without running anything
        (resolve models and metrics, find files; raise
        :class:`~neuromark.errors.ConfigError` naming file and line): returns what they
        built, kept as the plan's ``parts`` (None: nothing)."""
        return None

    def execute(self, plan: Any, ctx: RunContext) -> list[Results]:
        raise NotImplementedError

    def run(self, plan: Any, ctx: RunContext) -> list[Results]:
        """Run ``plan`` (from :meth:`plan`) under ``ctx``: :meth:`execute`, then, on the
        algorithm track, every result's model execution rate."""
        if not isinstance(ctx, RunContext):
            raise TypeError(f"{self.name}.run(plan, ctx): ctx must be a RunContext, got "
                            f"{type(ctx).__name__} (plan_and_run(task, config, out_dir) plans "
                            "and runs a config)")
        results = self.execute(plan, ctx)
        return with_execution_rate(results, plan) if self.track == "algorithm" else results


def plan_and_run(task: Task, config: ConfigFile, out_dir: str | Path | None = None, *,
                 quiet: bool = False, ctx: RunContext | None = None) -> list[Results]:
    """Plan ``config`` and run it outside the suite (no results file is written): under
    ``ctx``, default a context built from the environment defaults
    (:meth:`RunContext.build`) with ``quiet`` and ``out_dir`` (the folder the task writes
    its artefacts in) — for scripts and tests; ``neuromark run`` goes through the suite."""
    if ctx is None:
        ctx = RunContext.build(quiet=quiet, out_dir=Path(out_dir) if out_dir is not None else None)
    return require_task(task).run(task.plan(config, ctx), ctx)


def task_results(scores: dict[str, Score], *, benchmark: BenchmarkIdentity,
                 model: ModelIdentity | None, effective: Any, device: Mapping[str, Any] | None,
                 seeds: dict[str, Any] | None = None, details: dict[str, Any] | None = None,
                 provenance: Mapping[str, Any] | None = None, flags: Sequence[str] = (),
                 artefacts: Sequence[str] = ()) -> Results:
    """A task's :class:`~neuromark.results.Results` with what the results contract requires
    and a task cannot leave out (keyword-only, no defaults):

    - ``model``: the model's identity (:func:`neuromark.results.model_identity`), or None
      for a run that names no model;
    - ``effective``: the effective config, the settings the task ran with (defaults filled
      in, paths resolved): a mapping, or a pydantic model (``model_dump()``); the suite
      stamps the requested one (the YAML's data) beside it (``config = {requested,
      effective}``);
    - ``device``: the device it ran on (``provenance.device``, from
      :meth:`RunContext.device_record`), or None for a task that runs no torch device (the
      system track).

    ``provenance`` adds task-specific entries (``device`` goes in beside them); ``flags``
    and ``artefacts`` (paths relative to the run folder) are typed fields of the results.
    ``scores``, ``effective``, ``seeds`` and ``details`` are kept, not copied.
    """
    config = effective.model_dump() if hasattr(effective, "model_dump") else effective
    if not isinstance(config, Mapping):
        raise TypeError(f"task_results: effective must be the effective config (a mapping or "
                        f"a pydantic model), got {type(effective).__name__}")
    record = dict(provenance or {})
    if device is not None:
        record["device"] = device
    return Results(scores=scores, benchmark=benchmark, config=config,
                   seeds=seeds if seeds is not None else {},
                   details=details if details is not None else {}, provenance=record,
                   model=model, flags=list(flags), artefacts=list(artefacts))


def out_dir_of(ctx: RunContext) -> Path:
    """The folder a task writes its artefacts in (``ctx.out_dir``: the suite entry's folder);
    a context without one raises ``ValueError`` (give ``RunContext(out_dir=...)``)."""
    if ctx.out_dir is None:
        raise ValueError(NO_OUT_DIR)
    return ctx.out_dir


def with_execution_rate(results: list[Results], plan: Any) -> list[Results]:
    """Every result with its model execution rate (the one place every algorithm-track
    task's results pass; :func:`neuromark.metrics.execution_rate.attach`)."""
    settings = plan.settings if isinstance(plan, TaskPlan) else getattr(plan, "settings", None)
    return [attach(r, settings) for r in results]
