"""The run context: run-wide settings, built once and passed to every task and the runner.

One frozen :class:`RunContext` holds what the command line (or a Python caller) decides
for a whole run: the device override, the cache folder, the coverage mode of
``synaptic_operations``, the counting path and its memory budget, the executor, quietness
and the output folder. :meth:`RunContext.build` takes flags first, then environment
defaults (read here, once; no layer below reads them), then the built-in defaults:

=================  ==========================  ===============================  ============
field              flag                        environment default              default
=================  ==========================  ===============================  ============
``device``         ``--device``                ``$NEUROMARK_DEVICE``            each config's
``cache_dir``      ``--cache-dir``             ``$NEUROMARK_CACHE_DIR``,        ``~/.cache/
                                               ``$XDG_CACHE_HOME/neuromark``    neuromark``
``coverage``       ``--coverage``              ``$NEUROMARK_COVERAGE``          ``error``
``counting_path``  (API)                       ``$NEUROMARK_COUNTING_PATH``     ``auto``
``memory_budget``  (API, bytes)                ``$NEUROMARK_COUNT_BUDGET_MB``   2 GiB
``executor``       ``--executor/--address``    --                               local
``allow_long``     ``--allow-long``            --                               False
=================  ==========================  ===============================  ============

Every result of a run records :meth:`RunContext.provenance` under ``provenance.run``.

Two chores of every task live here too (the task kit, :mod:`neuromark.tasks.base`):
:meth:`RunContext.run_units` runs independent :class:`~neuromark.executors.Unit` s on the
run's executor and returns their values in unit order; :meth:`RunContext.artefact` is the
path of a file a task writes beside its results.

Example:
    >>> ctx = RunContext.build(device="cpu", coverage="warn", environ={})
    >>> ctx.provenance()["coverage"]
    'warn'
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuromark._progress import progress
from neuromark.errors import ConfigError
from neuromark.executors import LocalExecutor, Unit, UnitFailed

#: Coverage modes of ``synaptic_operations`` (unconsumed parameters fail, or are reported).
COVERAGE_MODES = ("error", "warn")
#: Counting paths: numba kernels where they apply (``auto``) or torch for every tensor.
COUNTING_PATHS = ("auto", "torch")
#: Memory the torch counting path may keep per batch, all layers together: 2 GiB.
DEFAULT_BUDGET_BYTES = 2 * 1024**3
#: What a task that writes files says when its context has no output folder.
NO_OUT_DIR = ("this task writes artefacts (plots, logs): run it with a context that has an "
              "output folder, RunContext.build(out_dir=...)")


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$NEUROMARK_CACHE_DIR``, else ``$XDG_CACHE_HOME/neuromark``, else
    ``~/.cache/neuromark`` (absolute)."""
    env = os.environ if environ is None else environ
    own = env.get("NEUROMARK_CACHE_DIR")
    if own:
        return Path(own).expanduser().absolute()
    xdg = env.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "neuromark").absolute()


def _local_executor() -> Any:

    return LocalExecutor()


def _name(executor: Any) -> str:
    return str(getattr(executor, "name", type(executor).__name__))


def _budget_from(raw: str) -> int:
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = -1.0
    if not megabytes >= 0 or megabytes == float("inf"):
        raise ConfigError(f"$NEUROMARK_COUNT_BUDGET_MB must be a number of MiB >= 0, got {raw!r}")
    return int(megabytes * 1024**2)


@dataclass(frozen=True)
class RunContext:
    """Run-wide settings (see the module docstring for where each comes from).

    Attributes:
        device: device override for every config (``cpu``, ``cuda``, ``cuda:N``, ``auto``),
            or None: each config's ``device:`` key.
        cache_dir: the cache folder (``cache:`` paths, checkpoints, corpora).
        coverage: ``error`` or ``warn``, or None: each config's own setting, else ``error``.
        counting_path: ``auto`` or ``torch`` (how synaptic operations are counted).
        memory_budget: bytes the torch counting path may keep per batch (all layers).
        executor: where independent units run (local or Ray).
        quiet: no progress bars or progress lines.
        out_dir: where the task writes its artefacts (plots, logs): the suite entry's
            folder inside the run folder; None outside a run.
        executor_address: the Ray address joined (provenance only).
        allow_long: run entries whose estimated work exceeds their task's stated limit
            (e.g. a closed-loop entry of more than 10^6 agent steps); without it such an
            entry is refused at planning, naming its estimate.
    """

    device: str | None = None
    cache_dir: Path = field(default_factory=default_cache_dir)
    coverage: str | None = None
    counting_path: str = "auto"
    memory_budget: int = DEFAULT_BUDGET_BYTES
    executor: Any = field(default_factory=_local_executor, compare=False)
    quiet: bool = False
    out_dir: Path | None = None
    executor_address: str | None = None
    allow_long: bool = False

    def __post_init__(self) -> None:
        from neuromark.devices import device_problem

        if self.device is not None and device_problem(self.device):
            raise ConfigError(f"--device: {device_problem(self.device)}")
        if self.coverage is not None and self.coverage not in COVERAGE_MODES:
            raise ConfigError(f"--coverage must be 'error' or 'warn', got {self.coverage!r}")
        if self.counting_path not in COUNTING_PATHS:
            raise ConfigError(f"counting_path is {self.counting_path!r}; expected one of "
                              f"{list(COUNTING_PATHS)}")
        if not isinstance(self.memory_budget, int) or self.memory_budget < 0:
            raise ConfigError(f"memory_budget must be >= 0 bytes, got {self.memory_budget!r}")

    @classmethod
    def build(cls, *, device: str | None = None, cache_dir: str | Path | None = None,
              coverage: str | None = None, counting_path: str | None = None,
              memory_budget: int | None = None, executor: Any = None, quiet: bool = False,
              out_dir: Path | None = None, executor_address: str | None = None,
              allow_long: bool = False,
              environ: Mapping[str, str] | None = None) -> RunContext:
        """A context from flags (None: not given), then environment defaults (``environ``,
        default ``os.environ``), then built-in defaults. Bad values raise
        :class:`ConfigError` naming the flag or variable."""
        env = os.environ if environ is None else environ
        if device is None and env.get("NEUROMARK_DEVICE"):
            device = env["NEUROMARK_DEVICE"]
            from neuromark.devices import device_problem

            if device_problem(device):
                raise ConfigError(f"$NEUROMARK_DEVICE: {device_problem(device)}")
        if coverage is None and env.get("NEUROMARK_COVERAGE"):
            coverage = env["NEUROMARK_COVERAGE"]
            if coverage not in COVERAGE_MODES:
                raise ConfigError(f"$NEUROMARK_COVERAGE must be 'error' or 'warn', got {coverage!r}")
        if counting_path is None:
            counting_path = env.get("NEUROMARK_COUNTING_PATH") or "auto"
            if counting_path not in COUNTING_PATHS:
                raise ConfigError(f"$NEUROMARK_COUNTING_PATH is {counting_path!r}; expected one "
                                  f"of {list(COUNTING_PATHS)}")
        if memory_budget is None:
            raw = env.get("NEUROMARK_COUNT_BUDGET_MB")
            memory_budget = _budget_from(raw) if raw else DEFAULT_BUDGET_BYTES
        cache = (Path(cache_dir).expanduser().absolute() if cache_dir is not None
                 else default_cache_dir(env))
        return cls(device=device, cache_dir=cache, coverage=coverage,
                   counting_path=counting_path, memory_budget=int(memory_budget),
                   executor=executor if executor is not None else _local_executor(),
                   quiet=quiet, out_dir=out_dir, executor_address=executor_address,
                   allow_long=bool(allow_long))

    def replace(self, **changes: Any) -> RunContext:
        """A copy with ``changes`` (e.g. ``out_dir`` of one suite entry)."""
        return dataclasses.replace(self, **changes)

    def for_unit(self) -> RunContext:
        """The context a whole suite entry runs under where a unit runs (another process or
        node): the local executor, no progress output."""
        return dataclasses.replace(self, executor=_local_executor(), quiet=True)

    def device_for(self, configured: str, where: str, *, label: str = "",
                   announce: bool = False) -> Any:
        """The ``torch.device`` of a config whose ``device:`` key (at ``where``) says
        ``configured``; ``--device`` overrides it. An impossible device raises
        :class:`ConfigError` naming ``--device`` or ``where``."""
        from neuromark.devices import config_device

        return config_device(configured, where, override=self.device, label=label,
                             announce=announce)

    def device_requested(self, configured: str) -> str:
        """How the device was asked for (``--device NAME`` or the config's name)."""
        return f"--device {self.device}" if self.device is not None else configured

    def device_record(self, device: Any, configured: str) -> dict[str, Any]:
        """What a result records of the device a task ran on (``provenance.device``:
        ``{"used", "type", "name", "requested"}``, :func:`neuromark.devices.device_provenance`),
        ``configured`` being the config's ``device:`` (``--device`` overrides it)."""
        from neuromark.devices import device_provenance

        return device_provenance(device, self.device_requested(configured))

    def coverage_for(self, configured: str | None = None) -> str:
        """The coverage mode: a config's own ``configured`` value, else ``--coverage``,
        else ``error``."""
        return configured or self.coverage or "error"

    def apply_coverage(self, metrics: list[Any], configured: str | None = None) -> None:
        """Set the coverage mode (:meth:`coverage_for`) of the metrics that check it."""
        mode = self.coverage_for(configured)
        for metric in metrics:
            if hasattr(metric, "coverage"):
                metric.coverage = mode

    def run_units(self, units: Sequence[Unit], *, aggregate: Callable[[list[Any]], Any] | None = None,
                  desc: str | None = None, unit: str = "unit", executor: Any = None) -> Any:
        """Run independent ``units`` on the run's executor (``ctx.executor``, or ``executor``)
        and return their values in the order of ``units`` (not of completion), or
        ``aggregate(values)`` when given.

        ``desc`` shows a progress bar of ``len(units)`` steps named ``desc`` (counted in
        ``unit``; none when ``quiet``). A unit that raises stops the run (the units not yet
        finished are cancelled) and its error propagates as the executor reports it, naming
        the unit: :class:`~neuromark.executors.UnitFailed` from a process pool or Ray; the
        unit's own exception (a ``ConfigError`` stays one), with a note naming the unit, in
        this process. An executor that ends without the outcome of every unit, or yields one
        for a unit it was not given, raises :class:`UnitFailed` naming it.

        Example:
            >>> RunContext(executor=LocalExecutor()).run_units(
            ...     [Unit("2^3", "<doc>", pow, (2, 3)), Unit("3^2", "<doc>", pow, (3, 2))])
            [8, 9]
        """
        units = list(units)
        runner = executor if executor is not None else self.executor
        index = {id(u): i for i, u in enumerate(units)}
        values: dict[int, Any] = {}
        bar = progress(total=len(units), desc=desc, unit=unit, quiet=self.quiet) if desc else None
        try:
            with contextlib.closing(runner.run(units)) as outcomes:
                for outcome in outcomes:
                    i = index.get(id(outcome.unit))
                    if i is None or i in values:
                        what = "twice" if i is not None else "though it was not given that unit"
                        raise UnitFailed(f"executor {_name(runner)}: yielded the outcome of unit "
                                         f"{getattr(outcome.unit, 'name', outcome.unit)} {what}")
                    values[i] = outcome.value
                    if bar is not None:
                        bar.update()
        finally:
            if bar is not None:
                bar.close()
        missing = [u for i, u in enumerate(units) if i not in values]
        if missing:
            raise UnitFailed(f"{missing[0].config}: unit {missing[0].name} gave no outcome "
                             f"(executor {_name(runner)}; "
                             f"{len(missing)} of {len(units)} units missing)")
        ordered = [values[i] for i in range(len(units))]
        return aggregate(ordered) if aggregate is not None else ordered

    def artefact(self, name: str | os.PathLike[str]) -> Path:
        """The path of a file ``name`` (relative, e.g. ``"plots/loss.png"``) a task writes
        beside its results: under :attr:`out_dir`, its folder created. An absolute name, or
        one that leaves :attr:`out_dir` (``..``, a link out), raises ``ValueError`` naming it;
        a context without an output folder raises ``ValueError`` saying how to give one."""
        if self.out_dir is None:
            raise ValueError(NO_OUT_DIR)
        rel = Path(name)
        if not str(name) or rel.is_absolute() or rel.anchor or ".." in rel.parts \
                or rel == Path("."):
            raise ValueError(f"artefact {str(name)!r}: give a file name relative to the output "
                             f"folder {self.out_dir}, inside it (no absolute path, no '..')")
        path = self.out_dir / rel
        root = self.out_dir.resolve()
        if not path.resolve().is_relative_to(root):
            raise ValueError(f"artefact {str(name)!r}: {path} leads out of the output folder "
                             f"{self.out_dir} (a link?)")
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def provenance(self) -> dict[str, Any]:
        """What every result records under ``provenance.run``."""
        name = getattr(self.executor, "name", type(self.executor).__name__)
        return {"device": self.device, "coverage": self.coverage_for(),
                "counting_path": self.counting_path, "memory_budget": self.memory_budget,
                "executor": name, "cache_dir": str(self.cache_dir), "allow_long": self.allow_long}
