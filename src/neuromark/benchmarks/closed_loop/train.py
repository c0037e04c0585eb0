"""Training closed-loop agents by imitation with DAgger (Ross, Gordon & Bagnell, AISTATS
2011, "A reduction of imitation learning and structured prediction to no-regret online
learning"), on episodes the environment generates from the training seeds only.

Round 0 rolls out the expert (the environment's ideal controller for OPS, the ``balance``
controller for CartPole) with exploration noise; round ``r`` rolls out a mixture that
follows the expert with probability ``0.5**r`` per step and the agent otherwise. Every
visited step is labelled with the expert's action, the data of all rounds is kept, and
the agent is refit on it after each round, so it learns the states its own control leads
to (a decoder trained on the expert's states only never sees its own mistakes).

Episodes run side by side (E environments, the agent on a batch (E, 1, obs)); each
episode's seed is ``SeedSequence([train seed, 10_000 * round + episode])``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from neuromark.benchmarks.closed_loop.env import TrainingEpisodes, episode_seed


@dataclass
class Rollouts:
    """Visited steps, one array per episode: observations (T, obs) and expert labels
    (T, A) (a Box's action, or a Discrete action's one-hot)."""

    observations: list[np.ndarray]
    labels: list[np.ndarray]

    def extend(self, other: Rollouts) -> None:
        self.observations += other.observations
        self.labels += other.labels

    @property
    def steps(self) -> int:
        return sum(len(o) for o in self.observations)


def expert_label(env: Any, observation: np.ndarray) -> np.ndarray:
    """The expert's action as the agent's output: ``ideal_action()`` where the environment
    has one, else CartPole's balance controller as a one-hot."""
    ideal = getattr(env, "ideal_action", None)
    if callable(ideal):
        return np.asarray(ideal(), np.float32)
    push = 3.0 * float(observation[2]) + float(observation[3]) > 0
    return np.eye(2, dtype=np.float32)[int(push)]


def rollout(data: TrainingEpisodes, seed: int, offset: int, agent: Callable[[torch.Tensor], Any] | None,
            expert_p: float, noise: float, rng: np.random.Generator,
            reset: Callable[[], None] | None = None) -> Rollouts:
    """``data.episodes`` episodes of ``seed`` side by side: each step the expert's action
    with probability ``expert_p`` (plus Gaussian ``noise`` x its scale on a Box), else
    ``agent``'s (called on (E, 1, obs), returning (E, A) or (E, 1, A))."""
    envs = [data.make() for _ in range(data.episodes)]
    obs = [env.reset(episode_seed(seed, offset + k)) for k, env in enumerate(envs)]
    if reset is not None:
        reset()
    active = list(range(len(envs)))
    out = Rollouts([[] for _ in envs], [[] for _ in envs])  # type: ignore[list-item]
    for _ in range(data.max_steps):
        labels = [expert_label(envs[i], obs[i]) for i in active]
        outputs = None
        if agent is not None and expert_p < 1.0:
            with torch.no_grad():
                x = torch.as_tensor(np.stack([obs[i] for i in range(len(envs))]), dtype=torch.float32)
                outputs = np.asarray(agent(x[:, None, :])).reshape(len(envs), -1)
        still = []
        for j, i in enumerate(active):
            out.observations[i].append(np.asarray(obs[i], np.float32))
            out.labels[i].append(labels[j])
            use_expert = outputs is None or rng.random() < expert_p
            chosen = labels[j] if use_expert else outputs[i]
            if envs[i].action_space.kind == "box" and noise > 0:
                chosen = chosen + noise * np.abs(labels[j]).mean() * rng.standard_normal(len(chosen))
            obs[i], _, term, trunc = envs[i].step(envs[i].action_space.action(chosen))
            if not (term or trunc):
                still.append(i)
        active = still
        if not active:
            break
    return Rollouts([np.stack(o) for o in out.observations], [np.stack(lab) for lab in out.labels])


def dagger(data: TrainingEpisodes, agent: Callable[[torch.Tensor], Any],
           fit: Callable[[Rollouts], None], *, rounds: int, noise: float, seed: int = 0,
           reset: Callable[[], None] | None = None) -> dict[str, Any]:
    """Train by DAgger (see the module): ``fit(all rollouts so far)`` after each of
    ``rounds`` rounds over every training seed; returns the steps seen per round."""
    rng = np.random.default_rng(seed)
    collected = Rollouts([], [])
    steps = []
    for r in range(rounds):
        for s in data.seeds:
            collected.extend(rollout(data, s, 10_000 * r, agent if r else None, 0.5 ** r,
                                     noise if r == 0 else 0.0, rng, reset))
        steps.append(collected.steps)
        fit(collected)
    return {"dagger_rounds": rounds, "train_steps_per_round": steps}
