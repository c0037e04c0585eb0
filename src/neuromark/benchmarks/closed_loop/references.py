"""Reference policies: agents without a network, run through the same episode loop.

- ``oracle``: the environment's ideal action (:meth:`ideal_action`; OPS only): the ceiling;
- ``zero``: zeros (a Box) or action 0 (Discrete): the floor;
- ``random``: uniform in the Box's bounds (``[-1, 1]`` where it has none) or a uniform
  integer, from the episode's own seed: chance;
- ``balance``: CartPole's trivial controller, push right when ``3 theta + theta_dot > 0``
  (observation ``(x, x_dot, theta, theta_dot)``).

They have no synapses, so a run with one reports no complexity metrics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuromark.benchmarks.closed_loop.env import ActionSpace

REFERENCES = ("oracle", "zero", "random", "balance")


def check_reference(name: str, env: Any) -> str:
    """"" when reference ``name`` can drive ``env``, else why not."""
    if name not in REFERENCES:
        return f"unknown reference policy {name!r} (one of {', '.join(REFERENCES)})"
    if name == "oracle" and not callable(getattr(env, "ideal_action", None)):
        return "the oracle needs an environment with an ideal action (ops)"
    if name == "balance" and (env.observation_size != 4 or env.action_space.kind != "discrete"
                              or env.action_space.size != 2):
        return "balance is CartPole's controller (4 observations, 2 actions)"
    return ""


class ReferencePolicy:
    """One of :data:`REFERENCES`: ``reset(seed)`` per episode, ``act(env, observation)``
    returns the agent output (a float vector; a Discrete action's one-hot scores)."""

    def __init__(self, name: str, space: ActionSpace) -> None:
        self.name, self.space = name, space
        self._rng = np.random.default_rng(0)

    def reset(self, seed: np.random.SeedSequence) -> None:
        self._rng = np.random.default_rng(seed.spawn(3)[2])

    def act(self, env: Any, observation: np.ndarray) -> np.ndarray:
        size = self.space.size
        if self.name == "oracle":
            return np.asarray(env.ideal_action(), dtype=np.float64)
        if self.name == "zero":
            return np.eye(size)[0] if self.space.kind == "discrete" else np.zeros(size)
        if self.name == "balance":
            push = 3.0 * float(observation[2]) + float(observation[3]) > 0
            return np.eye(2)[int(push)]
        if self.space.kind == "discrete":
            return np.eye(size)[int(self._rng.integers(size))]
        low = np.asarray(self.space.low if self.space.low else [-1.0] * size)
        high = np.asarray(self.space.high if self.space.high else [1.0] * size)
        return self._rng.uniform(low, high)
