"""``neuromark compare A B``: two runs side by side, differences against the combined
standard error."""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.errors import DataError
from neuromark.report.compare import compare, format_comparison
from neuromark.report.runs import read_runs


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two runs score by score",
        description="Compare two results files (or two results folders, benchmark by "
                    "benchmark id): values, B - A, the combined standard error sqrt(se_A^2 + "
                    "se_B^2) and whether each difference is within it.")
    parser.add_argument("a", type=Path, metavar="A")
    parser.add_argument("b", type=Path, metavar="B")
    parser.set_defaults(func=_compare)


def _compare(args: argparse.Namespace) -> int:
    runs_a, runs_b = read_runs([args.a]), read_runs([args.b])
    by_id = {r.id: r for r in runs_b}
    pairs = [(a, by_id[a.id]) for a in runs_a if a.id in by_id]
    if not pairs:
        raise DataError(f"{args.a} and {args.b} share no benchmark id (A: "
                        f"{sorted(r.id for r in runs_a)}, B: {sorted(by_id)})")
    print("\n\n".join(format_comparison(a, b, compare(a, b)) for a, b in pairs))
    only = sorted({r.id for r in runs_a} ^ set(by_id))
    if only:
        print(f"\nin one run only: {', '.join(only)}")
    return 0
