"""QUBO MIS workloads: NeuroBench's graphs exactly, Q structure, energies, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from neuromark.benchmarks.qubo import check_qubo, energy, is_independent_set, mis_workload
from neuromark.benchmarks.qubo.workloads import gnm_edges, num_edges
from neuromark.errors import ConfigError, DataError, ModelOutputError


@pytest.mark.parametrize(("n", "density", "edges"), [(100, 0.05, 250), (250, 0.05, 1562),
                                                      (1000, 0.05, 25000)])
def test_edge_counts(n, density, edges):
    w = mis_workload(n, density, 0)
    assert len(w.edges) == edges
    assert w.Q.nnz == n + 2 * edges


@pytest.mark.parametrize("n", [1, 2, 7, 16, 25, 33, 64, 100])
@pytest.mark.parametrize("density", [0.05, 0.25, 0.9, 1.0])
def test_edges_equal_networkx(n, density):
    nx = pytest.importorskip("networkx")
    for seed in (0, 4):
        ref = nx.gnm_random_graph(n, int(0.5 * density * n**2), seed=seed)
        ours = gnm_edges(n, num_edges(n, density), seed)
        assert {tuple(sorted(e)) for e in ref.edges()} == set(map(tuple, ours.tolist()))
        assert len(ours) == ref.number_of_edges()


def test_q_structure_and_cost_formula():
    w = mis_workload(25, 0.1, 3)
    q = w.Q.toarray()
    assert sp.issparse(w.Q) and (q == q.T).all()
    assert (np.diag(q) == -1).all()
    assert set(np.unique(q[~np.eye(25, dtype=bool)])) == {0.0, 4.0}
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 2, 25)
        inside = int(np.sum(x[w.edges[:, 0]] & x[w.edges[:, 1]]))
        assert energy(w.Q, x) == -x.sum() + 8 * inside


def test_hand_computed_energy():
    q = np.array([[-1.0, 4.0, 0.0], [4.0, -1.0, 4.0], [0.0, 4.0, -1.0]])  # path 0-1-2
    assert energy(q, [1, 0, 1]) == -2.0
    assert energy(q, [1, 1, 0]) == -2.0 + 8.0
    assert is_independent_set(np.array([[0, 1], [1, 2]]), [1, 0, 1])
    assert not is_independent_set(np.array([[0, 1], [1, 2]]), [0, 1, 1])


def test_energies_equal_dimod():
    pytest.importorskip("dimod")
    from neuromark.benchmarks.qubo.solvers.dwave import to_bqm

    w = mis_workload(50, 0.1, 1)
    bqm = to_bqm(w.Q)
    rng = np.random.default_rng(1)
    for _ in range(10):
        x = rng.integers(0, 2, 50)
        assert bqm.energy({i: int(v) for i, v in enumerate(x)}) == pytest.approx(energy(w.Q, x))


def test_graph_property_and_name():
    pytest.importorskip("networkx")
    w = mis_workload(100, 0.05, 2)
    assert w.graph.number_of_nodes() == 100 and w.graph.number_of_edges() == 250
    assert (w.n, w.density, w.seed, w.name) == (100, 0.05, 2, "mis-100-0.05-s2")


@pytest.mark.parametrize(("args", "match"), [((0, 0.1, 0), "n must be an integer >= 1"),
                                             ((-5, 0.1, 0), "n must be"),
                                             ((10, 0.0, 0), r"density must be in \(0, 1\]"),
                                             ((10, 1.5, 0), "density"),
                                             ((10, float("nan"), 0), "density"),
                                             ((10, 0.1, -1), "seed")])
def test_bad_workload_parameters(args, match):
    with pytest.raises(ConfigError, match=match):
        mis_workload(*args)


def test_bad_q_matrices():
    with pytest.raises(DataError, match="square"):
        check_qubo(np.zeros((2, 3)))
    with pytest.raises(DataError, match=r"symmetric; Q\[0, 1\]"):
        check_qubo(np.array([[-1.0, 4.0], [0.0, -1.0]]))
    with pytest.raises(DataError, match=r"non-finite entry at \(1, 1\)"):
        check_qubo(np.array([[-1.0, 0.0], [0.0, np.nan]]))
    with pytest.raises(DataError, match="non-finite"):
        check_qubo(sp.csr_matrix(np.array([[np.inf]])))


def test_energy_rejects_wrong_vectors():
    q = np.eye(3)
    with pytest.raises(ModelOutputError, match="length 3"):
        energy(q, [1, 0])
    with pytest.raises(ModelOutputError, match=r"x\[1\] = 2"):
        energy(q, [1, 2, 0])


def test_large_dense_workload_is_sparse_and_quick():
    w = mis_workload(2000, 0.25, 0)
    assert len(w.edges) == 500000
    assert sp.isspmatrix_csr(w.Q) and w.Q.nnz == 2000 + 1000000


def test_chunked_replay_equals_networkx():
    nx = pytest.importorskip("networkx")
    for n, density, seed in ((300, 0.25, 1), (200, 0.9, 0)):
        ref = nx.gnm_random_graph(n, int(0.5 * density * n**2), seed=seed)
        for flag_pairs in (1 << 26, 0):  # per-pair flags, then the sorted-key path
            ours = gnm_edges(n, num_edges(n, density), seed, chunk_attempts=500,
                             max_flag_pairs=flag_pairs)
            assert {tuple(sorted(e)) for e in ref.edges()} == set(map(tuple, ours.tolist()))
            assert len(ours) == ref.number_of_edges()
