"""Every built-in benchmark passes :func:`neuromark.testing.benchmark.check_benchmark`, the
check plugin authors run on theirs (issue 46, item 3), each on its smallest config (those of
``tests/test_run_context.py``), in seconds. A second run must give the same scores where
that is cheap: not for psth_predictivity (its 9 s would double), qubo (what a solver
reaches within a timeout depends on the clock) and system (latencies are wall-clock). The
checks themselves can fail: a task that records no model, no device or the raw config as the
effective one is refused here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neuromark.config import BenchmarkSettings, StrictModel, validate
from neuromark.registry import tasks
from neuromark.results import Results, Score, model_identity
from neuromark.tasks.base import BenchmarkTask, TaskPlan
from neuromark.testing import ContractError, check_benchmark
from neuromark.testing.results import task_results_problems

BUILT_IN = ("classification", "closed_loop", "detection", "fscil", "mackey_glass",
            "primate_reaching", "psth_predictivity", "qubo", "system")


def _classification(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    from test_devices import toy_config

    (tmp / "data").mkdir()
    path = toy_config(tmp / "data")
    path.write_text(path.read_text().replace("checkpoint: snn.pt",
                                             "checkpoint: cache:checkpoints/toy-snn.pt"))
    return {"config": path, "repeat": True}  # the second run reuses the cached checkpoint


def _closed_loop(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    return {"config": {"task": "closed_loop", "benchmark": {"id": "cl-test", "version": "1.0"},
                       "env": {"name": "ops"},
                       "agent": {"model": {"name": "loop_wiener", "options": {"dagger_rounds": 1}}},
                       "episodes": {"count": 2, "max_steps": 60, "seeds": [0], "per_unit": 1},
                       "train": {"seeds": [9], "episodes": 2}},
            "repeat": True}


def _detection(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    from test_detection_task import DET_TINY

    path = tmp / "det.yaml"
    path.write_text(DET_TINY)
    return {"config": path, "repeat": True}


def _fscil(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    from test_fscil import _tiny_corpus

    _tiny_corpus(tmp / "cache" / "keywords" / "tiny")
    path = tmp / "fscil.yaml"
    path.write_text("""task: fscil
benchmark: {id: fscil-tiny, version: "1.0"}
data: {root: "cache:keywords/tiny", languages: [fa]}
model: {name: keyword_m5, options: {n_input: 20, n_output: 200, stride: 2, n_channel: 8,
        input_kernel: 4, pool_kernel: 2}, checkpoint: "cache:checkpoints/m5.pt"}
train: {epochs: 1, batch_size: 4, lr: 0.01}
fscil: {shots: 2, support_pool: 2, query_pool: 2, query_shots: 2, repeats: 2, seed: 1}
eval: {complexity: [synaptic_operations]}
""")
    return {"config": path, "repeat": True}


def _mackey_glass(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    return {"config": {"task": "mackey_glass", "data": {"taus": [17], "instances": 2},
                       "models": [{"name": "esn", "seed": 0}]},
            "repeat": True}


def _primate_reaching(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    return {"config": {"task": "primate_reaching", "benchmark": {"id": "pr-test", "version": "1.0"},
                       "data": {"root": "cache:primate/tiny", "surrogate": {"duration_s": 16, "seed": 1},
                                "sessions": ["indy_20160622_01", "loco_20170210_03"], "chunk": 100},
                       "model": {"name": "ridge_decoder"},
                       "checkpoint_dir": "cache:checkpoints/primate"},
            "repeat": True}


def _psth_predictivity(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    return {"config": {"task": "psth_predictivity", "benchmark": {"id": "psth-test", "version": "1.0"},
                       "data": {"root": "cache:psth/tiny", "surrogate": {"duration_s": 45, "seed": 2},
                                "sessions": ["loco_20170215_02"]},
                       "ceiling": {"n_bootstrap": 10, "min_reliability": 0.0},
                       "controller": {"iterations": 1, "hidden": 8}}}


def _qubo(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    from test_run_context import _Greedy

    from neuromark.benchmarks.qubo import energy, mis_workload
    from neuromark.benchmarks.qubo.bks import BKSRow, BKSTable, encode_solution
    from neuromark.benchmarks.qubo.exact import exact_mis
    from neuromark.registry import solvers

    w = mis_workload(12, 0.3, 7)  # not in the shipped table: its best known solution is cached
    x = exact_mis(12, w.edges)
    table = tmp / "cache" / "qubo" / "bks.csv"
    table.parent.mkdir(parents=True)
    BKSTable([BKSRow(12, 0.3, 7, energy(w.Q, x), "exact", "test", "", "", "", "2026-01-01",
                     encode_solution(x))]).save(table)
    monkeypatch.setitem(solvers._entries, "ctx-greedy", _Greedy)
    return {"config": {"task": "qubo", "benchmark": {"id": "q", "version": "1.0"},
                       "workloads": {"sizes": [12], "densities": [0.3], "seeds": [7]},
                       "solvers": [{"name": "ctx-greedy"}],
                       "fixed_timeout": {"timeouts": [0.002, 0.01]}, "plots": False},
            # time-bounded: what the solver reaches within a timeout depends on the clock
            "repeat": False}


def _system(tmp: Path, monkeypatch: Any) -> dict[str, Any]:
    pytest.importorskip("mlperf_loadgen", reason="the system track runs MLPerf LoadGen")
    return {"config": {"task": "system", "benchmark": {"id": "esn-ss", "version": "1.0"},
                       "sut": {"name": "esn", "options": {"samples": 16, "threads": 1}},
                       "timing": {"warmup": 2},
                       "loadgen": {"min_query_count": 64, "min_duration_s": 0},
                       "estimate": {}}}


CASES = {name: globals()[f"_{name}"] for name in BUILT_IN}


def test_every_built_in_task_has_a_case():
    built_in = {name for name in tasks.names()
                if type(tasks.get(name)).__module__.startswith("neuromark.")}
    assert built_in == set(CASES)


@pytest.mark.parametrize("name", BUILT_IN)
def test_built_in_benchmark_passes_the_check(name, tmp_path, monkeypatch):
    case = CASES[name](tmp_path, monkeypatch)
    check = check_benchmark(name, case["config"], tmp_path, repeat=case.get("repeat", False))
    assert check.results and all(p.is_file() for p in check.files)
    assert all(p.parent == check.out_dir for p in check.files)


# --- the check can fail: a task that breaks each rule is refused, naming the rule ----------

class CoinSettings(StrictModel):
    task: str
    benchmark: BenchmarkSettings
    flips: int = 20
    seed: int = 0


class Coin(BenchmarkTask):
    """A toy task whose results break one rule of the contract at a time (``breaks``)."""

    name = "coin"

    def __init__(self, breaks: str = "") -> None:
        self.breaks = breaks
        self.runs = 0

    def plan(self, config, ctx):
        if self.breaks == "writes in plan":
            (ctx.cache_dir / "planned.txt").parent.mkdir(parents=True, exist_ok=True)
            (ctx.cache_dir / "planned.txt").write_text("ran")
        if self.breaks == "lax keys":
            return TaskPlan(config, None)
        return TaskPlan(config, validate(CoinSettings, config.data, config))

    def execute(self, plan, ctx):
        s = plan.settings
        heads = np.random.default_rng(s.seed if s else 0).integers(0, 2, 20)
        self.runs += 1
        if self.breaks == "not deterministic":  # a different figure on every run (a fresh,
            # unseeded draw would repeat the last one's mean about 1 time in 6)
            heads = np.append(heads, np.ones(self.runs))
        config = plan.config.data if self.breaks == "raw config" else s.model_dump(mode="json")
        res = Results(scores={"heads": Score(float(heads.mean()))}, benchmark=s.benchmark.info(),
                      config=config, seeds={"flips": s.seed})
        if self.breaks == "scores a model":  # a footprint without a model identity or device
            res.scores["footprint"] = Score(64, unit="bytes", higher_is_better=False)
        if self.breaks == "missing artefact":
            res.artefacts.append("coin/plot.png")
        return [res]


COIN = {"task": "coin", "benchmark": {"id": "coin-heads", "version": "1.0"}}


def test_a_task_keeping_the_contract_passes(tmp_path):
    check = check_benchmark(Coin(), COIN, tmp_path, repeat=True)
    saved = json.loads(check.files[0].read_text())
    assert saved["config"]["effective"] == {**COIN, "flips": 20, "seed": 0,
                                            "benchmark": {"id": "coin-heads", "version": "1.0",
                                                          "parent": None, "citation": ""}}


@pytest.mark.parametrize("breaks, said", [
    ("raw config", "the effective config is the raw config as written"),
    ("scores a model", "no model identity"),
    ("missing artefact", "coin/plot.png does not exist"),
    ("writes in plan", "plan() wrote files"),
    ("lax keys", "accepted an unknown top-level key"),
    ("not deterministic", "differs between two runs"),
])
def test_a_task_breaking_a_rule_is_refused_naming_it(tmp_path, breaks, said):
    with pytest.raises(ContractError) as caught:
        check_benchmark(Coin(breaks), COIN, tmp_path, repeat=True)
    assert said in str(caught.value)


def test_a_model_score_needs_the_device_too():
    res = Results(scores={"footprint": Score(64)}, benchmark=BenchmarkSettings(id="b").info(),
                  model=model_identity("m"), config={"x": 1})
    problems = task_results_problems(res)
    assert any("no provenance.device" in p for p in problems), problems
    res.provenance["device"] = {"used": "cpu", "type": "cpu", "name": "cpu", "requested": "cpu"}
    assert task_results_problems(res) == []
    assert task_results_problems(res, track="system") == []


def test_the_checks_import_without_pytest():
    """Plugin authors may test with any runner: no module of neuromark.testing imports pytest."""
    import subprocess
    import sys

    code = ("import sys\nimport neuromark.testing as t\n"
            "for name in ('benchmark', 'results', 'adapter', 'sut', 'meter', 'dataset'):\n"
            "    __import__('neuromark.testing.' + name)\n"
            "assert 'pytest' not in sys.modules, 'pytest imported'\nprint(sorted(t.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "check_benchmark" in out.stdout and "check_meter" in out.stdout
