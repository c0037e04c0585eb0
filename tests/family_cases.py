"""The cases the central tests run, gathered from every family's ``cases`` module (found
through ``neuromark.registry.families()``, so no family is named here), plus the kernel's
own task cases (``classification``, ``system``), which live here.

The tables and the keys of their cases are those of ``docs/extending.md`` ("The family's
cases"): :data:`TASK_KEYS`, :data:`FLAG_KEYS`, :data:`DATASET_KEYS`, :data:`SUT_KEYS`.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from neuromark.registry import KERNEL, Family, families

#: The tables every family's cases module defines, and what each names.
TABLES = {"TASK_CASES": "tasks", "DATASET_CASES": "datasets", "SUT_CASES": "suts"}
#: Keys of what a task case returns: the config (a mapping, or a YAML file for the kernel's
#: classification case), whether check_task repeats it, optional modules it needs,
#: ``prepare()`` (writes what the config reads, called once the needs are there) and what
#: ``neuromark run`` with every flag must show (:data:`FLAG_KEYS`).
TASK_KEYS = {"config", "repeat", "needs", "prepare", "flags"}
#: ``device`` (default True: the config gets ``device: cuda`` and the task resolves it through
#: the run context), ``evaluated`` (default True: it evaluates through ``evaluate(ctx, ...)``),
#: ``coverage`` (a metric that checks coverage got ``--coverage``), ``units`` and
#: ``evaluations`` (how many, when fixed), ``caches`` (paths under ``--cache-dir`` after the
#: run) and ``check(results, cache)`` (the case's own assertions).
FLAG_KEYS = {"device", "evaluated", "coverage", "units", "evaluations", "caches", "check"}
#: A data set case: ``write(root)`` (the tiny file set), ``damage`` (the file the damage tests
#: break), ``entry()`` (for an entry tasks use without registering it), ``split``,
#: ``options``, ``shape``, ``dtype``, ``num_classes``, ``synth`` (options of a small
#: ``synthesize``), ``no_synth`` (why an entry with a generator has no synth case),
#: ``synth_programs`` (executables the generator needs), ``sample(entry, root)`` (a reader of
#: its own), ``needs`` (optional modules) and ``extra`` (name -> ``check(entry, root, tmp_path)``).
DATASET_KEYS = {"write", "damage", "entry", "split", "options", "shape", "dtype", "num_classes", "synth",
                "no_synth", "synth_programs", "sample", "needs", "extra"}
#: A SUT case: the ``options`` of its smallest build, ``needs`` (optional modules).
SUT_KEYS = {"options", "needs"}


@dataclass(frozen=True)
class Case:
    """One case: the entry it is for, the family that declared it, and the case itself."""

    name: str
    family: str
    case: Any


def cases_module(family: Family) -> ModuleType:
    """``<family.package>.cases``; a family without one fails naming it."""
    try:
        return importlib.import_module(f"{family.package}.cases")
    except ModuleNotFoundError as exc:
        if exc.name != f"{family.package}.cases":
            raise
        raise AssertionError(f"family {family.name!r} ({family.package}) has no cases module: every "
                             f"family has a cases.py with {', '.join(TABLES)} (docs/extending.md)") from None


def gather(table: str, kernel: dict[str, Any] | None = None) -> dict[str, Case]:
    """Every family's ``table`` (and the kernel's own cases), by entry name; a name two
    families declare fails naming both."""
    found = {name: Case(name, KERNEL, case) for name, case in (kernel or {}).items()}
    for family in families():
        module = cases_module(family)
        declared = getattr(module, table, None)
        assert isinstance(declared, dict), f"{module.__name__}: {table} is not a dict (got {declared!r})"
        for name, case in declared.items():
            if name in found:
                raise AssertionError(f"{table}[{name!r}] is declared by family {found[name].family!r} "
                                     f"and by family {family.name!r}")
            found[name] = Case(name, family.name, case)
    return found


def skip_without(needs: tuple[str, ...] | list[str]) -> None:
    """Skip unless every module of ``needs`` imports."""
    for module in needs:
        pytest.importorskip(module, reason=f"the case needs {module}")


def skip_without_programs(programs: tuple[str, ...] | list[str]) -> None:
    """Skip unless every executable of ``programs`` is on the PATH."""
    for program in programs:
        if shutil.which(program) is None:
            pytest.skip(f"{program} not installed")


# --- the kernel's own tasks ------------------------------------------------------------------

def classification_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """The toy spike corpus with a small SNN trained one epoch (``test_devices.toy_config``);
    its checkpoint goes to the cache, so the second run reuses it."""
    from test_devices import toy_config

    (tmp_path / "data").mkdir(exist_ok=True)
    path = toy_config(tmp_path / "data")
    path.write_text(path.read_text().replace("checkpoint: snn.pt",
                                             "checkpoint: cache:checkpoints/toy-snn.pt"))

    def check(results: list[dict[str, Any]], cache: Path) -> None:
        assert not (path.parent / "snn.pt").exists(), "the checkpoint went beside the config"

    return {"config": path, "repeat": True,
            "flags": {"coverage": True, "caches": ["checkpoints/toy-snn.pt"], "check": check}}


def system_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """The ESN system under test in the single-stream scenario, 64 queries (early stopping's
    p90 needs them). Not repeated: latencies are wall-clock. It takes its devices from the
    SUT's options; its energy estimate counts operations through ``evaluate`` under the run's
    context."""

    def check(results: list[dict[str, Any]], cache: Path) -> None:
        assert results[0]["scores"]["energy_estimate"]["value"]

    return {"config": {"task": "system", "benchmark": {"id": "esn-ss", "version": "1.0"},
                       "sut": {"name": "esn", "options": {"samples": 16, "threads": 1}},
                       "timing": {"warmup": 2},
                       "loadgen": {"min_query_count": 64, "min_duration_s": 0},
                       "estimate": {}},
            "needs": ("mlperf_loadgen",),
            "flags": {"device": False, "check": check}}


KERNEL_TASK_CASES: dict[str, Callable[[Path, Path, Any], dict[str, Any]]] = {
    "classification": classification_case, "system": system_case}


def task_cases() -> dict[str, Case]:
    """Every task's case: the families' and the kernel's."""
    return gather("TASK_CASES", KERNEL_TASK_CASES)


def run_task_case(name: str, tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """The case of task ``name`` built (skipped when it needs a module absent here), its keys
    checked."""
    built = task_cases()[name].case(tmp_path, cache, monkeypatch)
    unknown = set(built) - TASK_KEYS
    assert not unknown, f"task case {name!r}: unknown keys {sorted(unknown)} (known: {sorted(TASK_KEYS)})"
    unknown = set(built.get("flags", {})) - FLAG_KEYS
    assert not unknown, (f"task case {name!r}: unknown flags keys {sorted(unknown)} "
                         f"(known: {sorted(FLAG_KEYS)})")
    skip_without(built.get("needs", ()))
    if built.get("prepare") is not None:
        built["prepare"]()
    return built
