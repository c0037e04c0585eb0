"""Every benchmark task passes :func:`neuromark.testing.task_check.check_task`, the check
plugin authors run on theirs (issue 46, item 3), each on its smallest config, in seconds: the
case its family's ``cases.TASK_CASES`` declares (the kernel's tasks: ``tests/family_cases.py``;
``tests/test_families.py`` checks that every task has one). A second run must give the same
scores where the case asks for it (``repeat``), i.e. unless a second run would double a long
case or the scores depend on the clock (a solver's timeout, latencies). The checks
themselves can fail: a task that records no model, no device or the raw config as the
effective one is refused here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from family_cases import run_task_case, task_cases

from neuromark.config import IdentitySettings, StrictModel, validate
from neuromark.identity import model_identity
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan
from neuromark.testing import check_task
from neuromark.testing.results import ContractError, task_results_problems


@pytest.mark.parametrize("name", sorted(task_cases()))
def test_every_task_passes_the_check(name, tmp_path, monkeypatch):
    case = run_task_case(name, tmp_path, tmp_path / "cache", monkeypatch)
    check = check_task(name, case["config"], tmp_path, repeat=case.get("repeat", False))
    assert check.results and all(p.is_file() for p in check.files)
    assert all(p.parent == check.out_dir for p in check.files)


# --- the check can fail: a task that breaks each rule is refused, naming the rule ----------

class CoinSettings(StrictModel):
    task: str
    benchmark: IdentitySettings
    flips: int = 20
    seed: int = 0


class Coin(TaskBase):
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
    check = check_task(Coin(), COIN, tmp_path, repeat=True)
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
        check_task(Coin(breaks), COIN, tmp_path, repeat=True)
    assert said in str(caught.value)


def test_a_model_score_needs_the_device_too():
    res = Results(scores={"footprint": Score(64)}, benchmark=IdentitySettings(id="b").info(),
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
            "for name in ('task_check', 'results', 'adapter', 'sut', 'meter', 'dataset'):\n"
            "    __import__('neuromark.testing.' + name)\n"
            "assert 'pytest' not in sys.modules, 'pytest imported'\nprint(sorted(t.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "check_task" in out.stdout and "check_meter" in out.stdout
