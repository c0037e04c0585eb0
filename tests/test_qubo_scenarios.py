"""QUBO scenarios: power via a duck-typed meter, max supported size, parallel sweeps."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.config import parse_yaml
from neuromark.errors import ConfigError, DataError
from neuromark.registry import meters, solvers
from neuromark.system.qubo import mis_workload
from neuromark.system.qubo.scenarios import NOT_MEASURED, fixed_timeout, max_supported_size, time_to_solution
from neuromark.system.qubo.solvers import SolveResult
from neuromark.system.qubo.sweep import TASK

pytest.importorskip("numba")


class TwoWattMeter:
    """Duck-typed PowerMeter: a constant 2 W on the perf_counter clock."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.started = self.stopped = False

    def start(self):
        self.started = True

    def stop(self):
        self.stopped = True

    def mark(self, label):
        import time

        return time.perf_counter()

    def energy(self, t0, t1):
        if self.fail:
            raise DataError("trace does not cover the window")
        return 2.0 * (t1 - t0)

    def timeline(self):
        return {}

    def metadata(self):
        return {"name": "two-watt", "measured": True, "reason": ""}


class Steps:
    """Solver with a scripted trace: -1 at 1 ms, -3 at 2 ms (a 3-node, no-edge QUBO)."""

    name = "steps"

    def solve(self, Q, timeout_s, seed, *, target=None):
        import time

        time.sleep(0.003)
        return SolveResult(x=np.ones(Q.shape[0], dtype=np.int8), cost=-float(Q.shape[0]),
                           trace=[(0.001, -1.0), (0.002, -float(Q.shape[0]))])


def test_fixed_timeout_power_from_meter_and_not_measured():
    w = mis_workload(3, 0.01, 0)  # no edges: optimum -3
    out = fixed_timeout(Steps(), w, 0.05, 0, -3.0, TwoWattMeter())
    assert out["power_w"] == pytest.approx(2.0)
    assert out["energy_j"] == pytest.approx(2.0 * out["wall_s"], rel=0.5)
    assert out["gap"] == 0.0 and out["independent"] and out["within_limit"]
    out = fixed_timeout(Steps(), w, 0.01, 0, -3.0, TwoWattMeter(fail=True))
    assert out["power_w"] == NOT_MEASURED and "does not cover" in out["power_reason"]
    out = fixed_timeout(Steps(), w, 0.01, 0, -3.0, None)
    assert out["power_w"] == NOT_MEASURED and out["power_reason"] == "no power meter configured"


def test_time_to_solution_reads_the_trace():
    w = mis_workload(3, 0.01, 0)
    out = time_to_solution(Steps(), w, [0.5, 0.0], 1.0, 0, -3.0)
    # gap <= 0.5 needs cost <= -1.5: first reached at 2 ms; the optimum also at 2 ms
    assert out["latency_s"] == {"0.5": 0.002, "0": 0.002}
    out = time_to_solution(Steps(), w, [0.7], 1.0, 0, -3.0)  # cost <= -0.9: at 1 ms
    assert out["latency_s"] == {"0.7": 0.001}
    assert out["energy_j_to_gap"] == {"0.7": NOT_MEASURED}


def test_max_supported_size():
    sa = solvers.get("neuromark-sa")
    out = max_supported_size(lambda: sa(), [10, 40], 1.0, 0.01)
    assert out["largest"] == 40 and [r["cost"] for r in out["tried"]] == [-1.0, -1.0]

    class Zero:
        name = "zero"

        def solve(self, Q, timeout_s, seed, *, target=None):
            return SolveResult(x=np.zeros(Q.shape[0], dtype=np.int8), cost=0.0)

    out = max_supported_size(Zero, [10, 40], 0.01, 0.01)
    assert out["largest"] is None and len(out["tried"]) == 1 and not out["tried"][0]["ok"]


CONFIG = """task: qubo
id: s
bks: {bks}
workloads: {{sizes: [10], densities: [0.25], seeds: [0, 1]}}
solvers: [{{name: neuromark-sa}}]
fixed_timeout: {{timeouts: [0.005]}}
time_to_solution: {{gaps: [0.01], cap_s: 1.0}}
max_size: {{sizes: [10, 30], densities: [0.01, 1.0], timeout_s: 0.01}}
"""


@pytest.fixture
def bks(tmp_path):
    path = tmp_path / "bks.csv"
    path.write_text("num_vertices,density,random_seed,c_optimal\n10,0.25,0,-6\n10,0.25,1,-6\n")
    return path


def test_sweep_with_meter_max_size_and_parallel_jobs(bks, tmp_path):
    meters.register("two-watt", TwoWattMeter)
    try:
        res = TASK.run(parse_yaml(CONFIG.format(bks=bks) + "meter: {name: two-watt}\n"),
                       tmp_path / "a", quiet=True)[0]
    finally:
        meters._entries.pop("two-watt", None)
    assert res["avg_power_w@0.005s"] == pytest.approx(2.0)
    assert res["tts_gap0.01_median_energy_j"] == pytest.approx(
        2.0 * res["tts_gap0.01_median_s"], rel=1e-6)
    assert res["max_size@d=0.01"] == 30 and res["max_size@d=1"] == 30
    assert not any("power" in f for f in res.details["flags"])
    res = TASK.run(parse_yaml(CONFIG.format(bks=bks) + "jobs: 2\n"), tmp_path / "b",
                   quiet=True)[0]
    assert res["bks_gap@0.005s"] == pytest.approx(0.0, abs=0.2)
    assert any("2 parallel processes" in f for f in res.details["flags"])


def test_meter_with_jobs_is_rejected(bks):
    with pytest.raises(ConfigError, match="jobs: power is measured for one process"):
        TASK.validate(parse_yaml(CONFIG.format(bks=bks) + "meter: {name: x}\njobs: 2\n"))


def test_time_to_solution_energy_from_the_meter():
    w = mis_workload(3, 0.01, 0)
    out = time_to_solution(Steps(), w, [0.7, 0.0], 1.0, 0, -3.0, TwoWattMeter())
    assert out["energy_j_to_gap"]["0.7"] == pytest.approx(2.0 * 0.001)  # 2 W x 1 ms
    assert out["energy_j_to_gap"]["0"] == pytest.approx(2.0 * 0.002)
    out = time_to_solution(Steps(), w, [0.7], 1.0, 0, -3.0, TwoWattMeter(fail=True))
    assert out["energy_j_to_gap"] == {"0.7": NOT_MEASURED}
