"""Model execution rate (NeuroBench static metric) attached to every algorithm-track result
in TaskBase.run: from a task's own score, the config, the data's time step, or
reported undefined with the reason."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import ValidationError

from neuromark.config import ConfigFile, IdentitySettings, StrictModel, validate
from neuromark.metrics.execution_rate import NAME, attach, execution_rate
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan, plan_and_run


class StepData(StrictModel):
    step_ms: float = 4.0

    def time_step_s(self) -> tuple[float, str]:
        return self.step_ms / 1000, "data.step_ms"


class ToyConfig(StrictModel):
    task: Literal["toy"]
    benchmark: IdentitySettings
    data: StepData | None = None


class ToyTask(TaskBase):
    """A task with no execution-rate code of its own."""

    name = "toy"

    def plan(self, config, ctx):
        return TaskPlan(config, validate(ToyConfig, config.data, config))

    def execute(self, plan, ctx):
        return [Results({"accuracy": Score(0.5)})]


def run(data):
    (res,) = plan_and_run(ToyTask(), ConfigFile(data={"task": "toy", **data}), quiet=True)
    return res


def test_a_new_task_reports_the_rate_without_code_of_its_own():
    # 4-ms steps: 1 / 0.004 s = 250 Hz, derived from the data and said so
    res = run({"benchmark": {"id": "toy"}, "data": {"step_ms": 4.0}})
    assert res[NAME] == pytest.approx(250.0) and res.scores[NAME].unit == "Hz"
    assert res.details[NAME]["source"] == "data" and "data.step_ms" in res.details[NAME]["derivation"]
    # the config's statement wins over the data
    res = run({"benchmark": {"id": "toy", "execution_rate_hz": 1000}, "data": {"step_ms": 4.0}})
    assert res[NAME] == 1000.0 and res.details[NAME]["source"] == "config"
    # kept out of settings dumps: config digests and effective configs are as before
    assert "execution_rate_hz" not in IdentitySettings(id="x", execution_rate_hz=5.0).model_dump()
    # neither: no score, and the result says why
    res = run({"benchmark": {"id": "toy"}})
    assert NAME not in res.scores
    assert res.details[NAME] == {"value": None, "unit": "Hz", "source": "undefined",
                                 "derivation": execution_rate(None)["derivation"]}
    assert "benchmark.execution_rate_hz" in res.details[NAME]["derivation"]


def test_a_task_s_own_score_is_kept_and_system_tasks_get_none():
    res = attach(Results({NAME: Score(7.5, unit="Hz")}), None)
    assert res[NAME] == 7.5 and res.details[NAME]["source"] == "task"

    class SystemToy(ToyTask):
        track = "system"

    (res,) = plan_and_run(SystemToy(), ConfigFile(data={"task": "toy", "benchmark": {"id": "toy"},
                                                        "data": {"step_ms": 4.0}}), quiet=True)
    assert NAME not in res.scores and NAME not in res.details


def test_built_in_data_declare_their_steps():
    from neuromark.benchmarks.event_detection.task import DataSettings as DetectionData
    from neuromark.benchmarks.primate_reaching.task import DataSettings as PrimateData

    # NeuroBench: 4-ms bins -> 250 Hz (primate reaching), 50-ms bins -> 20 Hz (event camera)
    assert 1 / PrimateData().time_step_s()[0] == pytest.approx(250.0)
    assert 1 / DetectionData(root="x").time_step_s()[0] == pytest.approx(20.0)
    assert 1 / PrimateData(bin_width=0.01).time_step_s()[0] == pytest.approx(100.0)


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan")])
def test_a_stated_rate_must_be_positive_and_finite(bad):
    with pytest.raises(ValidationError):
        IdentitySettings(id="x", execution_rate_hz=bad)


# ---- the streaming tasks (#31.3 leftovers) -------------------------------------------------


def test_mackey_glass_rate_is_one_prediction_per_sample_of_the_series():
    from neuromark.benchmarks.mackey_glass.task import MackeyGlassConfig
    from neuromark.benchmarks.mackey_glass.task import execution_rate as mg_rate

    cfg = MackeyGlassConfig(task="mackey_glass", models=[{"name": "esn"}])
    rate = mg_rate(cfg, 17, None)
    # lyapunov.csv, tau=17: dt = L/75 = 2.5812126850748895 time units -> 0.38741 per unit
    assert rate["value"] == pytest.approx(0.387414, abs=1e-6) and rate["source"] == "data"
    assert "tau=17" in rate["derivation"] and "1 s" in rate["derivation"]
    assert mg_rate(cfg, 21, None)["value"] == pytest.approx(1 / 7.232109264118523)
    stated = MackeyGlassConfig(task="mackey_glass", models=[{"name": "esn"}], execution_rate_hz=0.5)
    assert mg_rate(stated, 17, None) == {"value": 0.5, "unit": "Hz", "source": "config",
                                         "derivation": "execution_rate_hz, as the config states it"}


def test_a_rate_the_task_wrote_is_kept_and_scored():
    res = Results({"accuracy": Score(0.5)})
    res.details[NAME] = {"value": 200.0, "unit": "Hz", "source": "data", "derivation": "x"}
    attach(res, None)
    assert res[NAME] == 200.0 and res.details[NAME]["derivation"] == "x"
    res = Results({"accuracy": Score(0.5)})
    res.details[NAME] = {"value": None, "unit": "Hz", "source": "undefined", "derivation": "y"}
    assert NAME not in attach(res, None).scores


def test_closed_loop_rate_is_the_environment_s_control_step():
    from neuromark.benchmarks.closed_loop.task import TASK
    from neuromark.config import parse_yaml
    from neuromark.context import RunContext

    text = ("task: closed_loop\nbenchmark: {id: cl-rate, version: '1.0'}\nenv: {name: ops}\n"
            "agent: {reference: zero}\nepisodes: {count: 1, max_steps: 300}\n")
    ctx = RunContext.build(quiet=True)
    plan = TASK.plan(parse_yaml(text), ctx)
    # OPS steps dt = 0.01 s: 1 / 0.01 s = 100 Hz, through the central mechanism (source data)
    assert execution_rate(plan.settings)["value"] == pytest.approx(100.0)
    (res,) = TASK.run(plan, ctx)
    assert res[NAME] == pytest.approx(100.0) and res.details[NAME]["source"] == "data"
    assert "control step" in res.details[NAME]["derivation"]
    stated = TASK.plan(parse_yaml(text.replace("'1.0'}", "'1.0', execution_rate_hz: 40}")), ctx)
    assert execution_rate(stated.settings)["value"] == 40.0


def test_keyword_and_spike_bins_declare_their_steps():
    from neuromark.benchmarks.keywords.features import KeywordFeatures
    from neuromark.benchmarks.keywords.fscil import FeatureSettings

    # GSC delta_mel: hop 80 at 16 kHz = 5 ms -> 200 Hz; MSWC (FSCIL): hop 240 at 48 kHz -> 200 Hz
    assert 1 / KeywordFeatures("delta_mel", 16000, None, 512, 80).time_step_s()[0] == pytest.approx(200)
    assert KeywordFeatures("waveform", 16000, 8000).time_step_s() is None
    assert 1 / FeatureSettings(kind="delta_mel").time_step_s()[0] == pytest.approx(200)
    assert FeatureSettings(kind="mfcc").time_step_s() is None  # M5 reads the whole clip
    from neuromark.benchmarks.keywords.fscil import FSCILConfig

    base = {"task": "fscil", "benchmark": {"id": "x"}, "data": {"root": "r"},
            "model": {"name": "keyword_lif", "checkpoint": "c.pt"}}
    # through the central mechanism: FSCILConfig.features declares the step
    assert execution_rate(FSCILConfig(**base, features={"kind": "delta_mel"}))["value"] == \
        pytest.approx(200.0)
    assert execution_rate(FSCILConfig(**base))["source"] == "undefined"  # mfcc: one per clip


def test_classification_rate_per_bin_only_when_the_model_steps_per_bin():
    from neuromark.metrics.execution_rate import per_step_rate

    bins = StepData(step_ms=20.0)  # 20-ms bins -> 50 Hz
    assert per_step_rate(bins, "spike_count")["value"] == pytest.approx(50.0)
    assert per_step_rate(bins, "max_over_time")["source"] == "data"
    once = per_step_rate(bins, "argmax")  # (B, K): one output per clip
    assert once["value"] is None and "once per clip" in once["derivation"]
    assert per_step_rate(object(), "spike_count")["value"] is None
    assert per_step_rate(bins, "argmax", IdentitySettings(id="x", execution_rate_hz=7))["value"] == 7


def test_classification_run_reports_the_rate_of_its_bins(tmp_path):
    import json

    from test_shd_snn import make_corpus

    from neuromark.cli import main
    from neuromark.registry import models

    models.register("rate_toy_snn", lambda: __import__("torch").nn.Linear(70, 2))
    try:
        make_corpus(tmp_path, n_train=4, n_test=6)
        (tmp_path / "c.yaml").write_text(
            "task: classification\nbenchmark: {id: toy-rate}\ndataset:\n  name: spike_files\n"
            "  options: {train: train.h5, test: test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}\n"
            "model: {name: rate_toy_snn}\neval: {batch_size: 3, metrics: [classification_accuracy]}\n")
        assert main(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    finally:
        models._entries.pop("rate_toy_snn", None)
    [path] = sorted((tmp_path / "out").glob("*.json"))
    saved = json.loads(path.read_text())
    # (B, T, 2) outputs decoded by spike_count: one step per 20-ms bin = 50 Hz
    assert saved["scores"][NAME]["value"] == pytest.approx(50.0)
    assert "dt_us = 20000 us" in saved["details"][NAME]["derivation"]
