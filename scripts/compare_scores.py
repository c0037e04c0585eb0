"""Every score and flag of two run folders, compared exactly (a layout change keeps them).

Reads every results file (``*.json`` with ``scores``) of run folder A and run folder B (for
example the default suite, ``neuromark run --out A`` before a change and ``--out B`` after)
and prints, per file, each score whose value or error differs, each flag present on one
side only, and the input-encoder cost block (``details.front_end``) when it differs. Scores
that measure the clock are left out and counted: latencies, throughput, wall time, power and
energy, the model execution rate, QUBO figures reached within a wall-clock timeout
(``...@<timeout>s``), times to solution and timeout overruns (scores and flags). Exit
status 0 when every other score and every flag is equal, 1 otherwise.

Usage::

    PYTHONPATH=<old tree>/src python -m neuromark run --out /tmp/before --cache-dir /tmp/c1
    neuromark run --out /tmp/after --cache-dir /tmp/c2
    python scripts/compare_scores.py /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

#: Score names that are functions of the clock, not of the model and the data.
CLOCK = re.compile(r"latency|throughput|wall_s|power|energy|execution_rate|@[0-9.]+s$|overrun|"
                   r"deadline|within_time_limit|^tts_")
#: Flags that report the clock (a solver overrunning its wall-clock timeout).
CLOCK_FLAG = re.compile(r"overran timeout")


def results_files(folder: Path) -> dict[str, dict[str, Any]]:
    """``{relative path: results}`` of every results file below ``folder``."""
    found = {}
    for path in sorted(folder.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("scores"), dict):
            found[path.relative_to(folder).as_posix()] = data
    return found


def differences(a: dict[str, Any], b: dict[str, Any]) -> tuple[list[str], int, int]:
    """The differing scores, flags and encoder-cost blocks of one file, how many clock
    scores were skipped, and how many flags (not the clock's) were compared."""
    out, skipped = [], 0
    for name in sorted(set(a["scores"]) | set(b["scores"])):
        if CLOCK.search(name):
            skipped += 1
            continue
        sa, sb = a["scores"].get(name), b["scores"].get(name)
        if sa is None or sb is None:
            out.append(f"score {name}: only in {'A' if sb is None else 'B'}")
        elif (sa.get("value"), sa.get("error")) != (sb.get("value"), sb.get("error")):
            out.append(f"score {name}: A {sa.get('value')!r} ± {sa.get('error')!r}, "
                       f"B {sb.get('value')!r} ± {sb.get('error')!r}")
    flags_a, flags_b = ({f for f in r.get("flags", []) if not CLOCK_FLAG.search(f)} for r in (a, b))
    out += [f"flag only in A: {f}" for f in sorted(flags_a - flags_b)]
    out += [f"flag only in B: {f}" for f in sorted(flags_b - flags_a)]
    fa = (a.get("details") or {}).get("front_end") if isinstance(a.get("details"), dict) else None
    fb = (b.get("details") or {}).get("front_end") if isinstance(b.get("details"), dict) else None
    if fa != fb:
        out.append("details.front_end differs")
    return out, skipped, len(flags_a | flags_b)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, metavar="A")
    parser.add_argument("b", type=Path, metavar="B")
    args = parser.parse_args(argv)
    files_a, files_b = results_files(args.a), results_files(args.b)
    bad = 0
    for name in sorted(set(files_a) - set(files_b)) + sorted(set(files_b) - set(files_a)):
        print(f"{name}: only in {'A' if name in files_a else 'B'}")
        bad += 1
    scores = flags = skipped = 0
    for name in sorted(set(files_a) & set(files_b)):
        diff, clock, compared = differences(files_a[name], files_b[name])
        scores += len(files_a[name]["scores"]) - clock
        flags += compared
        skipped += clock
        for line in diff:
            print(f"{name}: {line}")
        bad += len(diff)
    print(f"{len(set(files_a) & set(files_b))} results files in both; {scores} scores and {flags} "
          f"flags compared, {skipped} clock scores left out; {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
