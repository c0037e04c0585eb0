"""Suites and config dispatch: which benchmarks exist and how a config file is run.

A benchmark config is a YAML mapping with a ``task`` key naming a registered task
(``neuromark list`` shows them); the task validates and runs the rest. A suite config has
a ``suite`` key listing benchmark configs (paths relative to the suite file)::

    suite: default
    entries:
      - ../mackey_glass/esn.yaml
      - ../mackey_glass/lstm.yaml

Every config is planned once before any work (:func:`plan_configs`: the task protocol of
:mod:`neuromark.tasks.base`, under the run context of :mod:`neuromark.context`); then the
output folder is claimed (:func:`~neuromark.run_folder.claim_folder`: writable, locked,
with a manifest that lets a rerun of the same configs resume) and the plans run. Every
results file is written under the folder by the driver, named by benchmark id and model
label (never a path).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import Discriminator, Tag

from neuromark._threads import default_dtype_kept
from neuromark.config import ConfigFile, StrictModel, find_config, load_config, validate
from neuromark.context import RunContext
from neuromark.errors import ConfigError, DataError
from neuromark.executors import Unit, is_local
from neuromark.io_atomic import same_file
from neuromark.registry import tasks
from neuromark.results import (
    Results,
    atomic_path,
    path_in,
    results_name,
    stamp_provenance,
    to_jsonable,
)
from neuromark.run_folder import (  # noqa: F401 - re-exported
    LOCK_NAME,
    MANIFEST_FORMAT,
    MANIFEST_NAME,
    check_folder,
    claim_folder,
    differing_keys,
    entry_stem,
    resolved_configs,
)
from neuromark.suite_seeds import SeededEntry, seeded_copies
from neuromark.tasks.base import Task, as_task


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
    """The registered task named by the config's ``task`` key."""
    name = config.data.get("task")
    if not isinstance(name, str):
        raise ConfigError(f"{config.where(('task',))}: missing or invalid 'task' key "
                          f"(one of: {', '.join(tasks.names())})")
    try:
        task = tasks.get(name)
    except KeyError as exc:
        raise ConfigError(f"{config.where(('task',))}: {exc}") from None

    return as_task(task)


def plan_configs(paths: Sequence[str | Path], ctx: RunContext
                 ) -> list[tuple[ConfigFile, Task, Any]]:
    """Expand and plan every config (and suite entry) once: ``[(config, task, plan)]``."""
    planned = []
    for config in expand(paths, cache_root=ctx.cache_dir):
        task = task_of(config)
        with entry_keeps_default_dtype(config, task):
            planned.append((config, task, task.plan(config, ctx)))
    return planned


def validate_configs(paths: Sequence[str | Path], ctx: RunContext | None = None) -> list[ConfigFile]:
    """Validate every config (and suite entry); returns the expanded list."""
    return [config for config, _, _ in plan_configs(paths, ctx or RunContext.build())]


def timestamped_dir(base: str | Path = "results") -> Path:
    """``base/<YYYYmmdd-HHMMSS>``, made unique if it exists already."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(base) / stamp
    n = 1
    while out.exists():
        out = Path(base) / f"{stamp}-{n}"
        n += 1
    out.mkdir(parents=True)
    return out


def run_configs(paths: Sequence[str | Path], out_dir: Path | None, *,
                ctx: RunContext | None = None,
                quiet: bool | None = None, overwrite: bool = False,
                finish: Callable[[list[tuple[Path, Results]]], Any] | None = None,
                planned: list[tuple[ConfigFile, Task, Any]] | None = None,
                ) -> list[tuple[Path, Results]]:
    """Plan all configs first (each once), claim ``out_dir`` (:func:`claim_folder`), then run
    the plans under ``ctx`` (default: built from the environment); each result is saved under
    ``out_dir`` (None: ``results/<timestamp>``, made after planning) as ``<id>.json``, with
    ``provenance.run`` (the context) stamped here, the one place. ``finish`` (e.g. the
    report) runs on the written results while the folder is still locked, also when the run
    is interrupted (SIGINT, or SIGTERM as the CLI raises it), so the report is never stale.
    ``planned``: :func:`plan_configs` of ``paths`` under ``ctx``, when the caller has it."""
    ctx = ctx if ctx is not None else RunContext.build()
    if quiet is not None:
        ctx = ctx.replace(quiet=quiet)
    planned = planned if planned is not None else plan_configs(paths, ctx)
    configs = [config for config, _, _ in planned]
    out_dir = out_dir if out_dir is not None else timestamped_dir()  # after planning
    executor = ctx.executor
    with claim_folder(out_dir, configs, overwrite=overwrite):
        written: list[tuple[Path, Results]] = []
        order: dict[Path, int] = {}
        where_run = executor.info()  # the executor and its nodes, in every results file

        def save(index: int, config: ConfigFile, task: Task, results: Results) -> None:
            try:  # <benchmark id>--<model label>.json: models of one benchmark side by side
                target = path_in(out_dir, results_name(results.benchmark.id, results.model))
            except DataError as exc:
                raise ConfigError(f"{config.path or task.name}: {exc}") from None
            if config.path is not None and same_file(target, config.path):
                raise ConfigError(f"{config.path}: its results file {target} would be the config "
                                  f"itself; neuromark never writes over its own inputs (not even "
                                  f"with --overwrite): choose another --out")
            if target in order:
                label = results.model.label if results.model is not None else None
                raise ConfigError(f"{config.path or task.name}: benchmark id "
                                  f"{results.benchmark.id!r} with model label {label!r} is "
                                  f"produced twice (also by {configs[order[target]].path or '<config>'}); "
                                  f"its results would overwrite {target}. Give each model its "
                                  f"own label (model.label)")
            results.provenance = stamp_provenance(results.provenance, executor=where_run,
                                                  run=ctx.provenance())
            results.requested = to_jsonable(config.data)  # the config as written
            results.save(target, replace=overwrite)
            written.append((target, results))
            order[target] = index

        def report() -> None:
            if finish is not None and written:
                finish(sorted(written, key=lambda w: order[w[0]]))

        remote = ([] if is_local(executor) else
                  [i for i, (_, task, _) in enumerate(planned) if placement(task) == "unit"])
        units = [Unit(f"suite entry {entry_stem(configs[i])}", str(configs[i].path or "<config>"),
                      run_entry_in_temp,
                      (planned[i][1], configs[i], entry_stem(configs[i]), ctx.for_unit()))
                 for i in remote]
        try:
            with contextlib.closing(executor.run(units)) as outcomes:  # submitted now
                for index, (config, task, plan) in enumerate(planned):
                    if index in remote:
                        continue
                    entry_ctx = ctx.replace(out_dir=out_dir / entry_stem(config))
                    with entry_keeps_default_dtype(config, task):
                        for results in task.run(plan, entry_ctx):
                            save(index, config, task, results)
                for outcome in outcomes:
                    index = remote[units.index(outcome.unit)]
                    results_list, files = outcome.value
                    write_files(out_dir / entry_stem(configs[index]), files)
                    for results in results_list:
                        results.details.setdefault("executor", {
                            "name": executor.name, "node": outcome.node,
                            "wall_s": outcome.wall_s})
                        save(index, configs[index], planned[index][1], results)
        except KeyboardInterrupt:  # SIGINT or SIGTERM: the report covers what finished
            report()
            raise
        if finish is not None:
            finish(sorted(written, key=lambda w: order[w[0]]))
    return written


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


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Write a unit's artefacts under ``folder`` (each atomically: temp file + rename);
    a path leaving the folder raises :class:`DataError`."""
    for rel, data in files.items():
        target = (folder / rel).resolve()
        if not target.is_relative_to(folder.resolve()):
            raise DataError(f"{folder}: a unit's artefact {rel!r} lies outside its folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            tmp.write_bytes(data)
