"""``neuromark compare A B``: two models on one benchmark side by side, differences against
the combined standard error."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from neuromark.commands import add_command
from neuromark.errors import DataError
from neuromark.report.compare import compare, format_comparison, pair_runs
from neuromark.report.runs import Run, benchmark_title, derived_note, read_runs

DESCRIPTION = """Compare two results files (or two results folders) of the same benchmark (id,
version): the two models side by side (label, name, options and checkpoint digests, run), their
values, B - A, the combined standard error sqrt(se_A^2 + se_B^2) and whether each difference is
within it. In folders, models with the same label pair up; a folder of run folders is read one
level down (empty ones skipped with a note)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "compare", "compare two models on one benchmark score by score",
                         DESCRIPTION)
    parser.add_argument("a", type=Path, metavar="A")
    parser.add_argument("b", type=Path, metavar="B")
    parser.set_defaults(func=_compare)


def _compare(args: argparse.Namespace) -> int:
    notes: list[str] = []
    runs_a, runs_b = read_runs([args.a], notes), read_runs([args.b], notes)
    if notes:
        print("\n".join(notes), file=sys.stderr)
    pairs, left_a, left_b = pair_runs(runs_a, runs_b)
    if not pairs:
        def names(runs: list[Run]) -> str:
            return ", ".join(sorted({benchmark_title(r.key) for r in runs}))

        same_id = sorted({r.id for r in runs_a} & {r.id for r in runs_b})
        why = (f"; benchmark {', '.join(map(repr, same_id))} has other versions on each side, "
               f"and different versions are different benchmarks" if same_id else "")
        derived = [(r, derived_note(r.results)) for r in [*runs_a, *runs_b]]
        why += "".join(f"; {r.id} is {note}: other settings, another benchmark"
                       for r, note in derived if note)
        raise DataError(f"{args.a} and {args.b} share no benchmark (A: {names(runs_a)}; B: "
                        f"{names(runs_b)}){why}")
    print("\n\n".join(format_comparison(a, b, compare(a, b)) for a, b in pairs))
    for side, left in (("A", left_a), ("B", left_b)):
        if left:
            print(f"\nonly in {side} (no model to pair with): "
                  + ", ".join(f"{r.model_label} on {benchmark_title(r.key)}" for r in left))
    return 0
