"""closed_loop (#29): the OPS environment against hand-computed values, reference agents,
episode scores on hand-made returns, the plasticity count of a hand-written delta rule,
config errors at load, and the same figures from any unit split or executor."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from neuromark.benchmarks.closed_loop.env import episode_seed
from neuromark.benchmarks.closed_loop.ops import OPSEnv, OPSOptions
from neuromark.benchmarks.closed_loop.plasticity import Feedback, PlasticityCounter
from neuromark.benchmarks.closed_loop.scores import Episode, over_seeds, risk, summarise
from neuromark.benchmarks.closed_loop.task import TASK
from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.tasks.base import plan_and_run


def run(text: str, ctx: RunContext | None = None):
    ctx = ctx or RunContext.build(quiet=True)
    return TASK.execute(TASK.plan(parse_yaml(text), ctx), ctx)[0]


def test_rates_follow_the_rectified_cosine_tuning():
    env = OPSEnv(OPSOptions())
    pop = env.population
    assert env.max_velocity == pytest.approx(0.2) and pop.max_accel == pytest.approx(0.06)
    assert np.allclose(pop.rates(np.zeros(2)), pop.lambda_min)  # no change: baseline
    i = 7
    c = pop.direction[i]
    # dv = 0.02 c: inner = 1.5 * 0.02 / 0.06 = 0.5
    half = (pop.lambda_max[i] - pop.lambda_min[i]) * 0.5 + pop.lambda_min[i]
    assert pop.rates(0.02 * c)[i] == pytest.approx(half)
    assert pop.rates(0.1 * c)[i] == pytest.approx(pop.lambda_max[i])  # saturates at 1
    assert pop.rates(-0.1 * c)[i] == pytest.approx(pop.lambda_min[i])  # rectified
    # the population's draws: zero_prob 0.5 of the baselines are 0, peaks in [40, 100] Hz
    assert 30 <= int((pop.lambda_min == 0).sum()) <= 66
    assert pop.lambda_max.min() >= 40 and pop.lambda_max.max() <= 100
    assert np.allclose(np.linalg.norm(pop.direction, axis=1), 1.0)


def test_spike_counts_match_the_rates():
    env = OPSEnv(OPSOptions())
    rng = np.random.default_rng(3)
    dv = 0.03 * env.population.direction[0]
    counts = sum(env.population.spikes(dv, rng) for _ in range(4000))
    expected = env.population.rates(dv) * 0.01 * 4000
    # binomial: 5 standard deviations
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected * (1 - expected / 4000)) + 1)


def test_cursor_steps_by_action_times_3_77_dt_and_holds_consecutively():
    env = OPSEnv(OPSOptions())
    env.reset(episode_seed(0, 0))
    target = env.target.copy()
    assert np.linalg.norm(target) == pytest.approx(8.0)
    u = np.array([1.0, -2.0])
    env.step(u)
    assert np.allclose(env.position, u * 3.77 * 0.01) and np.allclose(env.velocity, u * 0.0377)
    # jump into the target: 49 steps inside do not end it, leaving resets the count
    env.position = target.copy()
    for _ in range(49):
        _, reward, terminated, _ = env.step(np.zeros(2))
        assert reward == 1.0 and not terminated
    assert env.time_in_range == 49
    env.step(np.array([300.0, 0.0]))  # 11.3 units away
    assert env.time_in_range == 0


def test_ideal_action_is_the_velocity_after_the_change():
    env = OPSEnv(OPSOptions())
    env.reset(episode_seed(0, 1))
    # at rest, far away: ideal speed max_velocity, dv = 0.3 * ideal
    direction = env.target / np.linalg.norm(env.target)
    assert np.allclose(env.ideal_action(), 0.3 * 0.2 * direction / (3.77 * 0.01))


def test_oracle_reaches_every_target_and_zero_none():
    oracle = run(_cfg("agent: {reference: oracle}", count=20))
    zero = run(_cfg("agent: {reference: zero}", count=5))
    assert oracle.scores["success_rate"].value == 1.0
    assert zero.scores["success_rate"].value == 0.0
    assert "time_to_target_successes_s" not in zero.scores  # no success: undefined
    assert zero.scores["time_to_target_all_s"].value == pytest.approx(3.0)
    steps = {row[2] for row in oracle.details["per_episode"]}
    assert len(steps) == 1 and steps.pop() >= 50  # the hold alone takes 50 steps
    # reward 1 per step: the return is the length, and higher is worse there
    assert oracle.scores["reward_mean"].value == oracle.scores["time_to_target_all_s"].value * 100
    assert oracle.scores["reward_mean"].higher_is_better is False


def test_scores_on_hand_made_returns():
    returns = [float(v) for v in range(1, 21)]  # 1..20
    assert risk(returns) == 1.0  # int(0.05 * 20) = 1 lowest
    assert risk(returns * 2) == 1.0  # 40: the two lowest, 1 and 1
    assert risk(returns[:19]) is None  # fewer than 20: undefined
    eps = [Episode(0, i, int(r), r, i % 4 == 0) for i, r in enumerate(returns)]
    s = summarise(eps, dt=0.5)
    assert s["reward_mean"]["value"] == 10.5
    assert s["reward_std"]["value"] == pytest.approx(math.sqrt((20 ** 2 - 1) / 12))
    assert s["success_rate"]["value"] == 0.25  # episodes 0, 4, 8, 12, 16
    assert s["time_to_target_successes_s"]["value"] == pytest.approx(0.5 * (1 + 5 + 9 + 13 + 17) / 5)
    assert s["time_to_target_all_s"]["value"] == pytest.approx(0.5 * 10.5)
    sd = math.sqrt(sum((r - 10.5) ** 2 for r in returns) / 19)
    assert s["reward_mean"]["error"] == pytest.approx(sd / math.sqrt(20))
    # two seeds: the error is over the seeds' means
    two = over_seeds(eps[:10] + [Episode(1, e.index, e.steps, e.ret, e.success) for e in eps[10:]], 0.5)
    # seed means 5.5 and 15.5: sample sd sqrt(50), over sqrt(2) seeds: 5
    assert two["reward_mean"]["error"] == pytest.approx(5.0)
    assert two["reward_mean"]["error_over_episodes"] == pytest.approx(sd / math.sqrt(20))


class HandDelta:
    """W += lr (t - y) x^T on a Linear(3, 2), written out by hand (no bias change)."""

    def update(self, module, observation, output, feedback):
        x = observation.reshape(-1)
        err = feedback.ideal_action - output.reshape(-1)
        with torch.no_grad():
            module.weight += 0.1 * torch.outer(err, x)


def test_plasticity_count_of_a_hand_written_delta_rule():
    layer = nn.Linear(3, 2)
    counter = PlasticityCounter(layer)
    rule = HandDelta()
    steps = [(torch.tensor([1.0, 0.0, 2.0]), torch.tensor([0.5, -0.5])),  # 2 x 2 weights move
             (torch.tensor([0.0, 0.0, 1.0]), torch.tensor([1.0, -1.0])),  # 2 x 1
             (torch.tensor([1.0, 1.0, 1.0]), None)]                         # output == target: 0
    for x, target in steps:
        y = layer(x).detach()
        fb = Feedback(1.0, False, False, y + target if target is not None else y)
        counter.around(lambda x=x, y=y, fb=fb: rule.update(layer, x, y, fb))
    # hand count: 4 + 2 + 0 weights changed, of (6 + 2) elements per step
    assert counter.state() == {"changed": 6, "total": 24, "steps": 3}


def _cfg(agent: str, count: int = 4, seeds: str = "[0]", extra: str = "", env: str = "{name: ops}",
         max_steps: int = 300, per_unit: int = 10) -> str:
    return (f"task: closed_loop\nbenchmark: {{id: cl-test, version: '1.0'}}\nenv: {env}\n{agent}\n"
            f"episodes: {{count: {count}, max_steps: {max_steps}, seeds: {seeds}, "
            f"per_unit: {per_unit}}}\n{extra}\n")


def _plan_error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        TASK.plan(parse_yaml(text), RunContext.build(quiet=True))
    return str(info.value)


def test_config_errors_name_the_line_before_any_work():
    msg = _plan_error(_cfg("agent: {reference: oracle}", env="{name: gymnasium, options: {id: CartPol-v1}}"))
    assert "<config>:3" in msg and "CartPole-v1" in msg  # close match
    msg = _plan_error(_cfg("agent: {reference: oracle}", env="{name: opz}"))
    assert "env.name" in msg and "'ops'" in msg
    msg = _plan_error(_cfg("agent: {reference: balance}"))
    assert "balance is CartPole's" in msg
    msg = _plan_error(_cfg("agent: {reference: oracle}", max_steps=40))
    assert "no episode can succeed" in msg and "<config>:5" in msg
    msg = _plan_error(_cfg("agent: {reference: oracle}", extra="learning: {rule: delta}"))
    assert "reference policy has no weights" in msg
    msg = _plan_error(_cfg("agent: {reference: oracle}", seeds="[1, 1]"))
    assert "listed twice" in msg


def test_a_family_that_cannot_drive_the_environment_is_refused_at_load():
    pytest.importorskip("gymnasium")
    msg = _plan_error(_cfg("agent: {model: {name: loop_wiener}}",
                           env="{name: gymnasium, options: {id: Pendulum-v1}}"))
    assert "<config>:4" in msg and "loop_wiener" in msg and "has 1" in msg
    msg = _plan_error(_cfg("agent: {model: {name: loop_snn, options: {input_range: [[0], [1]]}}}"))
    assert "input_range needs 96" in msg


def _neuron_csv(path, rows=96, bad_row=None):
    """A population in NeuroBench's neuron CSV layout (no header: c_x, c_y, lambda_min,
    lambda_max), as OPS.save_neurons writes it."""
    angles = np.linspace(-math.pi, math.pi, rows, endpoint=False)
    lines = [f"{math.cos(a)},{math.sin(a)},{2.0 if i % 2 else 0.0},{50.0 + i % 40}"
             for i, a in enumerate(angles)]
    if bad_row is not None:
        lines[bad_row] = "1.0,0.0,10.0,5.0"  # lambda_max < lambda_min
    path.write_text("\n".join(lines) + "\n")


def test_a_neurobench_neuron_file_sets_the_population(tmp_path):
    _neuron_csv(tmp_path / "gc_neuron1.csv")
    env = OPSEnv(OPSOptions(neurons=str(tmp_path / "gc_neuron1.csv")))
    pop = env.population
    assert pop.lambda_min[1] == 2.0 and pop.lambda_max[3] == 53.0
    assert np.allclose(pop.direction[0], [-1.0, 0.0])
    # the rate rule on the file's neurons: dv along c_0 at 0.02 -> inner 0.5
    assert pop.rates(0.02 * pop.direction[0])[0] == pytest.approx(0.5 * 50.0)
    (tmp_path / "cl.yaml").write_text(_cfg("agent: {reference: oracle}", count=2,
                                           env="{name: ops, options: {neurons: gc_neuron1.csv}}"))
    from neuromark.config import load_config

    res = plan_and_run(TASK, load_config(tmp_path / "cl.yaml"), ctx=RunContext.build(quiet=True))[0]
    assert res.scores["success_rate"].value == 1.0
    _neuron_csv(tmp_path / "gc_neuron1.csv", bad_row=4)
    with pytest.raises(ConfigError) as info:
        TASK.plan(load_config(tmp_path / "cl.yaml"), RunContext.build(quiet=True))
    assert "cl.yaml:3" in str(info.value) and "row 5: lambda_max < lambda_min" in str(info.value)
