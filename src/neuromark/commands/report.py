"""``neuromark report RESULTS [--system system.yaml] [--out DIR]``: the system-track
submission report (Markdown + PNGs) from system-track results and the submitter's system
description (default: described from the results, as ``system run`` does)."""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.errors import ConfigError
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
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a folder that holds a submission.md or plots this "
                        "command did not write")
    parser.set_defaults(func=_report)


#: How the submission report this command writes begins (its mark of ownership).
REPORT_TITLE = "# NeuroBench system-track submission"


def claim_report_folder(out: Path, overwrite: bool) -> None:
    """Refuse, before any work, a ``--out`` folder this command may not write into (the
    ``--overwrite`` rule of ``neuromark run``): a file, a ``submission.md`` it did not write
    (not starting with :data:`REPORT_TITLE`), or, without one, any Markdown, HTML or PNG
    file it would replace."""
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    if overwrite:
        return
    report = out / "submission.md"
    if report.exists():
        try:
            ours = report.is_file() and report.read_text(
                encoding="utf-8", errors="replace").startswith(REPORT_TITLE)
        except OSError:
            ours = False
        if not ours:
            raise ConfigError(f"--out {out}: its submission.md was not written by neuromark "
                              f"report; it is not replaced: choose another --out or pass "
                              f"--overwrite")
        return
    theirs = sorted(p.name for p in out.iterdir() if p.suffix in (".md", ".html", ".png"))
    if theirs:
        raise ConfigError(f"--out {out}: holds {', '.join(theirs[:5])} and no report of "
                          f"neuromark report; they are not replaced: choose another --out or "
                          f"pass --overwrite")


def _report(args: argparse.Namespace) -> int:
    from neuromark.system.track.submission import (
        describe,
        load_description,
        load_results,
        write_submission,
    )

    base = args.results if args.results.is_dir() else args.results.parent
    out = args.out or base / "submission"
    claim_report_folder(out, args.overwrite)
    results = load_results(args.results)
    system = load_description(args.system) if args.system else describe(results)
    target = write_submission(results, system, out)
    print(f"wrote {target} ({len(results)} result file(s))")
    if args.html:
        print(f"wrote {write_html(target, f'NeuroBench system-track submission: {system.name}')}")
    return 0
