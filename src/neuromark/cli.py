"""The ``neuromark`` command line.

Subcommands live in ``neuromark.commands``: every module there defines
``register(subparsers)``, which adds its verb and sets ``func`` on the parser; the module is
found automatically, so adding a verb means adding a file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import neuromark.commands as commands
from neuromark import __version__
from neuromark.errors import NeuromarkError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command module's verbs registered."""
    parser = argparse.ArgumentParser(
        prog="neuromark", description="Benchmarks for neuromorphic computing.")
    parser.add_argument("--version", action="version", version=f"neuromark {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"neuromark.commands.{info.name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 1 neuromark error, 2 usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except NeuromarkError as exc:
        print(f"neuromark {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; completed entries are saved", file=sys.stderr)
        return 130

