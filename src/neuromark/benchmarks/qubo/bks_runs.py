"""Recompute the BKS table: exact optima for small workloads, long solver runs above.

Used by ``neuromark qubo bks``. Rows are only replaced by strictly better costs, and the
table is saved after every workload, so an interrupted run loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date
from importlib import metadata
from pathlib import Path

from neuromark.benchmarks.qubo.bks import BKSRow, BKSTable, encode_solution
from neuromark.benchmarks.qubo.exact import exact_mis
from neuromark.benchmarks.qubo.fingerprint import graph_fingerprint
from neuromark.benchmarks.qubo.objective import energy
from neuromark.benchmarks.qubo.solvers.anneal import Annealer
from neuromark.benchmarks.qubo.workloads import mis_workload


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def best_known(n: int, density: float, seed: int, *, budget_s: float, exact_max: int = 100,
               solver_seed: int = 0) -> BKSRow:
    """A BKS row for workload (n, density, seed): exact when n <= ``exact_max``, else the
    best of a ``budget_s``-second run of neuromark's annealer (``neuromark-sa``)."""

    w = mis_workload(n, density, seed)
    today = date.today().isoformat()
    if n <= exact_max:
        x = exact_mis(n, w.edges, max_n=exact_max)
        return BKSRow(n, w.density, seed, energy(w.Q, x), "exact", "neuromark.exact_mis",
                      _version("neuromark"), "", "", today, encode_solution(x),
                      str(graph_fingerprint(w.n, w.edges)), "exact:neuromark.exact_mis")

    solver = Annealer()
    solver.prepare(w.Q)
    res = solver.solve(w.Q, budget_s, solver_seed)
    return BKSRow(n, w.density, seed, energy(w.Q, res.x), "heuristic", solver.name,
                  f"neuromark {_version('neuromark')}, numba {_version('numba')}",
                  str(solver_seed), f"{budget_s:g}", today, encode_solution(res.x),
                  str(graph_fingerprint(w.n, w.edges)), f"best-seen:{solver.name}")


def recompute(table: BKSTable, workloads: Iterable[tuple[int, float, int]], *, budget_s: float,
              exact_max: int = 100, solver_seed: int = 0, save_to: Path | None = None,
              report: Callable[[BKSRow, bool], None] | None = None) -> int:
    """Offer a fresh row for every workload; returns how many rows improved (or were new)."""
    improved = 0
    for n, density, seed in workloads:
        row = best_known(n, density, seed, budget_s=budget_s, exact_max=exact_max,
                         solver_seed=solver_seed)
        kept = table.offer(row)
        improved += kept
        if kept and save_to is not None:
            table.save(save_to)
        if report is not None:
            report(row, kept)
    return improved
