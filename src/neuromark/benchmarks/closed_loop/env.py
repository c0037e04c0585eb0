"""The environment protocol of closed-loop tasks, action spaces and episode seeds.

An environment is a registry entry (``neuromark.registry.environments``) called with the
config's ``env.options``; the object it returns has:

- ``observation_size`` (int): an observation is a float vector of that length;
- ``action_space`` (:class:`ActionSpace`);
- ``dt`` (s): the time one step stands for (the agent's execution rate is ``1/dt``);
- ``reset(seed) -> observation``: start an episode from the episode's own seed
  (:func:`episode_seed`);
- ``step(action) -> (observation, reward, terminated, truncated)``;
- ``success`` (bool, after an episode): whether it reached its goal;
- optional ``ideal_action()``: the action the environment's ideal controller takes now
  (the oracle reference and the training label of supervised baselines);
- ``reward_is_length`` (bool): True where the reward is 1 per step (OPS), so a higher
  return is a slower episode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from neuromark.registry import environments


@dataclass(frozen=True)
class ActionSpace:
    """``kind="box"``: a float vector of ``size`` values (clipped to ``[low, high]`` when
    those are given); ``kind="discrete"``: one of ``size`` integers, the index of the
    largest of the agent's ``size`` outputs."""

    kind: Literal["box", "discrete"]
    size: int
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None

    def describe(self) -> str:
        return (f"Discrete({self.size})" if self.kind == "discrete"
                else f"Box({self.size},)" + (f" in [{self.low}, {self.high}]" if self.low else ""))

    def action(self, output: Any) -> Any:
        """The action of an agent's output (any shape holding ``size`` values last; the
        last time step when there are several): a float64 vector or an int."""
        values = np.asarray(output, dtype=np.float64).reshape(-1, self.size)[-1]
        if self.kind == "discrete":
            return int(np.argmax(values))
        if self.low is not None and self.high is not None:
            values = np.clip(values, self.low, self.high)
        return values


class Environment(Protocol):
    """See the module docstring."""

    observation_size: int
    action_space: ActionSpace
    dt: float
    success: bool
    reward_is_length: bool

    def reset(self, seed: np.random.SeedSequence) -> np.ndarray: ...

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool]: ...


def episode_seed(seed: int, episode: int) -> np.random.SeedSequence:
    """The seed of episode ``episode`` under run seed ``seed``: ``SeedSequence([seed,
    episode])``, so each episode's draws depend on nothing else (not on the episodes before
    it, nor on where it runs)."""
    return np.random.SeedSequence([int(seed), int(episode)])


@dataclass(frozen=True)
class TrainingEpisodes:
    """Where a model family's training data comes from: ``episodes`` episodes of each of
    ``seeds`` (kept apart from the test seeds) in environment ``env`` (registry name) with
    ``options``, at most ``max_steps`` steps each."""

    env: str
    options: dict[str, Any]
    seeds: tuple[int, ...]
    episodes: int
    max_steps: int

    def make(self) -> Any:
        """A fresh environment."""
        return environments.get(self.env)(**self.options)
