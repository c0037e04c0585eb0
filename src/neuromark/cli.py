"""The ``neuromark`` command line.

The kernel's subcommands live in ``neuromark.commands``: every module there defines
``register(subparsers)``, which adds its verb and sets ``func`` on the parser; the module is
found automatically, so adding a verb means adding a file. A benchmark family (built-in or a
plugin's) adds its verbs through the ``commands`` entries of its MANIFEST, called the same way.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import neuromark.commands as commands
from neuromark import __version__, registry
from neuromark.errors import NeuromarkError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command module's verbs registered."""
    parser = argparse.ArgumentParser(
        prog="neuromark", description="Benchmarks for neuromorphic computing.")
    parser.add_argument("--version", action="version", version=f"neuromark {__version__}")
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, print the full Python traceback (the chain of "
                             "causes) after the message, for debugging")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")

    verbs = {info.name: importlib.import_module(f"neuromark.commands.{info.name}").register
             for info in pkgutil.iter_modules(commands.__path__)}
    for name in registry.commands.names():
        if name in verbs:
            raise registry.DuplicateEntryError(
                f"commands entry {name!r} of family {registry.commands.family_of(name)!r} reuses "
                f"the name of the kernel's verb neuromark {name}; rename the family's verb")
        verbs[name] = registry.commands.get(name)
    for name in sorted(verbs):  # the kernel's verbs and the families', in one sorted list
        verbs[name](subparsers)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like SIGINT's :class:`KeyboardInterrupt` so that a run ends the same
    way (completed entries saved, the same message)."""


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (main thread only; elsewhere a no-op)."""

    owner = os.getpid()

    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != owner:  # a forked worker (e.g. a QUBO job) dies as by default
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated(f"signal {signum}")

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 1 error, 2 usage error, 130 SIGINT,
    143 SIGTERM). A neuromark error prints one message (no traceback unless ``--traceback``);
    ``sys.exit`` called by code the command ran (a user's model file) is an error (1), never
    a silent exit; any other exception is a bug and propagates with its traceback."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    show = "--traceback" in argv  # accepted anywhere on the line, not only before the verb
    args = parser.parse_args([a for a in argv if a != "--traceback"])
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with sigterm_as_interrupt():
            return int(args.func(args) or 0)
    except NeuromarkError as exc:
        _report(args.command, str(exc), show)
        return 1
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, Terminated)
        if show:
            traceback.print_exc()
        print(f"{'terminated (SIGTERM)' if terminated else 'interrupted'}; completed entries "
              "are saved", file=sys.stderr)
        return 143 if terminated else 130
    except SystemExit as exc:  # from user code (a model file, plugin, callback): never exit 0
        _report(args.command, f"code this command ran (a model file, plugin or callback) called "
                f"sys.exit({exc.code!r}) and was stopped there; an exit is an error here, and "
                f"what it had not finished was not written", show)
        return 1
    except MemoryError:
        _report(args.command, "out of memory (a setting larger than this machine can hold?)", show)
        return 1


def _report(command: str, message: str, show: bool) -> None:
    """Print ``message`` (and, with ``show``, the traceback with its chain first)."""
    if show:
        traceback.print_exc()
    print(f"neuromark {command}: error: {message}", file=sys.stderr)
