"""``neuromark list``: registered tasks, metrics, datasets, models, adapters, systems under
test, meters, solvers and energy profiles."""

from __future__ import annotations

import argparse

from neuromark import registry


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("list", help="list registered benchmarks and components")
    parser.set_defaults(func=_list)


def _list(args: argparse.Namespace) -> int:
    from neuromark.suite import project_root

    configs = sorted(p.relative_to(project_root()).as_posix()
                     for p in (project_root() / "configs").rglob("*.yaml"))
    print("benchmark configs:\n  " + ("\n  ".join(configs) or "(none)"))
    for reg in (registry.tasks, registry.metrics, registry.datasets, registry.models,
                registry.adapters, registry.suts, registry.meters, registry.solvers,
                registry.energy_profiles, registry.executors):
        print(f"{reg.kind}:\n  " + (", ".join(reg.names()) or "(none)"))
    return 0
