"""``neuromark validate CONFIG...``: check configs without running them."""

from __future__ import annotations

import argparse

from neuromark.commands.run import context_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate", help="check configs without running them (and load what the run will "
                         "load: a model's checkpoint against its state, keys and shapes)")
    parser.add_argument("configs", nargs="+", metavar="CONFIG")
    parser.set_defaults(func=_validate)


def _validate(args: argparse.Namespace) -> int:
    from neuromark.suite import plan_configs

    ctx = context_from_args(args)
    for config, task, plan in plan_configs(args.configs, ctx):
        verify = getattr(task, "verify", None)  # what the run loads beyond the plan
        if callable(verify):
            verify(plan, ctx)
        derived = config.derived
        note = (f"; filed as {derived['id']}: it changes what benchmark {derived['shipped_id']} "
                f"{derived['shipped_version']} fixes (see the note above)" if derived else "")
        print(f"ok: {config.path} (task {config.data['task']}{note})")
    return 0
