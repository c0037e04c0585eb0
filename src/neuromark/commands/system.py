"""``neuromark system run CONFIG [--out DIR]``: run system-track benchmarks.

A thin alias of ``neuromark run`` restricted to ``task: system`` configs
(:func:`neuromark.commands.run.run_and_report`): the results JSON, the LoadGen logs
(``<out>/<config stem>/loadgen/``), the plots and ``report.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.commands.run import add_output_flags, apply_cache_flag, run_and_report


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("system", help="system-track benchmarks (MLPerf LoadGen scenarios)")
    verbs = parser.add_subparsers(dest="system_command", metavar="VERB")
    run = verbs.add_parser("run", help="run system benchmark configs (task: system)")
    run.add_argument("configs", nargs="+", metavar="CONFIG")
    run.add_argument("--out", type=Path, default=None, help="output folder (default: results/<timestamp>)")
    add_output_flags(run)
    run.add_argument("--quiet", action="store_true")
    run.set_defaults(func=_run)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def _run(args: argparse.Namespace) -> int:
    apply_cache_flag(args)
    return run_and_report(args.configs, args.out, quiet=args.quiet, only_task="system",
                          overwrite=args.overwrite)
