"""KaMIS (extra ``neuromark[kamis]``: chszlablib) as a QUBO solver: the solver contract and
the same checks as our solvers' (independence, recomputed energy, overrun measured)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from neuromark.benchmarks.qubo.library import load_instance, read_solution
from neuromark.benchmarks.qubo.repeat import solve_runs
from neuromark.errors import ConfigError

lib = pytest.importorskip("chszlablib", reason="KaMIS needs the extra neuromark[kamis] "
                          "(chszlablib==0.5.27)")

from neuromark.benchmarks.qubo.config import SolverSpec  # noqa: E402
from neuromark.benchmarks.qubo.solvers.kamis import KaMIS  # noqa: E402
from neuromark.benchmarks.qubo.task import make_solver  # noqa: E402

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"


def _optimum(name: str) -> tuple[object, float, int]:
    """The instance, its optimum's energy and |S*| from QOBLIB's own .opt.sol."""
    inst = load_instance(REAL / f"{name}.gph")
    x = read_solution(REAL / f"{name}.opt.sol", inst.n)
    return inst, inst.cost(x), int(x.sum())


@pytest.mark.parametrize("name,timeout", [("karate", 0.5), ("C125-9", 1.0)])
def test_kamis_reaches_the_qoblib_optima_through_the_solve_path(name, timeout):
    inst, opt, size = _optimum(name)
    solver = make_solver(SolverSpec(name="kamis"))
    result = solve_runs(solver, inst, timeout, 1, 0, optimum=opt, optimum_source="opt.sol",
                        optimum_size=size)
    run = result["runs"][0]
    assert run["feasible"] and run["size"] == size  # 20 on karate, 34 on C125-9
    assert result["summary"]["p_success"] == 1.0
    assert run["energy"] == pytest.approx(-size)  # recomputed from Q: -|S| + 8 e(S)


def test_kamis_options_are_checked_and_every_algorithm_runs():
    with pytest.raises(ConfigError):
        make_solver(SolverSpec(name="kamis", options={"algorithm": "quantum"}))
    inst, opt, size = _optimum("karate")
    for algorithm in ("online_mis", "branch_reduce"):
        res = KaMIS(algorithm).solve(inst.Q, 0.5, seed=1)
        assert int(res.x.sum()) == size and res.info["algorithm"] == algorithm
        assert res.cost == pytest.approx(inst.cost(res.x))


def test_kamis_refuses_a_qubo_that_is_not_mis():
    Q = sp.csr_matrix(np.array([[1.0, -2.0], [-2.0, 1.0]]))
    with pytest.raises(ConfigError, match="maximum-independent-set form"):
        KaMIS().solve(Q, 0.1, seed=0)


def test_overrun_is_measured_and_a_wrong_set_is_reported_not_hidden(monkeypatch):
    inst, opt, size = _optimum("karate")

    class Late:
        size = 34
        vertices = np.arange(34)  # every vertex: not independent

    def late(graph, time_limit, seed):  # noqa: ANN001, ARG001
        time.sleep(time_limit + 0.3)
        return Late()

    monkeypatch.setattr(lib.IndependenceProblems, "redumis", staticmethod(late))
    result = solve_runs(KaMIS(), inst, 0.05, 1, 0, optimum=opt, optimum_source="opt.sol",
                        optimum_size=size)
    run = result["runs"][0]
    assert run["wall_s"] >= 0.34 and run["overrun_s"] >= 0.29 and not run["within_limit"]
    assert run["feasible"] is False and run["size"] == 34
    assert result["summary"]["p_success"] == 0.0
    # its energy is the recomputed x^T Q x, penalties included (78 edges x 8 - 34)
    assert run["energy"] == pytest.approx(-34 + 8 * 78)
