"""The benchmark (task) check: the contract every built-in benchmark passes, for a plugin's.

:func:`check_task` takes a task (its registry name or the object) and a small config
(a YAML file, or a mapping written to one) and checks, in order:

1. the protocol: a non-empty ``name`` (the config's ``task:``), a ``placement`` of
   :data:`neuromark.tasks.base.PLACEMENTS`, ``plan`` and ``run`` (the tasks registry's
   own check, :func:`neuromark.registry.task_contract`);
2. ``plan(config, ctx)``: returns a plan that keeps ``config``; runs nothing (no file is
   written in the cache, the output folder or the config's folder); a copy of the config
   with an unknown top-level key is refused with :class:`~neuromark.errors.ConfigError`
   naming that copy's ``file:line``;
3. the run, through the suite's one write path (:func:`neuromark.suite.run_configs`) into
   a temporary run folder under a :class:`~neuromark.context.RunContext` of its own cache:
   every result keeps the results contract (:mod:`neuromark.testing.results`: scores,
   benchmark and model identity, device, effective config), every file the suite wrote
   keeps it (requested config, provenance, ``provenance.run``, artefacts present inside the
   run folder), and what the task returned equals what is read back;
4. with ``repeat=True``, determinism: a second run (new plan, new run folder, the same
   cache, so trained checkpoints are reused) gives equal scores, except those named in
   ``vary`` (wall-clock figures).

Failures raise :class:`~neuromark.testing.results.ContractError` (an ``AssertionError``)
naming every problem. pytest is not needed; any test runner works.

How a plugin author uses it in their own test::

    from neuromark.testing.task_check import check_task
    from my_plugin import CoinTask

    def test_coin_keeps_the_benchmark_contract(tmp_path):
        config = {"task": "coin", "benchmark": {"id": "coin-heads", "version": "1.0"},
                  "flips": 50}
        check = check_task(CoinTask(), config, tmp_path, repeat=True)
        assert check.results[0].scores["heads"].value > 0

The built-in benchmarks pass it in ``tests/test_task_check.py``, one tiny config
each; ``docs/extending.md``'s task examples pass it in ``tests/test_docs_examples.py``.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuromark.config import ConfigFile, load_config, parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.registry import task_contract, tasks
from neuromark.results import Results
from neuromark.suite import run_configs
from neuromark.tasks.base import plan_config
from neuromark.testing.guard import contract_check
from neuromark.testing.results import (
    ContractError,
    raise_problems,
    round_trip_problems,
    same_json,
    task_results_problems,
    written_results_problems,
)

#: The key a copy of the config gets to check that unknown keys are refused.
UNKNOWN_KEY = "neuromark_testing_unknown_key"


@dataclass
class TaskCheck:
    """What :func:`check_task` ran: the task, the plan, the run folder, the results
    (as written) and their files, and the second run's results (``repeat``)."""

    task: Any
    config: ConfigFile
    plan: Any
    out_dir: Path
    results: list[Results] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    repeated: list[Results] = field(default_factory=list)


def _task_of(task: Any) -> Any:
    return tasks.get(task) if isinstance(task, str) else task


def _config_file(config: str | os.PathLike[str] | Mapping[str, Any], tmp: Path) -> ConfigFile:
    """The config as a loaded file: a path is loaded; a mapping is written as YAML to
    ``tmp/config.yaml`` first (so that errors name its lines)."""
    if isinstance(config, Mapping):
        import yaml

        path = tmp / "config.yaml"
        path.write_text(yaml.safe_dump(dict(config), sort_keys=False), encoding="utf-8")
        return load_config(path)
    return load_config(Path(config))


def _files_under(*folders: Path) -> dict[Path, int]:
    """Every file below ``folders`` with its modification time (ns)."""
    found = {}
    for folder in folders:
        if folder.is_dir():
            for p in folder.rglob("*"):
                if p.is_file():
                    found[p] = p.stat().st_mtime_ns
    return found


def protocol_problems(task: Any) -> list[str]:
    """What is wrong with ``task``'s protocol (name, placement, plan and run): the tasks
    registry's one check, :func:`neuromark.registry.task_contract`."""
    problem = task_contract(task)
    return [f"it needs {problem}"] if problem is not None else []


@contract_check
def check_plan(task: Any, config: ConfigFile, ctx: RunContext) -> Any:
    """Plan ``config`` and check the plan's contract (see the module); returns the plan."""
    watched = [ctx.cache_dir, config.path.parent if config.path else None, ctx.out_dir]
    before = _files_under(*[w for w in watched if w is not None])
    plan = task.plan(config, ctx)
    problems = []
    try:
        if plan_config(plan) is not config:
            problems.append("the plan keeps another config than the one it was made from")
    except TypeError as exc:
        problems.append(str(exc))
    after = _files_under(*[w for w in watched if w is not None])
    changed = sorted(str(p) for p, t in after.items() if before.get(p) != t)
    if changed:
        problems.append(f"plan() wrote files (it must run nothing): {', '.join(changed[:5])}"
                        + (" ..." if len(changed) > 5 else ""))
    if ctx.out_dir is not None and ctx.out_dir.exists():
        problems.append(f"plan() made the output folder {ctx.out_dir}")
    raise_problems(f"{task.name}: plan", problems)
    return plan


@contract_check
def check_unknown_key(task: Any, config: ConfigFile, ctx: RunContext) -> str:
    """``config`` with :data:`UNKNOWN_KEY` appended, parsed in memory as if it were a file
    beside the config (so relative paths hold; nothing is written), must be refused by
    ``plan`` with a :class:`ConfigError` naming that key's ``file:line``; returns the
    message."""
    if config.path is None:
        raise ContractError("the unknown-key check needs a config read from a file")
    text = config.path.read_text(encoding="utf-8")
    text = text if text.endswith("\n") or not text else text + "\n"
    line = text.count("\n") + 1
    copy = config.path.with_name(f".{config.path.stem}.unknown-key.yaml")  # never written
    bad = parse_yaml(text + f"{UNKNOWN_KEY}: 1\n", copy)
    try:
        task.plan(bad, ctx)
    except ConfigError as exc:
        message = str(exc)
    else:
        raise ContractError(f"{task.name}: plan() accepted an unknown top-level key "
                            f"{UNKNOWN_KEY!r}; validate the config with a StrictModel "
                            f"(neuromark.config.validate) so typos are refused")
    where = f"{copy}:{line}"
    if where not in message or UNKNOWN_KEY not in message:
        raise ContractError(f"{task.name}: plan() refused the unknown key {UNKNOWN_KEY!r} "
                            f"without naming it and {where}: {message}")
    return message


def run_once(task: Any, config: ConfigFile, plan: Any, ctx: RunContext, out_dir: Path
             ) -> list[tuple[Path, Results]]:
    """Run ``plan`` through the suite's write path into ``out_dir``."""
    return run_configs([config.path or "<config>"], out_dir, ctx=ctx, quiet=True,
                       planned=[(config, task, plan)])


@contract_check
def check_task(task: Any, config: str | os.PathLike[str] | Mapping[str, Any],
                    tmp: str | os.PathLike[str], *, ctx: RunContext | None = None,
                    repeat: bool = False, vary: Collection[str] = (),
                    model: bool | None = None, unknown_key: bool = True) -> TaskCheck:
    """Check ``task`` on ``config`` (see the module docstring); returns what ran.

    Args:
        task: a registry name of :data:`neuromark.registry.tasks`, or the task object.
        config: a YAML file, or a mapping (written to ``tmp/config.yaml``).
        tmp: an empty scratch folder (pytest's ``tmp_path``): the cache and run folders.
        ctx: the run context; default: quiet, cache ``tmp/cache``, no environment.
        repeat: run twice and compare the scores (determinism).
        vary: score names allowed to differ between the two runs (wall-clock figures).
        model: whether the results score a model (see
            :func:`~neuromark.testing.results.task_results_problems`); None: inferred.
        unknown_key: check that an unknown top-level key is refused (a task whose config
            is not a mapping of its own keys may pass False, saying why in its test).
    """
    tmp = Path(tmp)
    task = _task_of(task)
    raise_problems(f"task {getattr(task, 'name', task)!r}", protocol_problems(task))
    loaded = _config_file(config, tmp)
    if loaded.data.get("task") not in (None, task.name):
        raise ContractError(f"{loaded.path}: task: {loaded.data.get('task')!r} is not the "
                            f"checked task {task.name!r}")
    base = ctx if ctx is not None else RunContext.build(quiet=True, cache_dir=tmp / "cache",
                                                        environ={})
    loaded.cache_root = base.cache_dir
    out_dir = tmp / "run"
    plan = check_plan(task, loaded, base.replace(out_dir=out_dir / "entry"))
    if unknown_key:
        check_unknown_key(task, loaded, base)
    track = getattr(task, "track", "algorithm")
    written = run_once(task, loaded, plan, base, out_dir)
    if not written:
        raise ContractError(f"{task.name}: the run returned no results")
    problems: list[str] = []
    settings = getattr(plan, "settings", None)
    for path, res in written:
        problems += [f"{path.name}: {p}" for p in task_results_problems(
            res, config=loaded, settings=settings, track=track, model=model)]
        problems += written_results_problems(path, config=loaded, run=base.provenance())
        problems += round_trip_problems(res, path)
    raise_problems(f"{task.name} on {loaded.path}", problems)
    check = TaskCheck(task, loaded, plan, out_dir, [r for _, r in written],
                           [p for p, _ in written])
    if repeat:
        again = run_once(task, loaded, task.plan(loaded, base), base, tmp / "run-again")
        check.repeated = [r for _, r in again]
        problems = []
        if [p.name for p, _ in again] != [p.name for p in check.files]:
            problems.append(f"the second run wrote {[p.name for p, _ in again]}, the first "
                            f"{[p.name for p in check.files]}")
        for first, second in zip(check.results, check.repeated):
            for name in sorted(set(first.scores) | set(second.scores)):
                if name in vary:
                    continue
                a, b = first.scores.get(name), second.scores.get(name)
                if a is None or b is None or not same_json(a.value, b.value):
                    problems.append(f"score {name!r} differs between two runs: "
                                    f"{a.value if a else None!r} vs {b.value if b else None!r}")
        raise_problems(f"{task.name}: determinism", problems)
    return check
