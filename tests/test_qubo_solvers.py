"""QUBO solvers: correct energies, optimal on small instances, traces, targets, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.benchmarks.qubo import energy, mis_workload
from neuromark.benchmarks.qubo.exact import brute_force, exact_mis
from neuromark.benchmarks.qubo.scenarios import timed_solve
from neuromark.benchmarks.qubo.solvers import Solver, SolveResult
from neuromark.errors import ConfigError, ModelOutputError
from neuromark.registry import solvers

pytest.importorskip("numba")


def random_qubo(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    q = (a + a.T) / 2
    q[rng.random((n, n)) < 0.5] = 0
    return np.triu(q) + np.triu(q, 1).T  # keep it symmetric after sparsifying


@pytest.mark.parametrize("name", ["neuromark-sa", "neuromark-tabu"])
def test_ours_finds_brute_force_optimum_of_general_qubos(name):
    for seed in range(3):
        q = random_qubo(12, seed)
        _, best = brute_force(q)
        solver = solvers.get(name)()
        solver.prepare(q)
        res = solver.solve(q, 0.05, seed)
        assert isinstance(solver, Solver)
        assert res.cost == pytest.approx(best)
        assert energy(q, res.x) == pytest.approx(res.cost)


@pytest.mark.parametrize("name", ["neuromark-sa", "neuromark-tabu"])
def test_ours_reaches_exact_mis_and_trace_is_monotone(name):
    w = mis_workload(50, 0.1, 0)
    opt = energy(w.Q, exact_mis(50, w.edges))
    solver = solvers.get(name)()
    solver.prepare(w.Q)
    res = solver.solve(w.Q, 0.2, 0)
    assert res.cost == opt == -20.0
    times = [t for t, _ in res.trace]
    costs = [c for _, c in res.trace]
    assert times == sorted(times) and costs == sorted(costs, reverse=True)
    assert costs[-1] == res.cost


def test_target_stops_early():
    w = mis_workload(100, 0.05, 0)
    solver = solvers.get("neuromark-sa")()
    solver.prepare(w.Q)
    res, wall, _ = timed_solve(solver, w, 30.0, 0, target=-40.0)
    assert res.cost <= -40.0 and wall < 10.0
    assert res.info["schedule"] == "doubling"


@pytest.mark.parametrize("name", ["dwave-tabu", "dwave-sa"])
def test_dwave_baselines_report_true_energies(name):
    pytest.importorskip("dwave.samplers")
    w = mis_workload(50, 0.05, 1)
    solver = solvers.get(name)()
    solver.prepare(w.Q)
    res, _, _ = timed_solve(solver, w, 0.02, 3)
    assert energy(w.Q, res.x) == res.cost <= 0
    assert res.x.shape == (50,)


@pytest.mark.parametrize("name", ["neuromark-sa", "neuromark-tabu", "dwave-tabu", "dwave-sa"])
def test_prepare_loads_each_q_object_once(name, monkeypatch):
    if name.startswith("dwave"):
        pytest.importorskip("dwave.samplers")
    solver = solvers.get(name)()
    built, build = [], solver._build
    monkeypatch.setattr(solver, "_build", lambda Q: built.append(Q) or build(Q))
    a = mis_workload(20, 0.2, 0).Q
    solver.prepare(a)
    solver.prepare(a)
    res = solver.solve(a, 0.02, 0)
    assert len(built) == 1 and built[0] is a and energy(a, res.x) == res.cost
    b = mis_workload(20, 0.2, 1).Q  # another workload: loaded afresh, solved on its own Q
    res = solver.solve(b, 0.02, 0)
    assert len(built) == 2 and built[1] is b and energy(b, res.x) == res.cost
    solver.solve(a.copy(), 0.02, 0)  # an equal but distinct object is loaded again
    assert len(built) == 3


def test_dwave_tabu_timeout_is_whole_milliseconds():
    pytest.importorskip("dwave.samplers")
    w = mis_workload(25, 0.1, 0)
    solver = solvers.get("dwave-tabu")()
    assert solver.solve(w.Q, 0.0005, 0).info["timeout_ms"] == 1
    assert solver.solve(w.Q, 0.0123, 0).info["timeout_ms"] == 12


def test_dwave_sa_noisy_calibration_keeps_the_read_count_bounded(monkeypatch):
    """A hiccup that makes the 210-sweep read look no slower than the 10-sweep one must not
    yield a near-zero sweep time: that asked the sampler for ~10^6 reads (allocated up
    front) and a 1-s solve took 158 s."""
    samplers = pytest.importorskip("dwave.samplers")
    from neuromark.benchmarks.qubo.solvers import dwave

    clock = iter(np.arange(0.0, 100.0, 0.5))  # every timed read "takes" the same 0.5 s
    monkeypatch.setattr(dwave.time, "perf_counter", lambda: next(clock))
    w = mis_workload(200, 0.1, 0)
    bqm, sweep_s, _ = dwave.DWaveSA()._build(w.Q)
    terms = bqm.num_variables + 2 * bqm.num_interactions
    assert sweep_s == pytest.approx(dwave.MIN_S_PER_TERM * terms)
    monkeypatch.undo()
    asked = []
    real = samplers.SimulatedAnnealingSampler.sample
    monkeypatch.setattr(samplers.SimulatedAnnealingSampler, "sample",
                        lambda self, bqm, **kw: asked.append(kw["num_reads"]) or real(self, bqm, **kw))
    solver = dwave.DWaveSA()
    solver._loaded.Q, solver._loaded.value = w.Q, (bqm, 1e-12, 0.0)  # worst case: no floor
    res = solver.solve(w.Q, 0.05, 0)
    assert asked == [dwave.MAX_STATE_ENTRIES // 200] and energy(w.Q, res.x) == res.cost


@pytest.mark.parametrize("name", ["neuromark-sa", "neuromark-tabu", "dwave-tabu"])
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "1"])
def test_bad_timeouts(name, bad):
    w = mis_workload(10, 0.1, 0)
    with pytest.raises(ConfigError, match="timeout must be a positive number"):
        solvers.get(name)().solve(w.Q, bad, 0)


def test_solver_rejects_bad_q():
    from neuromark.errors import DataError

    with pytest.raises(DataError, match="symmetric"):
        solvers.get("neuromark-sa")().solve(np.array([[0.0, 1.0], [0.0, 0.0]]), 0.01, 0)


class WrongLength:
    name = "wrong-length"

    def solve(self, Q, timeout_s, seed, *, target=None):
        return SolveResult(x=np.zeros(Q.shape[0] - 1, dtype=np.int8), cost=0.0)


class LyingCost:
    name = "lying"

    def solve(self, Q, timeout_s, seed, *, target=None):
        return SolveResult(x=np.ones(Q.shape[0], dtype=np.int8), cost=-1.0)


def test_harness_rejects_wrong_length_and_wrong_cost():
    w = mis_workload(10, 0.25, 0)
    with pytest.raises(ModelOutputError, match=r"'wrong-length' on mis-10-0.25-s0: expected a "
                                               r"binary vector of length 10"):
        timed_solve(WrongLength(), w, 0.01, 0)
    with pytest.raises(ModelOutputError, match=r"'lying'.*reported cost -1 but x\^T Q x"):
        timed_solve(LyingCost(), w, 0.01, 0)
