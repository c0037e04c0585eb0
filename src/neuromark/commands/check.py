"""``neuromark check FOLDER``: audit a system-track submission or an MLPerf power results folder.

For a neuromark submission: prints the profile whose rules were applied, then one line per
finding (``file: rule: message``), then one verdict line (:func:`~neuromark.system.rules.verdict`:
passed or not, under which profile, and what to run for an MLPerf-valid submission); exit 0
when the submission is clean, 1 otherwise. The
checks live in :mod:`neuromark.system.checker`, the profiles in :mod:`neuromark.system.rules`.

For an MLPerf Inference power results folder (``run_1/``, ``ranging/``, ``power/``, as
MLPerf submitters publish them): prints MLPerf's power figure of each pass present, with
the rules of the LoadGen version that wrote the logs, and names what is missing
(:mod:`neuromark.system.power.mlperf_results`); exit 1 when anything is missing or wrong.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.commands import add_command
from neuromark.system.rules import verdict

DESCRIPTION = """Check a folder written by 'neuromark system run' against the rules of the profile
its submission.json declares, and the results of other tasks in it against the rules their
benchmark family declares (e.g. a QUBO sweep's); or an MLPerf Inference power results folder
(run_1/, ranging/, power/): MLPerf's power figure with the rules of the LoadGen version that wrote
its logs, and what is missing."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "check", "audit a system-track submission folder (layout, "
                         "LoadGen rules, power, report, compliance, the families' rules)", DESCRIPTION)
    parser.add_argument("submission", type=Path, metavar="FOLDER")
    parser.add_argument("--json", action="store_true",
                        help="print an MLPerf results folder's audit as JSON")
    parser.add_argument("--mlperf-round", choices=("v1.0", "current"), default=None,
                        help="the LoadGen rules of an MLPerf results folder (default: read "
                        "from its logs)")
    parser.set_defaults(func=_check)


def _check_mlperf(args: argparse.Namespace) -> int:
    import json

    from neuromark.system.power.mlperf_results import audit_mlperf_results, format_audit

    audit = audit_mlperf_results(args.submission, args.mlperf_round)
    print(json.dumps(audit, indent=2) if args.json else format_audit(audit))
    return 1 if audit["findings"] or audit["testing"] is None else 0


def _check(args: argparse.Namespace) -> int:
    from neuromark.system.checker import MANIFEST, check_submission
    from neuromark.system.power.mlperf_results import is_mlperf_results_folder

    if not (args.submission / MANIFEST).exists() and is_mlperf_results_folder(args.submission):
        return _check_mlperf(args)

    profile, findings = check_submission(args.submission)
    if profile is not None:
        print(f"profile: {profile.name} ({profile.note})")
    for finding in findings:
        print(finding)
    print(verdict(profile, len(findings)))
    return 1 if findings else 0
