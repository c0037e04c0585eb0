"""An exact MIS solver: Google OR-Tools CP-SAT (``solver: cpsat``), and proofs of optima.

The model (Apache-2.0 OR-Tools, pinned 9.15.6755 by the extra ``neuromark[exact]``): one
Boolean ``x_v`` per vertex, maximise ``sum_v x_v`` subject to at most one chosen vertex per
clique of a clique cover of the edges (:func:`clique_cover`; every edge lies in one clique,
so these constraints are exactly independence, and each clique's ``AddAtMostOne`` is the
stronger linear relaxation, as in the clique formulation of the maximum-stable-set problem,
e.g. Rebennack et al., "Stable set problem: branch & cut algorithms", Encyclopedia of
Optimization, 2009). CP-SAT stops at ``max_time_in_seconds``; its status ``OPTIMAL`` is a
proof that no larger set exists (the objective bound equals the set found).

As a :class:`~.base.Solver`: the graph is read from an MIS-form QUBO
(:func:`~.kamis.mis_graph_of`); the model is built in ``prepare`` (untimed, its seconds in
``info["build_s"]``); ``solve`` returns the best set found within the timeout, its cost
``x^T Q x``, a trace of every improving solution (CP-SAT's callback: its wall time and the
set's cost), and in ``info`` whether it is proven optimal and the upper bound on ``|S|``.

For best-known values: :func:`prove_mis` on a graph and :func:`exact_known_value` on an
instance file return the value, whether it is proven, and a source line ("proven by CP-SAT
(OR-Tools 9.15.6755) here, 1.2 s"), the form a known-value table records.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.solvers.base import Count, SolveResult, check_timeout
from neuromark.benchmarks.qubo.solvers.common import Loaded
from neuromark.benchmarks.qubo.solvers.kamis import mis_graph_of
from neuromark.errors import require


def clique_cover(n: int, edges: np.ndarray) -> list[list[int]]:
    """Cliques (lists of 0-based vertices, each of size >= 2) that together hold every edge.

    Greedy: vertices in decreasing degree; from each uncovered edge ``(v, u)`` a clique is
    grown by adding, in increasing index, every vertex adjacent to all its members; its
    edges are then covered. Deterministic.
    """
    adj: list[set[int]] = [set() for _ in range(n)]
    for u, v in np.asarray(edges, dtype=np.int64).tolist():
        adj[u].add(v)
        adj[v].add(u)
    uncovered = [set(a) for a in adj]
    cliques: list[list[int]] = []
    for v in sorted(range(n), key=lambda i: (-len(adj[i]), i)):
        while uncovered[v]:
            u = min(uncovered[v])
            clique = [v, u]
            candidates = adj[v] & adj[u]
            # prefer candidates that still cover new edges of the clique
            for c in sorted(candidates, key=lambda w: (-(len(uncovered[w] & {v, u})), w)):
                if c in candidates:
                    clique.append(c)
                    candidates &= adj[c]
            for a in clique:
                uncovered[a].difference_update(clique)
            cliques.append(clique)
    return cliques


@dataclass
class ExactMIS:
    """What :func:`prove_mis` found.

    Attributes:
        size: |S| of the best independent set found.
        bound: CP-SAT's upper bound on the maximum |S| (== size when proven).
        proven: True when CP-SAT proved ``size`` optimal within the limit.
        wall_s: seconds of the solve (model building excluded).
        x: the set, int8 of shape (n,).
        status: CP-SAT's status name (OPTIMAL, FEASIBLE, UNKNOWN).
    """

    size: int
    bound: int
    proven: bool
    wall_s: float
    x: np.ndarray
    status: str


@dataclass(frozen=True)
class ExactKnownValue:
    """A best-known value as a known-value table records it: value, source, proven."""

    value: int
    source: str
    proven: bool


def ortools_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ortools")
    except PackageNotFoundError:  # pragma: no cover - require() found the module
        return "unknown"


def build_model(n: int, edges: np.ndarray) -> tuple[Any, list[Any]]:
    """(CpModel, its n Boolean variables): maximise |S| under the clique-cover constraints."""
    cp = require("ortools.sat.python.cp_model", "exact")
    model = cp.CpModel()
    xs = [model.NewBoolVar(f"x{v}") for v in range(n)]
    for clique in clique_cover(n, edges):
        if len(clique) == 2:
            model.AddBoolOr([xs[clique[0]].Not(), xs[clique[1]].Not()])
        else:
            model.AddAtMostOne([xs[v] for v in clique])
    model.Maximize(sum(xs))
    return model, xs


def run_cpsat(model: Any, xs: list[Any], time_limit_s: float, seed: int, workers: int,
              on_improvement: Any = None, hint: np.ndarray | None = None) -> ExactMIS:
    """Solve a :func:`build_model` model for ``time_limit_s`` seconds (``hint``: a start
    solution, int8 (n,), given to CP-SAT as its solution hint)."""
    cp = require("ortools.sat.python.cp_model", "exact")
    if hint is not None:
        model.ClearHints()
        for v, value in zip(xs, np.asarray(hint).tolist()):
            model.AddHint(v, int(value))
    solver = cp.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed) % 2**31
    best: dict[str, Any] = {"x": None}

    class _Callback(cp.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:  # noqa: N802 - OR-Tools' name
            best["x"] = np.array([self.Value(v) for v in xs], dtype=np.int8)
            if on_improvement is not None:
                on_improvement(time.perf_counter(), int(best["x"].sum()))

    start = time.perf_counter()
    status = solver.Solve(model, _Callback())
    wall = time.perf_counter() - start
    x = best["x"] if best["x"] is not None else np.zeros(len(xs), dtype=np.int8)
    name = solver.StatusName(status)
    size = int(x.sum())
    bound = int(np.floor(solver.BestObjectiveBound() + 1e-9)) if best["x"] is not None \
        else len(xs)
    return ExactMIS(size=size, bound=max(bound, size), proven=name == "OPTIMAL", wall_s=wall,
                    x=x, status=name)


def prove_mis(n: int, edges: np.ndarray, time_limit_s: float, seed: int = 0,
              workers: int = 1, hint: np.ndarray | None = None) -> ExactMIS:
    """The maximum independent set of the graph ``(n, edges)`` (0-based, (m, 2)) by CP-SAT,
    proven when it finishes within ``time_limit_s`` seconds; ``hint``: a start set."""
    check_timeout(time_limit_s, "time_limit_s")
    model, xs = build_model(n, edges)
    return run_cpsat(model, xs, time_limit_s, seed, workers, hint=hint)


def exact_known_value(path: str | Path, time_limit_s: float = 10.0, seed: int = 0
                      ) -> ExactKnownValue | None:
    """The MIS size of an instance file proven by CP-SAT within ``time_limit_s``, as a
    known-value source (None when the instance is not MIS or the proof did not finish)."""
    from neuromark.benchmarks.qubo.library import load_instance

    instance = load_instance(path)
    if not instance.is_mis:
        return None
    found = prove_mis(instance.n, instance.edges, time_limit_s, seed=seed)
    if not found.proven:
        return None
    return ExactKnownValue(found.size, f"proven by CP-SAT (OR-Tools {ortools_version()}) here, "
                                       f"{found.wall_s:.3g} s", True)


class CPSAT:
    """OR-Tools CP-SAT on the MIS clique model (see the module docstring).

    Args:
        workers: CP-SAT's parallel search workers (default 1: the timeout is one core's).
    """

    name = "cpsat"

    def __init__(self, workers: Count = 1) -> None:
        require("ortools.sat.python.cp_model", "exact")  # a missing extra fails here
        self.workers = workers
        self._loaded: Loaded[tuple[Any, list[Any], float, float]] = Loaded()

    def prepare(self, Q: Any) -> tuple[Any, list[Any], float, float]:
        """(model, variables, cost per chosen vertex, build seconds), untimed, once per Q."""
        return self._loaded.get(Q, self._build)

    @staticmethod
    def _build(Q: Any) -> tuple[Any, list[Any], float, float]:
        start = time.perf_counter()
        n, edges = mis_graph_of(Q)
        model, xs = build_model(n, edges)
        return model, xs, float(Q.diagonal()[0]), time.perf_counter() - start

    def solve(self, Q: Any, timeout_s: float, seed: int, *, target: float | None = None
              ) -> SolveResult:
        timeout_s = check_timeout(timeout_s)
        model, xs, per_vertex, build_s = self.prepare(Q)
        trace: list[tuple[float, float]] = []
        start = time.perf_counter()

        def improved(now: float, size: int) -> None:
            trace.append((now - start, per_vertex * size))

        found = run_cpsat(model, xs, timeout_s, seed, self.workers, improved)
        xv = found.x.astype(np.float64)
        cost = float(xv @ (Q @ xv))
        info = {"status": found.status, "proven_optimal": found.proven,
                "upper_bound_size": found.bound, "build_s": build_s,
                "ortools": ortools_version(), "workers": self.workers}
        return SolveResult(x=found.x, cost=cost, trace=trace or [(found.wall_s, cost)],
                           info=info)
