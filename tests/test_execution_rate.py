"""Model execution rate (NeuroBench static metric) attached to every algorithm-track result
in BenchmarkTask.run: from a task's own score, the config, the data's time step, or
reported undefined with the reason."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import ValidationError

from neuromark.config import BenchmarkSettings, ConfigFile, StrictModel, validate
from neuromark.metrics.execution_rate import NAME, attach, execution_rate
from neuromark.results import Results, Score
from neuromark.tasks.base import BenchmarkTask, TaskPlan


class StepData(StrictModel):
    step_ms: float = 4.0

    def time_step_s(self) -> tuple[float, str]:
        return self.step_ms / 1000, "data.step_ms"


class ToyConfig(StrictModel):
    task: Literal["toy"]
    benchmark: BenchmarkSettings
    data: StepData | None = None


class ToyTask(BenchmarkTask):
    """A task with no execution-rate code of its own."""

    name = "toy"

    def plan(self, config, ctx):
        return TaskPlan(config, validate(ToyConfig, config.data, config))

    def execute(self, plan, ctx):
        return [Results({"accuracy": Score(0.5)})]


def run(data):
    (res,) = ToyTask().run(ConfigFile(data={"task": "toy", **data}), None, quiet=True)
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
    assert "execution_rate_hz" not in BenchmarkSettings(id="x", execution_rate_hz=5.0).model_dump()
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

    (res,) = SystemToy().run(ConfigFile(data={"task": "toy", "benchmark": {"id": "toy"},
                                              "data": {"step_ms": 4.0}}), None, quiet=True)
    assert NAME not in res.scores and NAME not in res.details


def test_built_in_data_declare_their_steps():
    from neuromark.tasks.detection import DataSettings as DetectionData
    from neuromark.tasks.primate_reaching import DataSettings as PrimateData

    # NeuroBench: 4-ms bins -> 250 Hz (primate reaching), 50-ms bins -> 20 Hz (event camera)
    assert 1 / PrimateData().time_step_s()[0] == pytest.approx(250.0)
    assert 1 / DetectionData(root="x").time_step_s()[0] == pytest.approx(20.0)
    assert 1 / PrimateData(bin_width=0.01).time_step_s()[0] == pytest.approx(100.0)


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan")])
def test_a_stated_rate_must_be_positive_and_finite(bad):
    with pytest.raises(ValidationError):
        BenchmarkSettings(id="x", execution_rate_hz=bad)
