"""closed_loop against hostile inputs (#41): NaN or infinite observations, rewards and
agent outputs stop the run naming env, seed, episode and step (never an argmax-0 action
and a reward); NaN weights are refused at load naming the weight; a run whose estimated
work exceeds the stated limit is refused before any work unless --allow-long."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.benchmarks.closed_loop.config import WORK_LIMIT_STEPS
from neuromark.benchmarks.closed_loop.env import ActionSpace
from neuromark.benchmarks.closed_loop.task import TASK
from neuromark.config import load_config, parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError, DataError, ModelOutputError
from neuromark.registry import environments


class _Broken:
    """A 3-value observation environment that turns bad at step ``bad_step``: ``what``
    is ``obs`` (NaN component 1), ``reward`` (NaN reward) or ``huge`` (1e39 > float32)."""

    reward_is_length = False
    observation_size = 3
    action_space = ActionSpace("discrete", 2)
    dt = 0.02

    def __init__(self, what: str = "obs", bad_step: int = 2) -> None:
        self.what, self.bad_step, self.t, self.success = what, bad_step, 0, False

    def _obs(self) -> np.ndarray:
        obs = np.zeros(3)
        if self.t >= self.bad_step and self.what == "obs":
            obs[1] = np.nan
        if self.t >= self.bad_step and self.what == "huge":
            obs[2] = 1e39
        return obs

    def reset(self, seed: np.random.SeedSequence) -> np.ndarray:
        self.t = 0
        return self._obs()

    def step(self, action):
        self.t += 1
        reward = np.nan if (self.what == "reward" and self.t >= self.bad_step) else 1.0
        return self._obs(), reward, False, False


@pytest.fixture
def broken_env():
    environments.register("broken_test_env", _Broken)
    yield
    environments._entries.pop("broken_test_env", None)


def _run(text: str, ctx: RunContext | None = None):
    ctx = ctx or RunContext.build(quiet=True)
    return TASK.execute(TASK.plan(parse_yaml(text), ctx), ctx)[0]


def _cfg(agent: str, env: str, count: int = 2, max_steps: int = 6, seeds: str = "[0]") -> str:
    return (f"task: closed_loop\nbenchmark: {{id: cl-hostile, version: '1.0'}}\nenv: {env}\n{agent}\n"
            f"episodes: {{count: {count}, max_steps: {max_steps}, seeds: {seeds}}}\n")


@pytest.mark.parametrize("what, rule", [("obs", "observation holds nan at component 1"),
                                        ("huge", "observation holds 1e+39 at component 2"),
                                        ("reward", "reward is nan")])
def test_closed_loop_non_finite_observation_or_reward_is_refused_naming_the_step(broken_env, what, rule):
    text = _cfg("agent: {reference: random}", f"{{name: broken_test_env, options: {{what: {what}}}}}")
    with pytest.raises(DataError) as info:
        _run(text)
    msg = str(info.value)
    assert "env 'broken_test_env', seed 0, episode 0, step" in msg and rule in msg


NAN_NET = """import torch
from torch import nn


def build(poison: str = "output"):
    torch.manual_seed(0)
    layer = nn.Linear(96, 2)
    if poison == "weight":
        with torch.no_grad():
            layer.weight[0, 5] = float("nan")
        return layer

    class NanOut(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = layer
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            out = self.fc(x)
            return out * float("nan") if self.calls > 3 else out

    return NanOut()
"""


def _nan_config(tmp_path, poison: str):
    (tmp_path / "net.py").write_text(NAN_NET)
    path = tmp_path / "loop.yaml"
    path.write_text(_cfg(f"agent:\n  model: {{name: python, options: {{factory: 'net.py:build', "
                         f"kwargs: {{poison: {poison}}}}}}}", "{name: ops}", max_steps=60))
    return load_config(path)


def test_closed_loop_nan_agent_output_is_refused_not_argmax_zero(tmp_path):
    ctx = RunContext.build(quiet=True)
    config = _nan_config(tmp_path, "output")
    with pytest.raises(ModelOutputError) as info:
        TASK.execute(TASK.plan(config, ctx), ctx)
    msg = str(info.value)
    assert "env 'ops', seed 0, episode 0, step" in msg and "nan" in msg.lower()


def test_closed_loop_nan_weight_is_refused_at_load_naming_the_weight(tmp_path):
    with pytest.raises(ConfigError) as info:
        TASK.plan(_nan_config(tmp_path, "weight"), RunContext.build(quiet=True))
    msg = str(info.value)
    assert "loop.yaml:5" in msg and "weight 'weight' (2, 96) holds 1 NaN" in msg


def test_closed_loop_work_over_the_limit_needs_allow_long(capsys):
    count = WORK_LIMIT_STEPS // 300 // 3 + 1  # 3 seeds x count x 300 steps > the limit
    text = _cfg("agent: {reference: zero}", "{name: ops}", count=count, max_steps=300, seeds="[0, 1, 2]")
    with pytest.raises(ConfigError) as info:
        TASK.plan(parse_yaml(text), RunContext.build(quiet=True))
    msg = str(info.value)
    assert "<config>:5" in msg and "--allow-long" in msg and f"{3 * count * 300:,}" in msg
    # allowed: the estimate is said before any work (plan only here; nothing runs)
    TASK.plan(parse_yaml(text), RunContext.build(quiet=True, allow_long=True))
    assert "--allow-long" in capsys.readouterr().err
    # the OPS environment's own episode limit (3 s / 10 ms = 300 steps) bounds the estimate
    text = _cfg("agent: {reference: zero}", "{name: ops}", count=count, max_steps=10_000_000,
                seeds="[0, 1, 2]")
    with pytest.raises(ConfigError, match=f"{3 * count * 300:,} test steps"):
        TASK.plan(parse_yaml(text), RunContext.build(quiet=True))


def test_closed_loop_work_limit_is_asked_for_on_the_command_line(tmp_path):
    from neuromark.cli import main

    count = WORK_LIMIT_STEPS // 300 + 1
    path = tmp_path / "long.yaml"
    path.write_text(_cfg("agent: {reference: zero}", "{name: ops}", count=count, max_steps=300))
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 1 and not (tmp_path / "out").exists()  # refused at planning: no folder
