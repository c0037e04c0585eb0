"""``neuromark report RESULTS [--system system.yaml] [--out DIR]``: the system-track
submission report (Markdown + PNGs) from system-track results and the submitter's system
description (default: described from the results, as ``system run`` does)."""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.report.html import write_html


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report", help="write the NeuroBench system-track submission report",
        description="Write submission.md + PNGs from system-track results (a JSON file or a "
                    "results folder) and a system description YAML (default: described from "
                    "the results).")
    parser.add_argument("results", type=Path, metavar="RESULTS")
    parser.add_argument("--system", type=Path, default=None, metavar="system.yaml",
                        help="system description (architecture, algorithm, workflow, timing, "
                             "power); default: described from the results' provenance, SUT "
                             "and meter")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: RESULTS folder / submission)")
    parser.add_argument("--html", action="store_true", help="also write submission.html")
    parser.set_defaults(func=_report)


def _report(args: argparse.Namespace) -> int:
    from neuromark.report.system_report import (
        describe,
        load_description,
        load_results,
        write_submission,
    )

    results = load_results(args.results)
    system = load_description(args.system) if args.system else describe(results)
    base = args.results if args.results.is_dir() else args.results.parent
    target = write_submission(results, system, args.out or base / "submission")
    print(f"wrote {target} ({len(results)} result file(s))")
    if args.html:
        print(f"wrote {write_html(target, f'NeuroBench system-track submission: {system.name}')}")
    return 0
