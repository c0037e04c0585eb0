"""QUBO maximum-independent-set benchmark (NeuroBench system track).

Python API (resolved on first use, so that importing the family stays light)::

    from neuromark.benchmarks.qubo import mis_workload, energy, bks_gap, load_bks
    w = mis_workload(1000, 0.05, seed=0)        # .Q (scipy.sparse CSR), .graph, .n, ...
    cost = energy(w.Q, x)                        # x^T Q x
    gap = bks_gap(cost, load_bks().target(1000, 0.05, 0))

Solvers follow :class:`~neuromark.benchmarks.qubo.solvers.base.Solver`; see ``docs/qubo.md``.
The family also adds the ``neuromark qubo`` verbs (:mod:`.cli`) and the submission checker's
QUBO rules (:mod:`.checker_rules`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neuromark._lazy import by_module, lazy_attributes

if TYPE_CHECKING:
    from neuromark.benchmarks.qubo.bks import BKSTable, load_bks
    from neuromark.benchmarks.qubo.gap import bks_gap
    from neuromark.benchmarks.qubo.objective import energy, is_independent_set
    from neuromark.benchmarks.qubo.workloads import Workload, check_qubo, mis_workload

__all__ = ["BKSTable", "Workload", "bks_gap", "check_qubo", "energy", "is_independent_set",
           "load_bks", "mis_workload"]

__getattr__ = lazy_attributes(__name__, by_module(__name__, {
    "bks": ("BKSTable", "load_bks"),
    "objective": ("energy", "is_independent_set"),
    "gap": ("bks_gap",),
    "workloads": ("Workload", "check_qubo", "mis_workload"),
}))

#: What this family adds to the registries (lazy; relative to this package).
MANIFEST = {
    "tasks": {"qubo": ".task:TASK"},
    "solvers": {"neuromark-sa": ".solvers.anneal:Annealer",
                "neuromark-tabu": ".solvers.tabu:TabuSearch",
                "dwave-tabu": ".solvers.dwave:DWaveTabu", "dwave-sa": ".solvers.dwave:DWaveSA",
                "kamis": ".solvers.kamis:KaMIS", "cpsat": ".solvers.cpsat:CPSAT"},
    "commands": {"qubo": ".cli:register"},
    "checker_rules": {"qubo": ".checker_rules:check_qubo_results"},
}
