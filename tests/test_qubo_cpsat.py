"""The exact MIS solver (OR-Tools CP-SAT, extra ``neuromark[exact]``): clique model, proofs
of optima checked against QOBLIB's proven values (its results table, not ours)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neuromark.benchmarks.qubo.library import load_instance, read_solution
from neuromark.benchmarks.qubo.library_known import best_known_for
from neuromark.benchmarks.qubo.objective import is_independent_set
from neuromark.benchmarks.qubo.solvers.cpsat import clique_cover

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"
SUBSET = REAL / "qoblib_subset" / "instances"


def _edges_of(cliques):
    return {(min(a, b), max(a, b)) for c in cliques for i, a in enumerate(c) for b in c[i + 1:]}


@pytest.mark.parametrize("path", [REAL / "karate.gph", REAL / "brock200-1.gph",
                                  SUBSET / "johnson8-2-4.gph"])
def test_clique_cover_holds_exactly_the_edges(path):
    inst = load_instance(path)
    cliques = clique_cover(inst.n, inst.edges)
    edges = {tuple(e) for e in inst.edges.tolist()}
    assert _edges_of(cliques) == edges  # every edge covered, and every pair in a clique an edge
    assert all(len(c) >= 2 and len(set(c)) == len(c) for c in cliques)


def test_clique_cover_of_a_triangle_and_an_isolated_edge():
    cliques = clique_cover(5, np.array([[0, 1], [1, 2], [0, 2], [3, 4]]))
    assert sorted(sorted(c) for c in cliques) == [[0, 1, 2], [3, 4]]


ortools = pytest.importorskip("ortools", reason="CP-SAT needs the extra neuromark[exact] "
                              "(ortools==9.15.6755)")

from neuromark.benchmarks.qubo.solvers.cpsat import CPSAT, exact_known_value, prove_mis  # noqa: E402


@pytest.mark.parametrize("path", [REAL / "karate.gph", *sorted(SUBSET.glob("*.gph"))])
def test_cpsat_proves_qoblib_s_proven_optima(path):
    inst = load_instance(path)
    known = best_known_for(path, inst)
    found = prove_mis(inst.n, inst.edges, 20.0)
    assert found.proven and found.status == "OPTIMAL" and found.bound == found.size
    assert is_independent_set(inst.edges, found.x)
    if known is not None:  # QOBLIB's starred values (karate 20, farm 10, ibm32 13, ...)
        assert known.proven and found.size == known.value


def test_exact_known_value_names_its_source():
    value = exact_known_value(REAL / "karate.gph", 20.0)
    assert value is not None and value.value == 20 and value.proven
    assert value.source.startswith("proven by CP-SAT (OR-Tools 9.15")


def test_cpsat_solver_contract_on_karate():
    inst = load_instance(REAL / "karate.gph")
    res = CPSAT().solve(inst.Q, 5.0, seed=0)
    assert res.info["proven_optimal"] and int(res.x.sum()) == 20
    assert res.cost == pytest.approx(inst.cost(res.x)) == -20
    times = [t for t, _ in res.trace]
    costs = [c for _, c in res.trace]
    assert times == sorted(times) and costs == sorted(costs, reverse=True)
    x = read_solution(REAL / "karate.opt.sol", inst.n)
    assert inst.cost(x) == res.cost


def test_an_unfinished_proof_is_not_called_proven():
    inst = load_instance(REAL / "brock200-1.gph")
    found = prove_mis(inst.n, inst.edges, 0.05)
    assert not found.proven and found.bound >= found.size
    assert exact_known_value(REAL / "brock200-1.gph", 0.05) is None
