"""``neuromark qubo solve FILE``: repeated runs of one solver on one library instance.

Reads a DIMACS graph, a QOBLIB ``.qs`` (``.xz``) or an MQLib QUBO
(:mod:`neuromark.benchmarks.qubo.library`), runs the solver ``--runs`` times for ``--timeout``
seconds (seeds ``--seed``, ``--seed + 1``, ...), and prints per run the best energy, ``|S|``
and feasibility and the history of new bests, then the success probability at the target,
TTS99 (the minimum over tau, with tau*, from the runs' histories; and at the timeout) with
bootstrap intervals, the residual energy and the gap to the target
(:mod:`neuromark.benchmarks.qubo.repeat`). The target: --optimum, else the known-value table
matched by the instance's content (never its name), else the runs' own best; a target a run
beats is named and replaced by the best seen. --out DIR keeps the runs as they finish, the
result and the time-to-target curve (CSV, JSON, PNG); --submission DIR writes QOBLIB's
submission folder DIR/<instance>/. The work's bound (runs x timeout) is printed before it starts.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from neuromark.benchmarks.qubo.cli_solve_report import print_result, write_outputs
from neuromark.errors import ConfigError, DataError

#: The most runs one command takes (the bootstrap and the per-run results are held in memory).
MAX_RUNS = 100_000
#: What ``--out`` holds, written by this command.
OUT_FILES = ("runs.jsonl", "result.json", "time_to_target.csv", "time_to_target.json",
             "time_to_target.png")


def add_solve_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``solve`` to the ``neuromark qubo`` actions ``sub``."""
    solve = sub.add_parser("solve", help="solve one library instance repeatedly (TTS99)",
                           description=__doc__.split("\n\n", 1)[1],
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    solve.add_argument("file", type=Path, metavar="FILE",
                       help="instance: .gph/.dimacs/.clq/.col (DIMACS graph, solved as "
                            "NeuroBench's MIS QUBO), .qs (QOBLIB), .mqlib/.mq (MQLib QUBO); "
                            "each optionally .xz-compressed")
    solve.add_argument("--format", choices=("dimacs", "qs", "mqlib"), default=None,
                       help="the file's format when its suffix does not say (e.g. an MQLib "
                            "instance named .txt)")
    solve.add_argument("--solver", default="neuromark-sa",
                       help="a registered solver (default neuromark-sa; `neuromark list` "
                            "shows them)")
    solve.add_argument("--solver-option", action="append", default=[], metavar="KEY=VALUE",
                       help="an option of the solver, repeatable (e.g. --solver kamis "
                            "--solver-option algorithm=online_mis; values read as YAML), "
                            "checked against the solver's options before any work")
    solve.add_argument("--timeout", type=float, default=1.0, metavar="S",
                       help="wall-clock seconds per run (default 1)")
    solve.add_argument("--runs", type=int, default=10, metavar="N",
                       help=f"independent runs (default 10, at most {MAX_RUNS:,})")
    solve.add_argument("--seed", type=int, default=0,
                       help="seed of the first run; run r uses seed + r (default 0); also "
                            "seeds the bootstrap")
    solve.add_argument("--optimum", type=Path, default=None, metavar="SOL",
                       help="an optimal solution (QOBLIB node list, e.g. C125-9.opt.sol); "
                            "default: the known-value table matched by content, else the "
                            "runs' own best; a target a run beats is named and the best seen "
                            "is used")
    solve.add_argument("--json", action="store_true",
                       help="print the full result as JSON instead of the table")
    solve.add_argument("--submission", type=Path, default=None, metavar="DIR",
                       help="also write QOBLIB's submission folder DIR/<instance>/ (README.md, "
                            "<instance>_summary.csv, solutions/, the runs' objective time "
                            "series); an existing non-empty DIR/<instance> needs --overwrite")
    solve.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="keep the runs as they finish (runs.jsonl), the result "
                            "(result.json) and the time-to-target curve (time_to_target.csv, "
                            ".json, .png) in DIR")
    solve.add_argument("--overwrite", action="store_true",
                       help="replace this command's own files in --out and --submission (other "
                            "files and the input are never touched)")
    solve.add_argument("--submitter", default="N/A", help="the CSV's Submitter column")
    solve.add_argument("--success-threshold", type=float, default=0.0, metavar="EPS",
                       help="the CSV's Success Threshold: a run succeeds within (1 + EPS) of "
                            "the algorithm's own best (default 0)")
    solve.set_defaults(func=run_solve)


def _target(args: argparse.Namespace, instance: Any
            ) -> tuple[float | None, str, int | None, bool, list[str]]:
    """(energy, source, |S|, proven, notes) of the target: ``--optimum``, else the known-value
    table matched by content, else none (the runs' own best)."""
    from neuromark.benchmarks.qubo.known import known_value, name_mismatch
    from neuromark.benchmarks.qubo.library import read_solution
    from neuromark.benchmarks.qubo.repeat import check_optimum

    if args.optimum is not None:
        try:
            x = read_solution(args.optimum, instance.n)
        except DataError as exc:
            raise DataError(f"--optimum {args.optimum}: {exc} (a solution of another graph? "
                            f"{instance.path.name} has {instance.n} nodes)") from None
        energy = check_optimum(instance, x, f"--optimum {args.optimum}")
        return (energy, str(args.optimum), int(x.sum()) if instance.is_mis else None, True,
                [])
    notes = [note] if (note := name_mismatch(instance)) else []
    known = known_value(instance)
    if known is None:
        return None, "", None, False, notes
    size = int(known.value) if instance.is_mis else None
    return (known.energy(instance), f"known_optima.csv row {known.instance}: "
            f"{known.describe()}", size, known.proven, notes)


def build_solver(name: str, pairs: list[str]) -> Any:
    """The solver ``name`` with the ``--solver-option`` pairs as its options, checked by its
    options model (an unknown key, a value of the wrong type or range: a
    :class:`ConfigError` naming the solver and the option)."""
    from neuromark.benchmarks.qubo.config import SolverSpec
    from neuromark.benchmarks.qubo.library_sweep import parse_options
    from neuromark.benchmarks.qubo.task import make_solver

    options = parse_options(pairs, f"--solver {name} --solver-option")
    try:
        return make_solver(SolverSpec(name=name, options=options), loc=("--solver",))
    except ConfigError as exc:
        if not options:
            raise
        said = [line.strip().removeprefix("<config>: ").replace("--solver.options.", "option ")
                for line in str(exc).splitlines() if line.strip() != "invalid config:"]
        raise ConfigError(f"--solver {name} --solver-option: {'; '.join(said)}") from None


def _check_out(out: Path, inputs: list[Path], overwrite: bool) -> None:
    """``--out``: a folder (made), none of whose files this command writes exists unless
    ``--overwrite``, and never the input."""
    from neuromark.benchmarks.qubo.qoblib_submission import check_folder_path

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is a file, not a folder; left as it is")
    check_folder_path(out, "--out")
    resolved = {p.resolve() for p in inputs}
    for name in OUT_FILES:
        path = out / name
        if path.resolve() in resolved:
            raise ConfigError(f"--out {out}: {path} is this command's input; never written")
        if path.exists() and not overwrite:
            raise ConfigError(f"--out {out}: {path} exists; pass --overwrite to replace this "
                              f"command's files there")


def _plan_line(args: argparse.Namespace, timeout: float) -> str:
    """The work's bound, stated before it starts."""
    from neuromark.benchmarks.qubo.solvers.base import allowed_overrun

    bound = args.runs * (timeout + allowed_overrun(timeout))
    saved = (f"each run is saved to {args.out / 'runs.jsonl'} as it finishes" if args.out else
             "nothing is saved before the last run ends (pass --out DIR to keep runs as they "
             "finish)")
    return (f"qubo solve: {args.runs} run(s) x {timeout:g} s: at most {bound:.4g} s of solving "
            f"(+ loading the instance into the solver before each run); {saved}")


def run_solve(args: argparse.Namespace) -> int:
    import sys

    from neuromark.benchmarks.qubo.library import load_instance
    from neuromark.benchmarks.qubo.qoblib_submission import (
        check_submission_dir,
        write_submission_dir,
    )
    from neuromark.benchmarks.qubo.repeat import solve_runs
    from neuromark.benchmarks.qubo.solvers.base import check_timeout

    timeout = check_timeout(args.timeout, "--timeout")
    if not 1 <= args.runs <= MAX_RUNS:
        raise ConfigError(f"--runs must be in 1..{MAX_RUNS:,}, got {args.runs:,}")
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    if not 0 <= args.success_threshold < 1:
        raise ConfigError(f"--success-threshold must be in [0, 1), got {args.success_threshold}")
    solver = build_solver(args.solver, args.solver_option)
    label = args.solver + "".join(f":{pair.strip()}" for pair in args.solver_option)
    instance = load_instance(args.file, args.format)  # checked before any solving
    energy, source, size, proven, notes = _target(args, instance)
    inputs = [args.file] + ([args.optimum] if args.optimum is not None else [])
    if args.submission is not None:
        check_submission_dir(args.submission, instance.name, inputs, args.overwrite)
    if args.out is not None:
        _check_out(args.out, inputs, args.overwrite)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "runs.jsonl").write_text("")
    for note in notes:
        print(f"qubo solve: NOTE {note}", file=sys.stderr)
    print(_plan_line(args, timeout), file=sys.stderr, flush=True)
    done: list[dict[str, Any]] = []

    def keep(run: dict[str, Any]) -> None:
        if args.out is not None:
            with open(args.out / "runs.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps({k: v for k, v in run.items() if k != "x"}) + "\n")

    try:
        result = solve_runs(solver, instance, timeout, args.runs, args.seed, optimum=energy,
                            optimum_source=source, optimum_size=size, optimum_proven=proven,
                            progress=keep, done=done,
                            keep_solutions=args.submission is not None)
    except KeyboardInterrupt as exc:
        where = (f"they are saved in {args.out / 'runs.jsonl'}" if args.out is not None else
                 "nothing was saved (no --out)")
        stop = "terminated (SIGTERM)" if type(exc).__name__ == "Terminated" else "interrupted"
        print(f"qubo solve: {stop} after {len(done)} of {args.runs} run(s); {where}",
              file=sys.stderr)
        return 143 if stop.startswith("terminated") else 130
    result["solver"] = label
    result["summary"]["notes"] = notes + result["summary"]["notes"]
    written = []
    if args.submission is not None:
        options = "".join(f" --solver-option {pair}" for pair in args.solver_option)
        command = (f"neuromark qubo solve {args.file.name} --solver {args.solver}{options} "
                   f"--timeout {timeout:g} --runs {args.runs} --seed {args.seed}")
        written.append(write_submission_dir(
            args.submission, instance, result, solver=label, submitter=args.submitter,
            eps=args.success_threshold, reference=command, overwrite=args.overwrite))
    result.pop("best_x")
    result.pop("run_x", None)
    if args.out is not None:
        written += write_outputs(args.out, result)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_result(result, label)
        for path in written:
            print(f"wrote {path}")
    return 0
