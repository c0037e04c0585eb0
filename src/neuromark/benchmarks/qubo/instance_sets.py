"""The library instances a QUBO config names (``instances: {files, folder}``), each with its
target: the energy of its optimum, from ``<name>.opt.sol`` beside the file, else the
known-value table matched by the instance's content (:func:`~neuromark.benchmarks.qubo.known.known_value`;
a file named like a row whose content differs gets no value, and the error says so)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from neuromark.benchmarks.qubo.known import known_value, name_mismatch
from neuromark.benchmarks.qubo.library import (
    FORMATS,
    instance_format,
    instance_name,
    load_instance,
    read_solution,
)
from neuromark.benchmarks.qubo.repeat import check_optimum
from neuromark.errors import ConfigError, DataError


@dataclass(frozen=True)
class LibraryTarget:
    """One instance of a sweep: its name (the file name without ``.xz``) and file, size n,
    edge density (edges over node pairs; 0 for a QUBO that is not MIS-shaped), its
    optimum's ``energy`` (``x^T Q x``, the solvers' cost: without the file's constant
    offset) and where that came from."""

    name: str
    path: Path
    n: int
    density: float
    energy: float
    source: str


def _is_instance(path: Path) -> bool:
    try:
        instance_format(path)
    except DataError:
        return False
    return path.is_file()


def instance_files(files: list[str], folder: str | None, base: Path,
                   where: Callable[[tuple[Any, ...]], str]) -> list[Path]:
    """The instance files of ``files`` and of ``folder`` (every file with a known instance
    suffix, sorted by name), relative to ``base``; ``where(loc)`` names a config key."""
    paths = []
    for i, f in enumerate(files):
        path = (base / f).resolve()
        if not path.is_file():
            raise ConfigError(f"{where(('instances', 'files', i))}: instances.files[{i}]: no "
                              f"such file {path}")
        paths.append(path)
    if folder is not None:
        root = (base / folder).resolve()
        if not root.is_dir():
            raise ConfigError(f"{where(('instances', 'folder'))}: instances.folder: no such "
                              f"folder {root}")
        found = sorted(p for p in root.iterdir() if _is_instance(p))
        if not found:
            raise ConfigError(f"{where(('instances', 'folder'))}: instances.folder: {root} has "
                              f"no instance file ({', '.join(sorted(FORMATS))}, optionally .xz)")
        paths += found
    return paths


def library_targets(files: list[str], folder: str | None, base: Path,
                    where: Callable[[tuple[Any, ...]], str]) -> list[LibraryTarget]:
    """Every named instance read (checked) with its optimum; duplicate names and instances
    without an optimum are a :class:`ConfigError` before any solving."""
    targets: dict[str, LibraryTarget] = {}
    for path in instance_files(files, folder, base, where):
        name = path.name[:-3] if path.name.endswith(".xz") else path.name  # C125-9.qs
        stem = instance_name(path)
        if name in targets:
            raise ConfigError(f"{where(('instances',))}: instances: two files named {name!r}: "
                              f"{targets[name].path} and {path}")
        inst = load_instance(path)
        sol = path.with_name(f"{stem}.opt.sol")
        known = known_value(inst)
        if sol.is_file():
            x = read_solution(sol, inst.n)
            energy, source = check_optimum(inst, x, str(sol)) - inst.offset, str(sol)
        elif known is not None:  # a proven optimum, or the best known (its source says which)
            energy = known.energy(inst) - inst.offset
            source = f"known_optima.csv row {known.instance}: {known.describe()}"
        else:
            why = name_mismatch(inst)
            raise ConfigError(f"{where(('instances',))}: instances: no optimum for {path}: put "
                              f"{sol.name} beside it (a QOBLIB node list)"
                              + (f"; {why}" if why else ""))
        density = inst.workload().density
        targets[name] = LibraryTarget(name, path, inst.n, round(density, 6), energy, source)
    return list(targets.values())


@lru_cache(maxsize=4)
def library_workload(path: str) -> Any:
    """The :class:`~neuromark.benchmarks.qubo.workloads.Workload` of an instance file (cached)."""
    return load_instance(Path(path)).workload()
