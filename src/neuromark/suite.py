"""Suites and the run path: which benchmarks a run holds, planned once, run once.

A benchmark config is a YAML mapping with a ``task`` key naming a registered task
(``neuromark list`` shows them); the task validates and runs the rest. A suite config has
a ``suite`` key listing benchmark configs (paths relative to the suite file)::

    suite: default
    entries:
      - ../mackey_glass/esn.yaml
      - ../mackey_glass/lstm.yaml

A run's path (``neuromark run``, ``system run``, ``qubo run``: :func:`run_suite`), each
step once and in this order, control never coming back to an earlier step:

1. **plan** (here): every config file is read once and suites expanded (:func:`expand`),
   every entry planned once (:func:`plan_expanded`: the task protocol of
   :mod:`neuromark.tasks.base`, under the run context of :mod:`neuromark.context`) before
   any folder is made; a config that fails leaves nothing behind.
2. **claim** (:mod:`neuromark.run_folder`): the output folder is made, checked, locked and
   its manifest written (:func:`~neuromark.run_folder.claim_run`).
3. **run** (:func:`run_plans`): the executor runs the plans, a suite entry on the driver
   or, under a distributed executor, as one unit elsewhere (planned there again: a plan
   may hold open files); each results file is stamped here (``provenance.run`` and
   ``provenance.executor``, ``requested``) and written by the run folder
   (:meth:`~neuromark.run_folder.RunFolder.save`), the one writer of results.
4. **report**: the caller's ``report`` (``neuromark run``'s: the summary table and
   ``report.md``, :mod:`neuromark.report.markdown`) reads the results just written, while
   the folder is still locked; also when the run is interrupted.
5. **submission** (:mod:`neuromark.system.track.submission`): when the folder holds
   system-track results, the system track writes their submission and judges their
   validity, which gives the exit status.

:func:`run_configs` is steps 1-4 for a caller holding a run context (tests, scripts);
:func:`validate_configs` is step 1 alone (``neuromark validate``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import Discriminator, Tag

from neuromark._threads import default_dtype_kept
from neuromark.benchmark_settings import derive_identity, stamp_derived
from neuromark.config import ConfigFile, StrictModel, find_config, load_config, validate
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.executors import Unit, is_local, make_executor
from neuromark.io_atomic import to_jsonable
from neuromark.provenance import stamp_provenance
from neuromark.registry import tasks
from neuromark.results import Results
from neuromark.run_folder import (
    RunFolder,
    claim_run,
    entry_stem,
    timestamped_dir,
)
from neuromark.suite_seeds import SeededEntry, seeded_copies
from neuromark.tasks.base import Task, require_task

#: ``(config, task, plan)`` of one suite entry, in run order.
Planned = tuple[ConfigFile, Task, Any]
#: The run's report: ``report(folder, written, wall_s)`` -> the report's path (or None).
Report = Callable[[Path, list[tuple[Path, Results]], float], Any]


def _entry_kind(value: Any) -> str:
    """A mapping entry is a seeded one, anything else a path: one member is validated, so
    an error names the entry's own problem (not the other member's 'a valid string')."""
    return "SeededEntry" if isinstance(value, dict) else "str"


SuiteEntry = Annotated[Annotated[str, Tag("str")] | Annotated[SeededEntry, Tag("SeededEntry")],
                       Discriminator(_entry_kind)]


class SuiteConfig(StrictModel):
    suite: str
    description: str = ""
    entries: list[SuiteEntry]


def project_root() -> Path:
    """The checkout root (holds ``configs/``) when installed from source, else the cwd."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "configs").is_dir() else Path.cwd()


def default_suite_path() -> Path:
    """``configs/suite/default.yaml`` in the working directory, else in the checkout."""
    local = Path("configs/suite/default.yaml")
    return local if local.is_file() else project_root() / "configs/suite/default.yaml"


def expand(paths: Sequence[str | Path], _within: tuple[Path, ...] = (), *,
           cache_root: Path | None = None) -> list[ConfigFile]:
    """Load configs, expanding suites into their entries (in order); a suite that includes
    itself, directly or through another suite, raises :class:`ConfigError` naming the cycle.
    ``cache_root`` (the run context's cache folder) is where ``cache:`` paths resolve."""
    out: list[ConfigFile] = []
    for path in map(find_config, paths):  # configs/... also in the checkout (shipped configs)
        config = load_config(path)
        config.cache_root = cache_root
        if "suite" in config.data:
            suite = validate(SuiteConfig, config.data, config)
            here = Path(path).resolve()
            for i, entry in enumerate(suite.entries):
                seeded = entry if isinstance(entry, SeededEntry) else None
                entry_path = Path(path).parent / (seeded.config if seeded else str(entry))
                if not entry_path.is_file():
                    raise ConfigError(f"{config.where(('entries', i))}: entries[{i}]: "
                                      f"no such config {entry_path}")
                if entry_path.resolve() in (*_within, here):
                    cycle = " -> ".join(str(p) for p in (*_within, here, entry_path.resolve()))
                    raise ConfigError(f"{config.where(('entries', i))}: entries[{i}]: suite "
                                      f"includes itself ({cycle})")
                if seeded is None:
                    out.extend(expand([entry_path], (*_within, here), cache_root=cache_root))
                    continue
                where = config.where(("entries", i))
                entry_config = load_config(entry_path)
                entry_config.cache_root = cache_root
                if "suite" in entry_config.data:
                    raise ConfigError(f"{where}: entries[{i}]: seeds apply to a config, not to "
                                      f"the suite {entry_path}")
                out.extend(seeded_copies(entry_config, seeded, where))
        else:
            out.append(config)
    return out


def task_of(config: ConfigFile) -> Task:
    """The registered task named by the config's ``task`` key (one that breaks the task
    protocol is refused, naming what it lacks: :func:`~neuromark.tasks.base.require_task`)."""
    name = config.data.get("task")
    if not isinstance(name, str):
        raise ConfigError(f"{config.where(('task',))}: missing or invalid 'task' key "
                          f"(one of: {', '.join(tasks.names())})")
    try:
        task = tasks.get(name)
    except KeyError as exc:
        raise ConfigError(f"{config.where(('task',))}: {exc}") from None
    return require_task(task)


def plan_configs(paths: Sequence[str | Path], ctx: RunContext) -> list[Planned]:
    """Expand and plan every config (and suite entry) once: ``[(config, task, plan)]``."""
    return plan_expanded(expand(paths, cache_root=ctx.cache_dir), ctx)


def plan_expanded(configs: Sequence[ConfigFile], ctx: RunContext) -> list[Planned]:
    """Plan each of ``configs`` (already expanded) once, in order, under ``ctx``."""
    planned = []
    for config in configs:
        task = task_of(config)
        derive_identity(config)  # a shipped id with changed settings gets its own id
        with entry_keeps_default_dtype(config, task):
            planned.append((config, task, task.plan(config, ctx)))
    return planned


def validate_configs(paths: Sequence[str | Path], ctx: RunContext | None = None) -> list[ConfigFile]:
    """Validate every config (and suite entry); returns the expanded list."""
    return [config for config, _, _ in plan_configs(paths, ctx or RunContext.build())]


def run_suite(paths: Sequence[str | Path], out_dir: Path | None, *, ctx: RunContext,
              report: Report, only_task: str | None = None, overwrite: bool = False,
              executor: str = "local", address: str | None = None,
              system: Path | None = None, allow_invalid: bool = False) -> int:
    """A whole run (the module notes' steps 1-5): plan ``paths`` once (each config of task
    ``only_task`` when given), on ``executor`` (``local`` or ``ray``, joining ``address``;
    made before planning: tasks check against it), into ``out_dir`` (None:
    ``results/<timestamp>``, made after planning); ``report`` (see :data:`Report`) reads
    the results while the folder is locked, then the closing line names the folder and
    the report. Returns the exit status: that of the system track's submission
    (:func:`~neuromark.system.track.submission.finish_submission`, ``system``: a system
    description YAML): 1 when a system result is INVALID unless ``allow_invalid``, else 0."""
    from neuromark.system.track.submission import finish_submission

    configs = expand(paths, cache_root=ctx.cache_dir)
    if only_task is not None:
        for config in configs:
            if config.data.get("task") != only_task:
                raise ConfigError(f"{config.where(('task',))}: this command runs task: {only_task}, "
                                  f"got {config.data.get('task')!r} (use 'neuromark run')")
    if address is not None and executor == "local":
        raise ConfigError("--address: only with --executor ray")
    built = make_executor(executor, address)
    try:
        ctx = ctx.replace(executor=built, executor_address=address)
        start = time.perf_counter()
        planned = plan_expanded(configs, ctx)  # each config once, before any folder is made
        out_dir = out_dir if out_dir is not None else timestamped_dir()
        with claim_run(out_dir, configs, overwrite=overwrite) as folder:
            written = run_plans(planned, folder, ctx, on_interrupt=lambda w: report(
                out_dir, w, time.perf_counter() - start))
            report_path = report(out_dir, written, time.perf_counter() - start)
            print(f"\n{len(written)} result file(s) in {out_dir}, every score in the report "
                  f"{report_path} ({time.perf_counter() - start:.1f} s)")
            return finish_submission(out_dir, system, allow_invalid=allow_invalid)
    finally:
        built.close()


def run_configs(paths: Sequence[str | Path], out_dir: Path | None, *,
                ctx: RunContext | None = None,
                quiet: bool | None = None, overwrite: bool = False,
                finish: Callable[[list[tuple[Path, Results]]], Any] | None = None,
                planned: list[Planned] | None = None,
                ) -> list[tuple[Path, Results]]:
    """Plan all configs first (each once), claim ``out_dir`` (:func:`claim_run`), then run
    the plans under ``ctx`` (default: built from the environment; its executor runs them):
    :func:`run_plans`. ``out_dir`` None: ``results/<timestamp>``, made after planning.
    ``finish`` (e.g. a report) runs on the written results while the folder is still locked,
    also when the run is interrupted (SIGINT, or SIGTERM as the CLI raises it), so the report
    is never stale. ``planned``: :func:`plan_configs` of ``paths`` under ``ctx``, when the
    caller has it. Returns ``[(results file, results)]`` in config order."""
    ctx = ctx if ctx is not None else RunContext.build()
    if quiet is not None:
        ctx = ctx.replace(quiet=quiet)
    planned = planned if planned is not None else plan_configs(paths, ctx)
    out_dir = out_dir if out_dir is not None else timestamped_dir()  # after planning
    with claim_run(out_dir, [config for config, _, _ in planned], overwrite=overwrite) as folder:
        written = run_plans(planned, folder, ctx, on_interrupt=finish)
        if finish is not None:
            finish(written)
    return written


def run_plans(planned: Sequence[Planned], folder: RunFolder, ctx: RunContext, *,
              on_interrupt: Callable[[list[tuple[Path, Results]]], Any] | None = None,
              ) -> list[tuple[Path, Results]]:
    """Run ``planned`` (the entries of ``folder``, same order) on ``ctx.executor``: entries
    of placement ``unit`` as one unit each under a distributed executor (submitted first),
    the others here, in order; each result is stamped (``provenance.executor`` and
    ``provenance.run``, the one place; ``requested``: the config as written) and saved by
    ``folder``. On an interrupt, ``on_interrupt`` gets what was written (when anything
    was) before the interrupt goes on. Returns ``folder.written()``."""
    executor = ctx.executor
    where_run = executor.info()  # the executor and its nodes, in every results file

    def record(index: int, results: Results) -> None:  # stamped here, written by the folder
        config, task, _ = planned[index]
        results.provenance = stamp_provenance(results.provenance, executor=where_run,
                                              run=ctx.provenance())
        results.requested = to_jsonable(config.data)  # the config as written
        stamp_derived(results, config)
        folder.save(index, results, task.name)

    remote = ([] if is_local(executor) else
              [i for i, (_, task, _) in enumerate(planned) if placement(task) == "unit"])
    units = []
    for i in remote:  # a unit runs into a temporary folder named as the entry's here
        config, task, _ = planned[i]
        stem = entry_stem(config)
        units.append(Unit(f"suite entry {stem}", str(config.path or "<config>"), run_entry_in_temp,
                          (task, config, stem, ctx.for_unit())))
    try:
        with contextlib.closing(executor.run(units)) as outcomes:  # submitted now
            for index, (config, task, plan) in enumerate(planned):
                if index in remote:
                    continue
                entry_ctx = ctx.replace(out_dir=folder.entry_dir(index))
                with entry_keeps_default_dtype(config, task):
                    for results in task.run(plan, entry_ctx):
                        record(index, results)
            for outcome in outcomes:
                index = remote[units.index(outcome.unit)]
                results_list, files = outcome.value
                folder.write_files(index, files)
                for results in results_list:
                    results.details.setdefault("executor", {
                        "name": executor.name, "node": outcome.node, "wall_s": outcome.wall_s})
                    record(index, results)
    except KeyboardInterrupt:  # SIGINT or SIGTERM: the report covers what finished
        if on_interrupt is not None and folder.written():
            on_interrupt(folder.written())
        raise
    return folder.written()


def entry_keeps_default_dtype(config: ConfigFile, task: Task) -> contextlib.AbstractContextManager[None]:
    """Run one suite entry; when it changed torch's default dtype (process-wide: the next
    entries would inherit it and fail, or count bytes, as if it were theirs), restore it
    and raise :class:`ConfigError` naming this entry."""
    return default_dtype_kept(
        lambda before, after: f"{config.path or task.name}: this suite entry changed torch's "
                              f"default dtype from {before} to {after} (torch.set_default_dtype in "
                              f"its model or plugin code); it was restored so that later entries "
                              f"are not changed by it. Give the model its own dtype instead")


def placement(task: Task) -> str:
    """Where a task runs under a distributed executor: ``"units"`` (on the driver, handing
    its own units to the executor), ``"driver"`` (on the driver, whole: the system track,
    whose LoadGen timings and power meters belong to this machine), or ``"unit"`` (the whole
    suite entry is one unit; the default). A task declares its ``placement``."""
    given = getattr(task, "placement", "unit")
    if given not in ("units", "driver", "unit"):
        raise ConfigError(f"task {getattr(task, 'name', task)!r}: placement {given!r} is not "
                          f"one of unit, units, driver")
    return given


def run_entry_in_temp(task: Task, config: ConfigFile, stem: str, ctx: RunContext
                      ) -> tuple[list[Results], dict[str, bytes]]:
    """Run a whole suite entry where a unit runs (another node, maybe), into a temporary
    folder: planned there again (a plan may hold open files), run under ``ctx`` (the run's
    context, local executor); returns its results and its artefacts (``{relative path:
    bytes}``) for the driver to write."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="neuromark-unit-") as tmp:
        folder = Path(tmp) / stem
        unit_ctx = ctx.replace(out_dir=folder)
        results = list(task.run(task.plan(config, unit_ctx), unit_ctx))
        for r in results:  # the machine it ran on, not the driver's
            r.provenance = stamp_provenance(r.provenance)
        files = {p.relative_to(folder).as_posix(): p.read_bytes()
                 for p in sorted(folder.rglob("*")) if p.is_file()} if folder.is_dir() else {}
    return results, files
