"""``neuromark validate CONFIG...``: check configs without running them."""

from __future__ import annotations

import argparse

from neuromark.commands.run import context_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("validate", help="check configs without running them")
    parser.add_argument("configs", nargs="+", metavar="CONFIG")
    parser.set_defaults(func=_validate)


def _validate(args: argparse.Namespace) -> int:
    from neuromark.suite import validate_configs

    for config in validate_configs(args.configs, context_from_args(args)):
        derived = config.derived
        note = (f"; filed as {derived['id']}: it changes what benchmark {derived['shipped_id']} "
                f"{derived['shipped_version']} fixes (see the note above)" if derived else "")
        print(f"ok: {config.path} (task {config.data['task']}{note})")
    return 0
