"""``neuromark qubo``: QUBO maximum-independent-set sweeps and the BKS table.

- ``neuromark qubo run CONFIG [--out DIR]``: run (or resume) a sweep, i.e.
  ``neuromark run CONFIG --out DIR`` for one QUBO config, with ``results/qubo-<config stem>``
  as the default folder (results JSONs and ``report.md`` there, the entries and plots in
  ``DIR/<config stem>/``);
- ``neuromark qubo bks [--sizes ...] [--densities ...] [--seeds ...] [--budget S]``:
  recompute best-known solutions (exact below ``--exact-max`` nodes, long runs above),
  replacing a row only by a better cost, in ``--table`` (default: a copy of the shipped
  table in the cache folder, ``<cache>/qubo/bks.csv``; the installed package is never
  written); ``run`` reads that table when the config sets no ``bks:`` (same ``--cache-dir``),
  and a config's ``bks: auto`` computes its missing rows there before the sweep;
- ``neuromark qubo compare [REFERENCE.csv]``: our BKS table against another (NeuroBench's);
- ``neuromark qubo solve FILE``: repeated runs on one library instance (DIMACS, QOBLIB
  ``.qs``, MQLib), with success probability and TTS99 (:mod:`neuromark.benchmarks.qubo.cli_solve`);
- ``neuromark qubo library DIR``: every instance of a folder x several solvers, against
  best-known values with their source (:mod:`neuromark.benchmarks.qubo.cli_library`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.benchmarks.qubo.cli_library import add_library_parser
from neuromark.benchmarks.qubo.cli_solve import add_solve_parser
from neuromark.commands.run import (
    add_cache_flag,
    add_executor_flags,
    add_output_flags,
    context_from_args,
    run_and_report,
)
from neuromark.context import default_cache_dir
from neuromark.errors import ConfigError
from neuromark.suite import project_root

BKS_DESCRIPTION = """Compute best-known solutions (BKS) of MIS workloads: one row per size x density x
graph seed, exact up to --exact-max nodes, else the best of a --budget-second annealing run; a row
is replaced only by a better cost. The table (default <cache dir>/qubo/bks.csv) is the one `neuromark
run` and `qubo run` read when a config sets no bks: (pass the same --cache-dir)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``neuromark qubo`` and its actions (run, bks, compare, solve) to ``subparsers``."""
    parser = subparsers.add_parser("qubo", help="QUBO maximum-independent-set benchmark",
                                   description=__doc__.split("\n\n", 1)[1],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="qubo_command", metavar="ACTION", required=True)

    run = sub.add_parser("run", help="run or resume a QUBO sweep config")
    run.add_argument("config", type=Path, metavar="CONFIG")
    run.add_argument("--out", type=Path, default=None,
                     help="output folder; rerun with the same folder to resume "
                          "(default: results/qubo-<config stem>)")
    add_output_flags(run)
    add_executor_flags(run)
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=_run)

    bks = sub.add_parser("bks", help="recompute best-known solutions",
                         description=BKS_DESCRIPTION)
    bks.add_argument("--sizes", type=int, nargs="+", default=[10, 25, 50, 100, 250, 500, 1000],
                     metavar="N", help="numbers of graph nodes of the workloads (a config's "
                     "workloads.sizes; default: 10 25 50 100 250 500 1000)")
    bks.add_argument("--densities", type=float, nargs="+", default=[0.01, 0.05, 0.1, 0.25],
                     metavar="D", help="edge densities in (0, 1] (workloads.densities; "
                     "default: 0.01 0.05 0.1 0.25)")
    bks.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], metavar="S",
                     help="graph seeds (workloads.seeds, not the solver seed; default: 0 1 2 3 "
                     "4); every size x density x seed combination is one workload")
    bks.add_argument("--budget", type=float, default=5.0,
                     help="seconds of solver time per workload above --exact-max (default 5)")
    bks.add_argument("--exact-max", type=int, default=100,
                     help="largest size solved exactly (default 100)")
    bks.add_argument("--solver-seed", type=int, default=0)
    bks.add_argument("--table", type=Path, default=None,
                     help="BKS CSV to update (default: <cache dir>/qubo/bks.csv, started "
                          "from the shipped table; the package is never written)")
    add_cache_flag(bks)
    bks.set_defaults(func=_bks)

    cmp_ = sub.add_parser("compare", help="compare our BKS table with another one")
    cmp_.add_argument("reference", type=Path, nargs="?",
                      default=project_root() / "tests/data/reference/qubo_mis_bks.csv",
                      help="a BKS CSV (default: NeuroBench's table, shipped in tests/data/reference)")
    cmp_.add_argument("--table", type=Path, default=None)
    cmp_.set_defaults(func=_compare)

    add_solve_parser(sub)
    add_library_parser(sub)


def _run(args: argparse.Namespace) -> int:
    """``neuromark run CONFIG --out DIR`` for one ``task: qubo`` config; the default folder
    is fixed per config so that a plain rerun resumes."""

    out = args.out or Path("results") / f"qubo-{args.config.stem}"
    return run_and_report([args.config], out, quiet=args.quiet, only_task="qubo",
                          overwrite=args.overwrite, executor=args.executor,
                          address=args.address, ctx=context_from_args(args))


def _bks(args: argparse.Namespace) -> int:
    from neuromark.benchmarks.qubo.bks import BKS_PATH
    from neuromark.benchmarks.qubo.bks_auto import open_table
    from neuromark.benchmarks.qubo.bks_runs import recompute
    from neuromark.benchmarks.qubo.solvers.base import check_timeout

    check_timeout(args.budget, "--budget")
    if any(n < 1 for n in args.sizes) or any(not 0 < d <= 1 for d in args.densities):
        raise ConfigError("--sizes must be >= 1 and --densities in (0, 1]")
    path = args.table or user_bks_path(context_from_args(args).cache_dir)
    if path.exists() and not path.is_file():
        raise ConfigError(f"--table {path}: is not a file")
    table = open_table(path)
    if not path.is_file():
        table.save()
        print(f"BKS table: {path} (new, a copy of {BKS_PATH})")
    else:
        print(f"BKS table: {path}")
    workloads = [(n, d, s) for n in args.sizes for d in args.densities for s in args.seeds]

    def report(row, kept):  # noqa: ANN001
        state = "new best" if kept else "kept old"
        print(f"n={row.num_vertices:5d} d={row.density:<5g} seed={row.random_seed}  "
              f"{row.method:9s} cost={row.cost:g}  -> {state} "
              f"(table: {table.target(*row.key):g})", flush=True)

    improved = recompute(table, workloads, budget_s=args.budget, exact_max=args.exact_max,
                         solver_seed=args.solver_seed, save_to=path, report=report)
    print(f"{improved} row(s) improved or added in {path}")
    return 0


def user_bks_path(cache: Path | None = None) -> Path:
    """Where ``qubo bks`` keeps its table by default: ``<cache dir>/qubo/bks.csv`` (``cache``:
    the run's cache folder, default the environment's)."""
    from neuromark.benchmarks.qubo.bks_auto import user_table_path

    return user_table_path(cache if cache is not None else default_cache_dir())


def _compare(args: argparse.Namespace) -> int:
    from neuromark.benchmarks.qubo.bks import load_bks

    ours = load_bks(args.table)
    ref = load_bks(args.reference)
    better, worse, same, missing = [], [], 0, []
    for key, row in sorted(ref.rows.items()):
        if key not in ours:
            missing.append(key)
            continue
        mine = ours.rows[key].cost
        if mine < row.cost:
            better.append((key, mine, row.cost))
        elif mine > row.cost:
            worse.append((key, mine, row.cost))
        else:
            same += 1
    print(f"compared {len(ref)} workloads of {args.reference}: {same} equal, "
          f"{len(better)} better in ours, {len(worse)} worse in ours, {len(missing)} missing")
    for (n, d, s), mine, theirs in better:
        print(f"  better: n={n} d={d:g} seed={s}: ours {mine:g} < reference {theirs:g}")
    for (n, d, s), mine, theirs in worse:
        print(f"  worse:  n={n} d={d:g} seed={s}: ours {mine:g} > reference {theirs:g}")
    return 0
