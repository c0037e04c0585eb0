"""``neuromark list``: the shipped configs (paths that work from the current folder),
the benchmark families, every registry's entries (tasks, metrics, datasets, models,
adapters, systems under test, meters, solvers, ...) each with the family that declared it
(``neuromark`` for the kernel's own), and the postprocessors (decoding rules)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from neuromark import registry
from neuromark.processors.decoding import RULES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("list", help="list registered benchmarks and components")
    parser.set_defaults(func=_list)


def _list(args: argparse.Namespace) -> int:
    from neuromark.suite import project_root

    configs = sorted(_shown(p) for p in (project_root() / "configs").rglob("*.yaml"))
    print("benchmark configs:\n  " + ("\n  ".join(configs) or "(none)"))
    print("families:")
    for family in registry.families():
        print(f"  {family.name:<18s} {family.summary}")
    for reg in registry.REGISTRIES.values():
        entries = [f"{name} ({reg.family_of(name)})" for name in reg.names()]
        print(f"{reg.kind}:\n  " + (", ".join(entries) or "(none)"))
    print("postprocessors (eval.postprocessor: decoding rules):\n  " + ", ".join(RULES))
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when below it, else absolute: either way a
    path that works from here."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return os.fspath(path.resolve())
