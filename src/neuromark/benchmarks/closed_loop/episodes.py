"""The episode loop of ``closed_loop``: one executor unit runs some episodes of one seed.

Each step: observation -> agent -> action -> environment. A network agent runs inside
:func:`neuromark.tasks.evaluation.evaluate` (the runner and the instrument every task
uses): the loop is the runner's data stream, one step per batch ``(1, 1, obs)`` with
``reset="stream"`` (state reset at each episode's start), and the runner's postprocessor
hands the output back to the loop, which steps the environment before the next batch is
asked for. So the complexity metrics are counted per step (``num_samples`` = 1 per step)
by the same probes as every task. A reference policy (no network) runs the same stream
without the runner.

A unit returns plain values (episodes, workload-metric states, plasticity counts), so the
driver merges the units of any executor in unit order (:mod:`neuromark.benchmarks.closed_loop.task`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neuromark.benchmarks.closed_loop.env import episode_seed
from neuromark.benchmarks.closed_loop.plasticity import Feedback, PlasticityCounter
from neuromark.benchmarks.closed_loop.references import ReferencePolicy
from neuromark.benchmarks.closed_loop.scores import Episode
from neuromark.context import RunContext
from neuromark.errors import DataError, ModelOutputError, NeuromarkError
from neuromark.metrics.base import WorkloadMetric
from neuromark.metrics.names import build_metrics
from neuromark.models import as_adapter
from neuromark.registry import environments, learning_rules
from neuromark.tasks.evaluation import evaluate


@dataclass(frozen=True)
class EpisodeJob:
    """A unit's work: ``episodes`` (indices) of run seed ``seed``, at most ``max_steps``
    steps each, in environment ``env`` (registry name) built with ``env_options``."""

    env: str
    env_options: dict[str, Any]
    seed: int
    episodes: tuple[int, ...]
    max_steps: int


def make_env(name: str, options: dict[str, Any]) -> Any:
    """The registered environment ``name`` built with ``options``."""
    return environments.get(name)(**options)


def make_rule(spec: tuple[str, dict[str, Any]] | None) -> Any:
    """The learning rule ``(name, options)`` (None: no learning)."""
    if spec is None:
        return None
    return learning_rules.get(spec[0])(**spec[1])


def _where(job: EpisodeJob, episode: int, step: int) -> str:
    return f"env {job.env!r}, seed {job.seed}, episode {episode}, step {step}"


def check_observation(obs: Any, job: EpisodeJob, episode: int, step: int) -> np.ndarray:
    """``obs`` as a float32 vector; :class:`DataError` naming the env, seed, episode, step
    and the first bad component when it holds NaN or infinity, or when it does not fit
    float32 (an agent would see infinity)."""
    values = np.asarray(obs, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(values) | (np.abs(np.nan_to_num(values)) > np.finfo(np.float32).max))
    if bad.size:
        i = int(bad[0])
        raise DataError(f"{_where(job, episode, step)}: the environment's observation holds "
                        f"{float(values[i])!r} at component {i} ({bad.size} of {values.size} not finite "
                        "float32); an agent cannot act on it")
    return values.astype(np.float32)


def check_action_output(output: Any, job: EpisodeJob, episode: int, step: int) -> None:
    """:class:`ModelOutputError` naming the env, seed, episode and step when the agent's
    output holds NaN or infinity (argmax would silently pick action 0, a box action would
    step the environment with NaN)."""
    values = np.asarray(output, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ModelOutputError(f"{_where(job, episode, step)}: the agent's output holds "
                               f"{float(values[int(bad[0])])!r} at value {int(bad[0])} ({bad.size} of "
                               f"{values.size} not finite); no action can be taken from it")


def episode_stream(env: Any, job: EpisodeJob, holder: dict[str, Any], records: list[Episode],
                   on_reset: Callable[[np.random.SeedSequence], None] | None = None,
                   on_step: Callable[..., None] | None = None) -> Iterator[tuple[Any, ...]]:
    """Batches ``(obs (1, 1, O), target (1, A), {"new_stream"})`` of ``job``'s episodes; after
    each, ``holder["output"]`` (set by whoever consumed the batch) is the agent's output,
    turned into the action that steps ``env``. ``target`` is the ideal action where the
    environment has one (zeros otherwise). Finished episodes are appended to ``records``;
    ``on_step(observation, output, feedback)`` follows each step (on-line learning)."""
    import torch

    ideal = getattr(env, "ideal_action", None)
    zeros = np.zeros(env.action_space.size)
    for k in job.episodes:
        obs = env.reset(episode_seed(job.seed, k))
        if on_reset is not None:
            on_reset(episode_seed(job.seed, k))
        steps, ret, new = 0, 0.0, True
        while True:
            holder["where"] = _where(job, k, steps)
            x = torch.as_tensor(check_observation(obs, job, k, steps)).reshape(1, 1, -1)
            label = np.asarray(ideal(), np.float64) if ideal is not None else zeros
            holder["obs"] = obs
            yield x, torch.as_tensor(label, dtype=torch.float32).reshape(1, -1), {"new_stream": new}
            new = False
            output = holder["output"]
            check_action_output(output, job, k, steps)
            obs, reward, terminated, truncated = env.step(env.action_space.action(output))
            if not np.isfinite(reward):
                raise DataError(f"{_where(job, k, steps)}: the environment's reward is {float(reward)!r}")
            steps += 1
            ret += reward
            if on_step is not None:
                on_step(x, output, Feedback(reward, terminated, truncated,
                                            torch.as_tensor(label) if ideal is not None else None))
            if terminated or truncated or steps >= job.max_steps:
                break
        records.append(Episode(job.seed, k, steps, ret, bool(env.success)))


def run_reference(job: EpisodeJob, name: str) -> dict[str, Any]:
    """One unit with reference policy ``name``: its episodes (as tuples)."""
    env = make_env(job.env, job.env_options)
    policy = ReferencePolicy(name, env.action_space)
    holder: dict[str, Any] = {}
    records: list[Episode] = []
    for _ in episode_stream(env, job, holder, records, on_reset=policy.reset):
        holder["output"] = policy.act(env, holder["obs"])
    return {"episodes": [tuple(e.__dict__.values()) for e in records], "states": [],
            "plasticity": None}


def run_model(job: EpisodeJob, model: Any, metrics: Sequence[Any],
              rule: tuple[str, dict[str, Any]] | None, ctx: RunContext,
              coverage: str | None = None, device: str | None = None) -> dict[str, Any]:
    """One unit with network ``model`` (copied: the caller's stays as it is) under the
    runner with ``metrics`` (metric entries, built here) on ``device`` (None: where the
    model is): its episodes, the workload metrics' states and the plasticity counts."""
    import torch

    adapter = as_adapter(copy.deepcopy(model))
    env = make_env(job.env, job.env_options)
    learner = make_rule(rule)
    module = adapter.module
    counter = PlasticityCounter(module) if learner is not None else None
    if learner is not None and callable(getattr(learner, "bind", None)):
        learner.bind(module)

    def learn(x: Any, output: Any, feedback: Feedback) -> None:
        assert counter is not None  # the rule's own forward passes are not inference
        with torch.inference_mode(False), torch.enable_grad(), harness["runner"].paused():
            obs = x.to(output.device).clone()
            counter.around(lambda: learner.update(module, obs, output.clone(), feedback))

    def capture(output: Any) -> Any:
        out = output.detach()
        holder["output"] = out.cpu().numpy()
        holder["tensor"] = out
        return out.reshape(1, -1)

    holder: dict[str, Any] = {}
    harness: dict[str, Any] = {}
    records: list[Episode] = []
    built = [m for m in build_metrics(list(metrics)) if isinstance(m, WorkloadMetric)]
    on_step = None
    if learner is not None:
        def on_step(x: Any, _: Any, feedback: Feedback) -> None:
            learn(x, holder["tensor"], feedback)
    stream = episode_stream(env, job, holder, records, on_step=on_step)
    try:
        evaluate(ctx, adapter, stream, built, postprocessors=[capture], reset="stream",
                 quiet=True, coverage=coverage, device=device,
                 on_harness=lambda runner: harness.__setitem__("runner", runner))
    except (NeuromarkError, ValueError) as exc:
        where = holder.get("where")
        if where is None or str(exc).startswith(where):
            raise
        # a failure inside the runner (e.g. NaN reaching a layer) names the episode it hit
        kind = type(exc) if isinstance(exc, NeuromarkError) else ModelOutputError
        raise kind(f"{where}: {exc}") from exc
    return {"episodes": [tuple(e.__dict__.values()) for e in records],
            "states": [m.state() for m in built],
            "plasticity": counter.state() if counter is not None else None}
