"""Exact MIS solver: reproduces NeuroBench's exact values below 50 nodes; brute force."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from conftest import REFERENCE_DIR

from neuromark.benchmarks.qubo import energy, is_independent_set, mis_workload
from neuromark.benchmarks.qubo.exact import brute_force, exact_mis
from neuromark.errors import ConfigError

REFERENCE = REFERENCE_DIR / "qubo_mis_bks.csv"


def reference_rows():
    if not REFERENCE.is_file():
        pytest.skip(f"reference CSV not found: {REFERENCE}")
    with REFERENCE.open() as handle:
        return [(int(r["num_vertices"]), float(r["density"]), int(r["random_seed"]),
                 float(r["c_optimal"])) for r in csv.DictReader(handle)]


def test_exact_reproduces_every_reference_value_below_50_nodes():
    rows = [r for r in reference_rows() if r[0] < 50]
    assert len(rows) == 40
    for n, d, s, c in rows:
        w = mis_workload(n, d, s)
        x = exact_mis(n, w.edges)
        assert is_independent_set(w.edges, x)
        assert energy(w.Q, x) == c, (n, d, s)


def test_hand_graphs():
    assert exact_mis(3, np.array([[0, 1], [1, 2]])).tolist() == [1, 0, 1]  # path: 2
    assert exact_mis(3, np.array([[0, 1], [1, 2], [0, 2]])).sum() == 1  # triangle: 1
    assert exact_mis(4, np.zeros((0, 2), dtype=int)).sum() == 4  # no edges
    c5 = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]])
    assert exact_mis(5, c5).sum() == 2  # 5-cycle: floor(5/2)


@pytest.mark.parametrize("seed", range(4))
def test_exact_matches_brute_force(seed):
    w = mis_workload(14, 0.3, seed)
    x_bf, c_bf = brute_force(w.Q)
    assert energy(w.Q, exact_mis(14, w.edges)) == c_bf == energy(w.Q, x_bf)


def test_brute_force_general_qubo():
    q = np.array([[1.0, -3.0], [-3.0, 2.0]])  # costs: 00->0, 10->1, 01->2, 11->1+2-6=-3
    x, c = brute_force(q)
    assert x.tolist() == [1, 1] and c == -3.0


def test_exact_refuses_large_n():
    with pytest.raises(ConfigError, match="max_n"):
        exact_mis(300, np.zeros((0, 2), dtype=int))
