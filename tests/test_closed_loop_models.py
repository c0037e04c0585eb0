"""closed_loop (#29) with a network agent: complexity counted per step by the runner's
probes (hand-countable for one Linear layer), the output checked against the action
space at load, on-line delta learning counted, and the same figures from any unit split
and from a process pool; CartPole through gymnasium."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from neuromark.benchmarks.closed_loop.task import TASK
from neuromark.config import load_config
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.executors import LocalExecutor

NET = """import torch
from torch import nn


def build(outputs: int = 2):
    torch.manual_seed(0)
    layer = nn.Linear(96, outputs)
    with torch.no_grad():
        layer.weight.mul_(20.0)
    return layer
"""


def _config(tmp_path, *, outputs=2, count=6, per_unit=10, seeds="[0, 1]", extra=""):
    (tmp_path / "net.py").write_text(NET)
    path = tmp_path / "loop.yaml"
    path.write_text(
        "task: closed_loop\n"
        "benchmark: {id: cl-linear, version: '1.0'}\n"
        "env: {name: ops}\n"
        "agent:\n"
        f"  model: {{name: python, options: {{factory: 'net.py:build', kwargs: {{outputs: {outputs}}}}}}}\n"
        f"episodes: {{count: {count}, max_steps: 60, seeds: {seeds}, per_unit: {per_unit}}}\n"
        f"{extra}\n")
    return load_config(path)


def _run(config, ctx=None):
    ctx = ctx or RunContext.build(quiet=True)
    return TASK.execute(TASK.plan(config, ctx), ctx)[0]


def _figures(res):
    return {k: (v.value, v.error) for k, v in res.scores.items()}, res.details["per_episode"]


def test_complexity_per_step_episode_and_second(tmp_path):
    res = _run(_config(tmp_path))
    ops = res.scores["synaptic_operations"].value
    assert ops["Dense"] == 96 * 2  # every weight once per step
    assert ops["Effective_MACs"] == 0.0  # spikes are 0/1: accumulates only
    steps = res.details["episodes"]["steps_mean"]
    assert res.scores["synaptic_operations_per_episode"].value["Dense"] == pytest.approx(192 * steps)
    assert res.scores["synaptic_operations_per_s"].value["Dense"] == pytest.approx(192 * 100)
    assert res.details["execution_rate_hz"] == pytest.approx(100.0)
    # effective ACs: 2 per input spike, i.e. twice the mean spike count per step
    assert 0 < ops["Effective_ACs"] < 192


def test_unit_split_and_process_pool_give_the_same_figures(tmp_path):
    one = _figures(_run(_config(tmp_path, per_unit=10)))
    split = _figures(_run(_config(tmp_path, per_unit=1)))
    assert one == split
    ctx = dataclasses.replace(RunContext.build(quiet=True), executor=LocalExecutor(processes=2))
    try:
        pooled = _figures(_run(_config(tmp_path, per_unit=2), ctx))
    finally:
        ctx.executor.close()
    assert one == pooled


def test_output_size_is_checked_against_the_action_space(tmp_path):
    with pytest.raises(ConfigError) as info:
        TASK.plan(_config(tmp_path, outputs=3), RunContext.build(quiet=True))
    assert "loop.yaml:5" in str(info.value) and "Box(2,)" in str(info.value)


def test_delta_learning_counts_plasticity_in_synaptic_units(tmp_path):
    res = _run(_config(tmp_path, seeds="[0]", count=2,
                       extra="learning: {rule: delta, options: {lr: 0.001}}"))
    changed = res.scores["plasticity_operations"].value  # elements written per step
    fraction = res.scores["weights_changed_fraction"].value
    assert fraction == pytest.approx(changed / (96 * 2 + 2))  # of 194 elements per step
    # one update per input spike and output (2 per spike) plus the 2 biases
    acs = res.scores["synaptic_operations"].value["Effective_ACs"]
    assert changed == pytest.approx(acs + 2, rel=0.02)


def test_cartpole_through_gymnasium(tmp_path):
    pytest.importorskip("gymnasium")
    path = tmp_path / "cart.yaml"
    path.write_text("task: closed_loop\nbenchmark: {id: cart, version: '1.0'}\n"
                    "env: {name: gymnasium, options: {id: CartPole-v1}}\n"
                    "agent: {reference: balance}\nepisodes: {count: 2, max_steps: 100}\n")
    res = _run(load_config(path))
    assert res.scores["success_rate"].value == 1.0 and res.scores["reward_mean"].value == 100.0
    assert res.details["dt_s"] == pytest.approx(0.02)  # CartPole's tau
    path.write_text(path.read_text().replace("balance", "oracle"))
    with pytest.raises(ConfigError, match="ideal action"):
        TASK.plan(load_config(path), RunContext.build(quiet=True))


@pytest.mark.slow
def test_ray_gives_the_local_figures(tmp_path):
    """Episodes as Ray units (a local 2-CPU Ray; slow: Ray starts in ~10 s)."""
    pytest.importorskip("ray")
    from neuromark.executors.ray_executor import RayExecutor

    local = _figures(_run(_config(tmp_path, per_unit=2)))
    executor = RayExecutor(num_cpus=2)
    try:
        ctx = dataclasses.replace(RunContext.build(quiet=True), executor=executor)
        assert _figures(_run(_config(tmp_path, per_unit=2), ctx)) == local
    finally:
        executor.close()


def test_a_family_trains_on_training_seeds_and_is_cached(tmp_path):
    """loop_wiener (closed form, one DAgger round of 3 episodes): trained once, then reused;
    training seeds among the test seeds are refused at load."""
    path = tmp_path / "w.yaml"
    text = ("task: closed_loop\nbenchmark: {id: w, version: '1.0'}\nenv: {name: ops}\n"
            "agent: {model: {name: loop_wiener, options: {dagger_rounds: 1}}}\n"
            "episodes: {count: 3, max_steps: 300, seeds: [0]}\n"
            "train: {seeds: [7], episodes: 3}\ncheckpoint_dir: ckpt\n")
    path.write_text(text)
    first = _run(load_config(path))
    again = _run(load_config(path))
    assert first.details["model"]["trained_now"] and not again.details["model"]["trained_now"]
    assert _figures(first) == _figures(again)
    path.write_text(text.replace("seeds: [7]", "seeds: [8]"))  # other training data
    other = TASK._prepared(TASK.plan(load_config(path), RunContext.build(quiet=True)))
    assert other.trained and other.path != Path(first.details["model"]["checkpoint"])
    path.write_text(text.replace("seeds: [7]", "seeds: [7, 0]"))
    with pytest.raises(ConfigError, match="test seeds too"):
        TASK.plan(load_config(path), RunContext.build(quiet=True))


class AutogradForward:
    """A learning rule that runs the network itself with autograd (forward, backward) and
    leaves the weights as they are."""

    def update(self, module, observation, output, feedback) -> None:
        import torch

        module(observation).pow(2).sum().backward()
        module.zero_grad()
        assert torch.is_grad_enabled()


def test_a_learning_rule_running_the_network_adds_no_synaptic_ops(tmp_path):
    from neuromark.registry import learning_rules

    plain = _run(_config(tmp_path, seeds="[0]", count=2))
    learning_rules.register("test_autograd_forward", AutogradForward)
    try:
        learned = _run(_config(tmp_path, seeds="[0]", count=2,
                               extra="learning: {rule: test_autograd_forward}"))
    finally:
        learning_rules._entries.pop("test_autograd_forward", None)
        learning_rules._origins.pop("test_autograd_forward", None)
    assert learned.scores["plasticity_operations"].value == 0  # the weights did not move
    # the rule's forward passes (one per step, under the instrument's pause) count nothing
    assert learned.scores["synaptic_operations"].value == plain.scores["synaptic_operations"].value
    assert learned.details["episodes"] == plain.details["episodes"]
