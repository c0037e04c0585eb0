"""Library instances: DIMACS, QOBLIB .qs(.xz), MQLib and QOBLIB solutions, on real QOBLIB
files (tests/fixtures/realdata/qubo_mis, CC-BY-4.0) and on hand-made bad files."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from neuromark.benchmarks.qubo.known import known_value
from neuromark.benchmarks.qubo.library import (
    instance_name,
    load_instance,
    read_dimacs,
    read_mqlib,
    read_qs,
    read_solution,
    write_dimacs,
    write_mqlib,
    write_qs,
    write_solution,
)
from neuromark.benchmarks.qubo.objective import energy, is_independent_set
from neuromark.errors import DataError

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"
#: QOBLIB's proven optima (solutions README): name -> (n, m, |S*|)
OPTIMA = {"C125-9": (125, 787, 34), "brock200-1": (200, 14834, 6), "karate": (34, 78, 20)}


@pytest.mark.parametrize("name", sorted(OPTIMA))
def test_real_instances_and_their_optimal_solutions(name):
    n, m, size = OPTIMA[name]
    inst = load_instance(REAL / f"{name}.gph")
    assert (inst.name, inst.n, len(inst.edges)) == (name, n, m)
    x = read_solution(REAL / f"{name}.opt.sol", n)
    assert int(x.sum()) == size and is_independent_set(inst.edges, x)
    assert inst.cost(x) == -size  # NeuroBench's energy at a feasible set is -|S|
    known = known_value(inst)  # matched by content
    assert (known.value, known.proven, known.source) == (size, True, "qoblib")


def test_qs_xz_is_the_same_graph_with_qoblib_energy():
    dimacs = load_instance(REAL / "C125-9.gph")
    qs = load_instance(REAL / "C125-9.qs.xz")
    assert qs.fmt == "qs" and qs.name == "C125-9" and qs.is_mis
    assert set(map(tuple, qs.edges.tolist())) == set(map(tuple, dimacs.edges.tolist()))
    assert "2 e(S)" in qs.energy and "8 e(S)" in dimacs.energy
    x = read_solution(REAL / "C125-9.opt.sol", 125)
    assert qs.cost(x) == dimacs.cost(x) == -34
    # an infeasible set: the energies differ by the penalties (2 vs 8 per edge inside S)
    y = x.copy()
    u, v = dimacs.edges[0]
    y[[u, v]] = 1
    inside = int(sum(y[a] and y[b] for a, b in dimacs.edges))
    assert qs.cost(y) == -int(y.sum()) + 2 * inside
    assert dimacs.cost(y) == -int(y.sum()) + 8 * inside


@pytest.mark.parametrize("file", ["karate.gph", "C125-9.qs.xz"])
def test_energies_agree_with_dimod(file):
    dimod = pytest.importorskip("dimod")
    inst = load_instance(REAL / file)
    coo = inst.Q.tocoo()
    bqm = dimod.BinaryQuadraticModel.from_qubo(
        {(int(i), int(j)): float(v) for i, j, v in zip(coo.row, coo.col, coo.data)},
        offset=inst.offset)
    rng = np.random.default_rng(0)
    for x in [rng.integers(0, 2, inst.n) for _ in range(5)] + [
            read_solution(REAL / f"{inst.name}.opt.sol", inst.n)]:
        assert inst.cost(x) == pytest.approx(bqm.energy(dict(enumerate(x.tolist()))))
        assert energy(inst.Q, x) + inst.offset == pytest.approx(inst.cost(x))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ("c x\ne 1 2\np edge 2 1\n", ":2: an edge before the 'p edge N M' line"),
    ("p edge 3 1\ne 1 4\n", ":2: index 4 out of range 1..3"),
    ("p edge 3 1\ne 0 2\n", ":2: index 0 out of range 1..3 (indices are 1-based)"),
    ("p edge 3 1\ne 2 2\n", ":2: self-loop on node 2"),
    ("p edge 3 2\ne 1 2\ne 2 1\n", ":3: edge 2-1 repeats line 2"),
    ("p edge 3 2\ne 1 2\n", ":1: the header announces 2 edges, the file has 1"),
    ("p edge 3 1\np edge 3 1\n", ":2: a second 'p' line"),
    ("p edge 0 0\n", ":1: the number of variables must be >= 1"),
    ("p edge 3 1\ne 1 x\n", ":2: index must be an integer, got 'x'"),
    ("p edge 3 1\nx 1 2\n", ":2: unknown line kind 'x'"),
    ("c only a comment\n", "no 'p edge N M' line"),
])
def test_dimacs_contract(tmp_path, text, message):
    path = _write(tmp_path / "g.gph", text)
    with pytest.raises(DataError) as err:
        read_dimacs(path)
    assert str(path) in str(err.value) and message in str(err.value)


@pytest.mark.parametrize("text, message", [
    ("# c\n2 2\n1 1 -1\n2 1 1\n", ":4: entry (2, 1) below the diagonal"),
    ("2 2\n1 1 -1\n1 1 3\n", ":3: entry (1, 1) repeats line 2"),
    ("2 1\n1 3 1\n", ":2: index 3 out of range 1..2"),
    ("2 1\n1 2 nan\n", ":2: value must be finite"),
    ("2 3\n1 2 1\n", ":1: the header announces 3 nnz, the file has 1"),
    ("2\n1 2 1\n", ":1: expected the header 'N NNZ'"),
    ("2 1\n1 2\n", ":2: expected 'I J VALUE'"),
    ("# only comments\n", "no 'N NNZ' header line"),
])
def test_qs_contract(tmp_path, text, message):
    path = _write(tmp_path / "q.qs", text)
    with pytest.raises(DataError) as err:
        read_qs(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_corrupt_xz_and_unknown_format(tmp_path):
    bad = tmp_path / "q.qs.xz"
    bad.write_bytes(b"not xz at all")
    with pytest.raises(DataError, match="not a valid .xz file"):
        load_instance(bad)
    with pytest.raises(DataError, match="unknown instance format '.txt'"):
        load_instance(_write(tmp_path / "g.txt", "p edge 1 0\n"))
    with pytest.raises(DataError, match="no such file"):
        load_instance(tmp_path / "missing.gph")


@pytest.mark.parametrize("text, message", [
    ("# Objective value = 2\n1\n", ":1: objective value 2 but 1 nodes are listed"),
    ("1\n1\n", ":2: node 1 repeats line 1"),
    ("5\n", ":1: index 5 out of range 1..3"),
    ("1 1\n", ":1: expected one node index per line"),
])
def test_solution_contract(tmp_path, text, message):
    path = _write(tmp_path / "s.opt.sol", text)
    with pytest.raises(DataError) as err:
        read_solution(path, 3)
    assert str(path) in str(err.value) and message in str(err.value)


def test_writers_round_trip(tmp_path):
    inst = load_instance(REAL / "karate.gph")
    n, edges = read_dimacs(write_dimacs(tmp_path / "k.gph", inst.n, inst.edges, "karate"))
    assert n == 34 and np.array_equal(edges, inst.edges)
    qs = load_instance(REAL / "C125-9.qs.xz")
    for name in ("c.qs", "c.qs.xz"):
        Q, offset = read_qs(write_qs(tmp_path / name, qs.Q, 1.5, "C125-9"))
        assert offset == 1.5 and (Q != qs.Q).nnz == 0
    assert lzma.decompress((tmp_path / "c.qs.xz").read_bytes()).startswith(b"# C125-9\n")
    W = sp.csr_matrix(np.array([[2.0, -1.0], [-1.0, 0.5]]))
    assert (read_mqlib(write_mqlib(tmp_path / "w.mqlib", W)) != W).nnz == 0
    x = read_solution(REAL / "karate.opt.sol", 34)
    assert np.array_equal(read_solution(write_solution(tmp_path / "k.sol", x), 34), x)


def test_mqlib_is_maximised(tmp_path):
    # maximise x^T W x with W = [[1, -2], [-2, 3]]: the best is x = (0, 1), objective 3
    inst = load_instance(_write(tmp_path / "m.mqlib", "# MQLib QUBO\n2 3\n1 1 1\n1 2 -2\n2 2 3\n"))
    assert inst.maximise and not inst.is_mis
    assert inst.cost(np.array([0, 1])) == -3 and inst.cost(np.array([1, 1])) == 0
    assert instance_name(Path("a/C125-9.qs.xz")) == "C125-9"
    txt = _write(tmp_path / "m.txt", "2 1\n1 2 5\n")  # MQLib names no suffix
    assert load_instance(txt, "mqlib").cost(np.array([1, 1])) == -10
    with pytest.raises(DataError, match="unknown instance format 'csv'"):
        load_instance(txt, "csv")
