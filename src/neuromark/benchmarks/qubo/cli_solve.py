"""``neuromark qubo solve FILE``: repeated runs of one solver on one library instance.

Reads a DIMACS graph, a QOBLIB ``.qs`` (``.xz``) or an MQLib QUBO
(:mod:`neuromark.benchmarks.qubo.library`), runs the solver ``--runs`` times for ``--timeout``
seconds (seeds ``--seed``, ``--seed + 1``, ...), and prints per run the best energy, ``|S|``
and feasibility and the history of new bests, then the success probability at the target,
TTS99 with its bootstrap interval, the residual energy and the gap to the optimum
(:mod:`neuromark.benchmarks.qubo.repeat`). ``--submission CSV`` writes QOBLIB's submission CSV.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from neuromark.errors import ConfigError


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
    solve.add_argument("--timeout", type=float, default=1.0, metavar="S",
                       help="wall-clock seconds per run (default 1)")
    solve.add_argument("--runs", type=int, default=10, metavar="N",
                       help="independent runs (default 10)")
    solve.add_argument("--seed", type=int, default=0,
                       help="seed of the first run; run r uses seed + r (default 0); also "
                            "seeds the bootstrap")
    solve.add_argument("--optimum", type=Path, default=None, metavar="SOL",
                       help="an optimal solution (QOBLIB node list, e.g. C125-9.opt.sol); "
                            "default: the known-optimum table, else the runs' own best")
    solve.add_argument("--json", action="store_true",
                       help="print the full result as JSON instead of the table")
    solve.add_argument("--submission", type=Path, default=None, metavar="CSV",
                       help="also write QOBLIB's submission CSV for these runs")
    solve.add_argument("--submitter", default="N/A", help="the CSV's Submitter column")
    solve.add_argument("--success-threshold", type=float, default=0.0, metavar="EPS",
                       help="the CSV's Success Threshold: a run succeeds within (1 + EPS) of "
                            "the algorithm's own best (default 0)")
    solve.set_defaults(func=run_solve)


def _target(args: argparse.Namespace, instance: Any) -> tuple[float | None, str, int | None]:
    """(energy, source, |S|) of the optimum: ``--optimum``, else the table, else none."""
    from neuromark.benchmarks.qubo.library import known_optimum, read_solution
    from neuromark.benchmarks.qubo.repeat import check_optimum

    if args.optimum is not None:
        x = read_solution(args.optimum, instance.n)
        energy = check_optimum(instance, x, str(args.optimum))
        return energy, str(args.optimum), int(x.sum()) if instance.is_mis else None
    row = known_optimum(instance.name) if instance.is_mis else None
    if row is None:
        return None, "", None
    size, source = row
    return float(instance.Q[0, 0]) * size + instance.offset, source, size


def _fmt(value: Any, spec: str = ".4g") -> str:
    return "n/a" if value is None else format(value, spec)


def print_result(result: dict[str, Any], solver: str) -> None:
    """The human-readable report of :func:`~neuromark.benchmarks.qubo.repeat.solve_runs`."""
    inst, summary = result["instance"], result["summary"]
    graph = f", {inst['edges']} edges" if inst["edges"] is not None else ""
    print(f"instance {inst['name']} ({inst['format']}, n={inst['n']}{graph})")
    print(f"energy   {inst['energy']}")
    runs = result["runs"]
    print(f"solver   {solver}, {len(runs)} run(s) x {result['timeout_s']:g} s, seeds "
          f"{runs[0]['seed']}..{runs[-1]['seed']}")
    mis = inst["edges"] is not None
    print(f"{'run':>4} {'seed':>5} {'energy':>10} " + (f"{'|S|':>5} {'feasible':>8} " if mis
                                                       else "") + f"{'wall_s':>8}  history")
    for i, r in enumerate(runs, 1):
        hist = " ".join(f"{t:.4g}s:{c:g}" for t, c in r["history"][-6:])
        more = "... " if len(r["history"]) > 6 else ""
        cells = f"{r['size']:>5} {'yes' if r['feasible'] else 'NO':>8} " if mis else ""
        print(f"{i:>4} {r['seed']:>5} {r['energy']:>10g} {cells}{r['wall_s']:>8.4f}  "
              f"{more}{hist}")
    size = f" (|S*| = {summary['target_size']})" if summary.get("target_size") is not None else ""
    print(f"target            energy {_fmt(summary['target_energy'], 'g')}{size}, from "
          f"{summary['target_source']}")
    print(f"feasible runs     {summary['feasible_runs']}/{summary['runs']}")
    print(f"success prob.     {summary['successes']}/{summary['runs']} = "
          f"{summary['p_success']:.4g}")
    low, high = summary["tts99_ci95_s"]
    tts = ("not reached (no run succeeded)" if summary["tts99_s"] is None else
           f"{summary['tts99_s']:.4g} s (95% bootstrap {_fmt(low)}.."
           f"{'unbounded' if high is None else _fmt(high)} s)")
    print(f"TTS99             {tts}; tau = mean run wall {summary['tau_s']:.4g} s")
    print(f"residual energy   {_fmt(summary.get('residual_energy_mean'))} (mean over runs)")
    print(f"gap to target     best run {_fmt(summary.get('gap_best'))}, mean "
          f"{_fmt(summary.get('gap_mean'))}")


def run_solve(args: argparse.Namespace) -> int:
    from neuromark.benchmarks.qubo.config import SolverSpec
    from neuromark.benchmarks.qubo.library import load_instance
    from neuromark.benchmarks.qubo.repeat import solve_runs
    from neuromark.benchmarks.qubo.solvers.base import check_timeout
    from neuromark.benchmarks.qubo.task import make_solver

    timeout = check_timeout(args.timeout, "--timeout")
    if args.runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {args.runs}")
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    if not 0 <= args.success_threshold < 1:
        raise ConfigError(f"--success-threshold must be in [0, 1), got {args.success_threshold}")
    solver = make_solver(SolverSpec(name=args.solver))
    instance = load_instance(args.file, args.format)  # checked before any solving
    energy, source, size = _target(args, instance)
    result = solve_runs(solver, instance, timeout, args.runs, args.seed, optimum=energy,
                        optimum_source=source, optimum_size=size)
    result["solver"] = args.solver
    if args.submission is not None:
        from neuromark.benchmarks.qubo.qoblib_submission import submission_row, write_submission

        command = (f"neuromark qubo solve {args.file.name} --solver {args.solver} --timeout "
                   f"{timeout:g} --runs {args.runs} --seed {args.seed}")
        row = submission_row(result, instance, solver=args.solver, submitter=args.submitter,
                             eps=args.success_threshold, reference=command)
        write_submission(args.submission, row)
    result.pop("best_x")
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_result(result, args.solver)
        if args.submission is not None:
            print(f"QOBLIB submission CSV: {args.submission}")
    return 0
