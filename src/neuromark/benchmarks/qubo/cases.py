"""The small cases neuromark's central tests run for the qubo family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuromark.registry import solvers


class GreedySolver:
    """A test solver: takes the vertices greedily in index order, keeping a vertex when it
    lowers the cost (valid for MIS QUBOs); deterministic and instant."""

    name = "ctx-greedy"

    def solve(self, Q: Any, timeout_s: float, seed: int, *, target: float | None = None) -> Any:
        """``Q`` (n, n) sparse -> ``SolveResult`` with the set ``x`` (n,) int8 and its cost."""
        import numpy as np

        from neuromark.benchmarks.qubo.solvers import SolveResult

        q = Q.toarray()
        x = np.zeros(q.shape[0], dtype=np.int8)
        for i in range(len(x)):
            x[i] = 1
            if q[i] @ x * 2 - q[i, i] > 0:
                x[i] = 0
        cost = float(x @ q @ x)
        return SolveResult(x=x, cost=cost, trace=[(1e-4, cost)])


def qubo_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """:class:`GreedySolver` (registered as ``ctx-greedy`` for the test) on one 12-node
    workload the shipped table lacks, whose best known solution (exact) only ``cache`` holds,
    at two timeouts (the sweep's two units). Not repeated: what a solver reaches within a
    timeout depends on the clock. It has no device and no runner: the cache folder (its BKS
    table) and the executor are what reach it."""
    from neuromark.benchmarks.qubo.bks import BKSRow, BKSTable, encode_solution
    from neuromark.benchmarks.qubo.exact import exact_mis
    from neuromark.benchmarks.qubo.objective import energy
    from neuromark.benchmarks.qubo.workloads import mis_workload

    w = mis_workload(12, 0.3, 7)
    x = exact_mis(12, w.edges)
    table = cache / "qubo" / "bks.csv"
    table.parent.mkdir(parents=True, exist_ok=True)
    BKSTable([BKSRow(12, 0.3, 7, energy(w.Q, x), "exact", "test", "", "", "", "2026-01-01",
                     encode_solution(x))]).save(table)
    solvers.names()  # the families' solvers first, so that the test's entry is undone alone
    monkeypatch.setitem(solvers._entries, GreedySolver.name, GreedySolver)
    return {"config": {"task": "qubo", "benchmark": {"id": "q", "version": "1.0"},
                       "workloads": {"sizes": [12], "densities": [0.3], "seeds": [7]},
                       "solvers": [{"name": GreedySolver.name}],
                       "fixed_timeout": {"timeouts": [0.002, 0.01]}, "plots": False},
            "flags": {"device": False, "evaluated": False, "units": 2, "caches": ["qubo/bks.csv"]}}


TASK_CASES = {"qubo": qubo_case}
DATASET_CASES: dict[str, dict[str, Any]] = {}
SUT_CASES: dict[str, dict[str, Any]] = {}
