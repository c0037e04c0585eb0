"""``neuromark qubo library DIR``: sweep a folder of library instances with several solvers.

Every instance file in DIR with a best-known value (its QOBLIB solution file beside it or
in the sibling solutions/ folder, checked on the instance, and the known-value table matched
by the instance's content, never its name) is solved by each of
--solvers (comma-separated registered names; options as NAME:KEY=VALUE, e.g.
kamis:algorithm=online_mis), --runs runs of --timeout seconds each, through the same path
as `neuromark qubo solve`. Writes to --out: one unit file per instance x solver as it
finishes (a rerun into the same folder resumes), library.csv and report.md (one row per
instance x solver: n, m, best-known and its source, best found, gap, p_s, TTS99, tau*,
over-deadline fraction), gap.png, the best sets (solutions/), QOBLIB submission folders
(submissions/<solver>/<instance>/), and with --prove S, CP-SAT's proofs of optima (proofs/).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from neuromark._progress import progress
from neuromark.benchmarks.qubo.library_known import proven_here
from neuromark.errors import ConfigError
from neuromark.io_atomic import write_json_atomic


def add_library_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``library`` to the ``neuromark qubo`` actions ``sub``."""
    lib = sub.add_parser("library", help="sweep a folder of library instances x solvers",
                         description=__doc__.split("\n\n", 1)[1],
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    lib.add_argument("folder", type=Path, metavar="DIR", help="folder of instance files")
    lib.add_argument("--solvers", default="neuromark-sa",
                     help="comma-separated solvers, each NAME or NAME:KEY=VALUE[:KEY=VALUE] "
                          "(default neuromark-sa)")
    lib.add_argument("--timeout", type=float, default=1.0, metavar="S",
                     help="wall-clock seconds per run (default 1)")
    lib.add_argument("--runs", type=int, default=3, metavar="N",
                     help="runs per instance and solver (default 3)")
    lib.add_argument("--seed", type=int, default=0, help="seed of the first run (default 0)")
    lib.add_argument("--out", type=Path, required=True,
                     help="output folder; rerun into it to resume")
    lib.add_argument("--max-nodes", type=int, default=None, metavar="N",
                     help="skip instances with more than N nodes")
    lib.add_argument("--only", default=None, metavar="NAMES",
                     help="comma-separated instance names to sweep (default: all)")
    lib.add_argument("--prove", type=float, default=None, metavar="S",
                     help="also try to prove each instance's optimum with CP-SAT (extra "
                          "neuromark[exact]) for S seconds")
    lib.add_argument("--report-only", action="store_true",
                     help="solve nothing: write the table, plot and submissions from the units "
                          "already saved in --out (the others are listed as not run)")
    lib.add_argument("--submitter", default="N/A", help="the submission CSVs' Submitter")
    lib.add_argument("--quiet", action="store_true", help="no progress bar")
    lib.set_defaults(func=run_library)


def _check(args: argparse.Namespace) -> None:
    from neuromark.benchmarks.qubo.solvers.base import check_timeout

    check_timeout(args.timeout, "--timeout")
    if args.runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {args.runs}")
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    if args.max_nodes is not None and args.max_nodes < 1:
        raise ConfigError(f"--max-nodes must be >= 1, got {args.max_nodes}")
    if args.prove is not None:
        check_timeout(args.prove, "--prove")
    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out}: exists and is not a folder")


def _proof(out: Path, entry: Any, limit_s: float) -> str:
    """CP-SAT's proof for one instance, cached in ``OUT/proofs/<name>.json``: "" when not
    proven, else ``"=|S| (x s)"`` (``!=`` marks a proof that contradicts the best-known)."""
    from neuromark.benchmarks.qubo.library_sweep import slug
    from neuromark.benchmarks.qubo.solvers.cpsat import ortools_version, prove_mis
    path = out / "proofs" / f"{slug(entry.name)}.json"
    if path.is_file():
        record = json.loads(path.read_text(encoding="utf-8"))
    else:
        found = prove_mis(entry.instance.n, entry.instance.edges, limit_s)
        record = {"instance": entry.name, "limit_s": limit_s, "size": found.size,
                  "bound": found.bound, "proven": found.proven, "wall_s": found.wall_s,
                  "status": found.status, "ortools": ortools_version(),
                  "source": proven_here("CP-SAT")}
        write_json_atomic(path, record)
    if not record["proven"]:
        return ""
    mark = "=" if record["size"] == entry.known.value else "!="
    return f"{mark}{record['size']} in {record['wall_s']:.2g} s"


def _with_proof(row: dict[str, Any], proof: str, limit_s: float) -> dict[str, Any]:
    """The row with CP-SAT's proof (``proven_here``); a best-known value not proven by its
    source that CP-SAT proves equal becomes proven, its source "proven by CP-SAT here"."""
    row = dict(row, proven_here=proof)
    if proof.startswith("=") and not row["best_known_proven"]:
        row.update(best_known_proven=True, best_known_source=proven_here("CP-SAT"),
                   best_known_reference=f"{row['best_known_reference']}; optimal by CP-SAT "
                                        f"within {limit_s:g} s (OUT/proofs/)")
    return row


def run_library(args: argparse.Namespace) -> int:
    from neuromark.benchmarks.qubo.library_report import write_csv, write_report
    from neuromark.benchmarks.qubo.library_sweep import (
        check_settings,
        check_submissions,
        discover,
        make_choice,
        parse_solvers,
        sweep,
    )

    _check(args)
    choices = parse_solvers(args.solvers)
    for choice in choices:  # unknown names, bad options and missing extras: before any work
        make_choice(choice)
    only = [n.strip() for n in args.only.split(",")] if args.only else None
    entries, skipped = discover(args.folder, args.max_nodes, only)
    if not entries:
        raise ConfigError(f"{args.folder}: no instance with a best-known value to sweep")
    settings = {"timeout_s": float(args.timeout), "runs": args.runs, "seed": args.seed}
    check_submissions(args.out, entries, choices)
    notes = [note for e in entries for note in e.known.notes]
    for note in notes:
        print(f"qubo library: NOTE {note}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    check_settings(args.out, settings)
    command = "neuromark qubo library " + " ".join(shlex.quote(a) for a in sys.argv[3:]) \
        if sys.argv[1:3] == ["qubo", "library"] else (
            f"neuromark qubo library {args.folder} --solvers {args.solvers} --timeout "
            f"{args.timeout:g} --runs {args.runs} --seed {args.seed} --out {args.out}")
    print(f"{len(entries)} instance(s) x {len(choices)} solver(s), {args.runs} run(s) of "
          f"{args.timeout:g} s; {len(skipped)} file(s) skipped", flush=True)
    bar = progress(desc="qubo library", unit="unit", total=len(entries) * len(choices),
                   quiet=args.quiet)

    def on_unit(record: dict[str, Any], resumed: bool) -> None:
        row = record["row"]
        bar.set_postfix(last=f"{row['instance']}/{row['solver']}")
        bar.update(1)
        if not args.quiet and not resumed:
            print(f"  {row['instance']:<32} {row['solver']:<24} best {row['best_found']} / "
                  f"{row['best_known']}  p_s {row['p_success']:.2f}", flush=True)

    records = sweep(entries, choices, args.out, timeout_s=args.timeout, runs=args.runs,
                    seed=args.seed, on_unit=on_unit, solve_missing=not args.report_only,
                    submitter=args.submitter, command=command)
    bar.close()
    saved = {(r["row"]["instance"], r["row"]["solver"]) for r in records}
    skipped = skipped + [(f"{e.name} x {c.label}", "not run (--report-only: no saved unit)")
                         for e in entries for c in choices if (e.name, c.label) not in saved]
    rows = [dict(r["row"]) for r in records]
    if args.prove is not None:
        proofs = {e.name: _proof(args.out, e, args.prove) for e in entries}
        rows = [_with_proof(row, proofs[row["instance"]], args.prove) for row in rows]
    write_csv(args.out / "library.csv", rows)
    report = write_report(args.out, rows, choices, skipped, command=command, settings=settings,
                          notes=notes)
    print(report.read_text(encoding="utf-8"))
    return 0
