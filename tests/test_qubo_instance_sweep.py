"""QUBO sweeps over library instances (``instances:`` instead of ``workloads:``): the same
results, report and leaderboard, with each instance's optimum as its target."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from neuromark.benchmarks.qubo.task import TASK
from neuromark.config import load_config
from neuromark.errors import ConfigError, DataError
from neuromark.tasks.base import plan_and_run

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"

pytest.importorskip("numba")


def _config(tmp_path: Path, instances: str, solver: str = "neuromark-sa") -> Path:
    path = tmp_path / "cfg" / "lib.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"task: qubo\nbenchmark: {{id: lib, version: '1'}}\ninstances: {instances}\n"
                    f"solvers:\n  - name: {solver}\nseeds: [0]\n"
                    f"fixed_timeout: {{timeouts: [0.5]}}\n"  # budgets a loaded machine keeps:
                    f"time_to_solution: {{gaps: [0.0], cap_s: 2.0}}\n")  # the gaps hold under load
    return path


def test_sweep_over_instance_files_and_a_folder(tmp_path):
    folder = tmp_path / "cfg" / "mis"
    folder.mkdir(parents=True)
    for name in ("karate.gph", "karate.opt.sol"):
        shutil.copy(REAL / name, folder / name)
    (folder / "notes.txt").write_text("not an instance")
    cfg = _config(tmp_path, f"{{files: [{REAL / 'C125-9.qs.xz'}], folder: mis}}")
    res = plan_and_run(TASK, load_config(cfg), tmp_path / "out", quiet=True)[0]
    entries = [json.loads(x) for x in (tmp_path / "out" / "entries.jsonl").read_text().splitlines()]
    assert {e["instance"] for e in entries} == {"C125-9.qs", "karate.gph"}
    assert {e["bks"] for e in entries} == {-34.0, -20.0}  # the optima, from the .opt.sol files
    assert all(e["independent"] for e in entries)
    assert 0.0 <= res["bks_gap[karate.gph]@0.5s"] <= 0.1
    assert "bks_gap[C125-9.qs]@0.5s" in res.scores and "bks_gap@0.5s" in res.scores
    assert res["tts_gap0_reached"] >= 0.5
    assert "over_deadline_fraction@fixed_timeout" in res.scores
    again = plan_and_run(TASK, load_config(cfg), tmp_path / "out", quiet=True)[0]  # resumes: nothing new
    assert again.scores["bks_gap@0.5s"].value == res.scores["bks_gap@0.5s"].value


def test_instance_configs_fail_before_solving(tmp_path):
    with pytest.raises(ConfigError, match="instances.files\\[0\\]: no such file"):
        plan_and_run(TASK, load_config(_config(tmp_path, "{files: [missing.gph]}")), tmp_path / "o",
                     quiet=True)
    lone = tmp_path / "cfg" / "lone.gph"
    lone.parent.mkdir(parents=True, exist_ok=True)
    lone.write_text("p edge 3 1\ne 1 2\n")
    with pytest.raises(ConfigError, match="no optimum for .*lone.gph: put lone.opt.sol beside it"):
        plan_and_run(TASK, load_config(_config(tmp_path, "{files: [lone.gph]}")), tmp_path / "o", quiet=True)
    (tmp_path / "cfg" / "bad.gph").write_text("p edge 3 1\ne 1 7\n")
    with pytest.raises(DataError, match="bad.gph:2: index 7 out of range"):
        plan_and_run(TASK, load_config(_config(tmp_path, "{files: [bad.gph]}")), tmp_path / "o", quiet=True)
    (tmp_path / "cfg" / "empty").mkdir()
    with pytest.raises(ConfigError, match="has no instance file"):
        plan_and_run(TASK, load_config(_config(tmp_path, "{folder: empty}")), tmp_path / "o", quiet=True)
    both = _config(tmp_path, "{folder: empty}")
    both.write_text(both.read_text() + "workloads: {sizes: [10], densities: [0.1]}\n")
    with pytest.raises(ConfigError, match="either 'workloads'"):
        plan_and_run(TASK, load_config(both), tmp_path / "o", quiet=True)


class OnTime:
    """Test solver that keeps its timeout: a greedy independent set computed while loading
    (``prepare``, untimed), returned at once."""

    name = "test-on-time"

    def prepare(self, Q):
        import numpy as np

        q = Q.tocsr()
        x = np.zeros(q.shape[0], dtype=np.int8)
        for i in range(len(x)):
            if not any(x[j] for j in q.indices[q.indptr[i]:q.indptr[i + 1]] if j != i):
                x[i] = 1
        self.answer = (x, float(x @ (q @ x)))

    def solve(self, Q, timeout_s, seed, *, target=None):
        from neuromark.benchmarks.qubo.solvers import SolveResult

        x, cost = self.answer
        return SolveResult(x=x.copy(), cost=cost, trace=[(1e-5, cost)])


def test_default_config_scores_zero_over_deadline_for_an_on_time_solver(tmp_path):
    from neuromark.config import parse_yaml
    from neuromark.registry import solvers

    root = Path(__file__).resolve().parents[1]
    text = (root / "configs" / "qubo" / "mis_default.yaml").read_text()
    text = text.replace("  - name: neuromark-sa\n  - name: dwave-tabu\n", "  - name: test-on-time\n")
    assert "test-on-time" in text
    # timeouts a loaded machine cannot miss with an answer returned at once (10 ms could:
    # one stall of the process); the figure is the same rule at any timeout
    assert "timeouts: [0.01, 0.1]" in text
    text = text.replace("timeouts: [0.01, 0.1]", "timeouts: [2.0, 4.0]")
    solvers.register("test-on-time", OnTime)
    try:
        res = plan_and_run(TASK, parse_yaml(text), tmp_path, quiet=True)[0]
    finally:
        solvers._entries.pop("test-on-time", None)
    assert res["over_deadline_fraction@fixed_timeout"] == 0.0
    assert res["over_deadline_fraction@time_to_solution"] == 0.0
    fixed = res.details["over_deadline"]["fixed_timeout"]
    assert fixed["solves"] == 8 and fixed["overrun_s"]["max"] < 0  # returned early every time


def test_an_instance_sweep_passes_neuromark_check(tmp_path, capsys):
    from neuromark.cli import main

    cfg = tmp_path / "k.yaml"
    cfg.write_text(f"task: qubo\nbenchmark: {{id: k, version: '1'}}\n"
                   f"instances: {{files: [{REAL / 'karate.gph'}]}}\nsolvers:\n"
                   f"  - name: neuromark-sa\nfixed_timeout: {{timeouts: [0.01]}}\n")
    assert main(["qubo", "run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["check", str(tmp_path / "out")]) == 0, capsys.readouterr()
    results = next((tmp_path / "out").glob("k--*.json"))
    data = json.loads(results.read_text())
    entry = data["details"]["entries"][0]
    assert entry["instance"] == "karate.gph"
    entry["timeout_s"] = 0.02  # the 0.01-s run of karate is now missing
    results.write_text(json.dumps(data))
    assert main(["check", str(tmp_path / "out")]) != 0
    assert "timeout 0.01 s of the sweep is missing for 1 instance run(s), e.g. instance " \
           "karate.gph" in capsys.readouterr().out
