"""``neuromark leaderboard RESULTS_DIR... --out site/``: a static HTML page comparing runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from neuromark.commands import add_command
from neuromark.report.runs import read_runs

DESCRIPTION = """Write SITE/index.html: per benchmark (id, version), one sortable table with a row
per model run on it (label, name, checkpoint digest, run) and every score (with errors, units, flags
and links to the results JSON, config and provenance), and the accuracy-vs-operations Pareto plot.
No server, no CDN."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "leaderboard", "write a static HTML leaderboard of results folders",
                         DESCRIPTION)
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULTS_DIR",
                        help="results folders written by `neuromark run`, folders of them "
                             "(e.g. results/: read one level down; empty ones are skipped with "
                             "a note) or results JSON files")
    parser.add_argument("--out", type=Path, default=Path("site"), help="site folder (default: site)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace SITE/index.html (and write into SITE) even where neuromark "
                             "leaderboard did not write it")
    parser.set_defaults(func=_leaderboard)


def _leaderboard(args: argparse.Namespace) -> int:
    from neuromark.report.leaderboard import build_leaderboard  # matplotlib

    notes: list[str] = []
    runs = read_runs(args.results, notes)
    if notes:
        print("\n".join(notes), file=sys.stderr)
    page = build_leaderboard(runs, args.out, overwrite=args.overwrite)
    print(f"wrote {page} ({len(runs)} results files, "
          f"{len({r.key for r in runs})} benchmarks)")
    return 0
