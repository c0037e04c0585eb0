"""``neuromark check SUBMISSION_DIR``: audit a system-track submission.

Prints the profile whose rules were applied, then one line per finding
(``file: rule: message``); exit 0 when the submission is clean, 1 otherwise. The checks live
in :mod:`neuromark.system.checker`, the profiles in :mod:`neuromark.system.rules`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.commands import add_command

DESCRIPTION = """Check a folder written by 'neuromark system run' (and QUBO results in it) against
the rules of the profile its submission.json declares."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "check", "audit a system-track submission folder (layout, "
                         "LoadGen rules, power, report, compliance, QUBO sweep)", DESCRIPTION)
    parser.add_argument("submission", type=Path, metavar="SUBMISSION_DIR")
    parser.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    from neuromark.system.checker import check_submission

    profile, findings = check_submission(args.submission)
    if profile is not None:
        print(f"profile: {profile.name} ({profile.note})")
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} finding(s): the submission does not pass")
        return 1
    print("submission passes every check")
    return 0
