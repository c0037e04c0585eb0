"""gymnasium environments as closed-loop environments (extra ``neuromark[control]``).

``env: {name: gymnasium, options: {id: CartPole-v1, kwargs: {...}}}`` runs any registered
gymnasium environment whose observation is a flat Box and whose action space is a
``Discrete`` or a flat ``Box``. The episode's seed
(:func:`~neuromark.benchmarks.closed_loop.env.episode_seed`)
becomes gymnasium's ``reset(seed=...)`` integer. ``success`` is "not terminated before the
end": an episode that ends by truncation (the time limit) or by reaching ``max_steps``
succeeds for balance tasks (CartPole), and ``success_on: terminated`` makes termination
the goal (MountainCar reaching the flag).
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

import numpy as np
from pydantic import Field

from neuromark.benchmarks.closed_loop.env import ActionSpace
from neuromark.config import StrictModel
from neuromark.errors import ConfigError, require


class GymOptions(StrictModel):
    """``env.options`` of ``gymnasium``."""

    id: str
    kwargs: dict[str, Any] = Field(default_factory=dict, description="gymnasium.make keywords")
    dt: float | None = Field(None, gt=0, description="s per step (default: the env's tau/dt)")
    success_on: Literal["truncated", "terminated"] = "truncated"


def _gym() -> Any:
    return require("gymnasium", "control")


def check_id(env_id: str, where: str) -> None:
    """:class:`ConfigError` at ``where`` when gymnasium has no environment ``env_id``,
    with close matches."""
    registry = _gym().envs.registry
    if env_id not in registry:
        close = difflib.get_close_matches(env_id, list(registry), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"{where}: env.options.id: gymnasium has no environment {env_id!r}{hint}")


def _space(space: Any, what: str) -> ActionSpace:
    spaces = _gym().spaces
    if isinstance(space, spaces.Discrete):
        return ActionSpace("discrete", int(space.n))
    if isinstance(space, spaces.Box) and len(space.shape) == 1:
        return ActionSpace("box", int(space.shape[0]), tuple(map(float, space.low)),
                           tuple(map(float, space.high)))
    raise ValueError(f"{what} {space} is neither Discrete nor a flat Box")


class GymEnv:
    """One gymnasium environment behind the closed-loop protocol."""

    reward_is_length = False

    def __init__(self, options: GymOptions) -> None:
        self.options = options
        self.env = _gym().make(options.id, **options.kwargs)
        obs = self.env.observation_space
        if len(getattr(obs, "shape", ()) or ()) != 1:
            raise ValueError(f"observation space {obs} is not a flat vector")
        self.observation_size = int(obs.shape[0])
        self.action_space = _space(self.env.action_space, "action space")
        inner = self.env.unwrapped
        self.dt = float(options.dt or getattr(inner, "tau", None) or getattr(inner, "dt", None)
                        or 0.02)
        self._terminated = self._truncated = False
        limit = getattr(getattr(self.env, "spec", None), "max_episode_steps", None)
        #: gymnasium's time limit (steps), or None when the environment has none.
        self.max_steps = int(limit) if isinstance(limit, int) and limit > 0 else None

    @property
    def success(self) -> bool:
        if self.options.success_on == "terminated":
            return self._terminated
        return not self._terminated

    def reset(self, seed: np.random.SeedSequence) -> np.ndarray:
        self._terminated = self._truncated = False
        obs, _ = self.env.reset(seed=int(seed.generate_state(1)[0]))
        return np.asarray(obs, dtype=np.float32)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool]:
        if self.action_space.kind == "box":
            action = np.asarray(action, dtype=np.float32)
        obs, reward, terminated, truncated, _ = self.env.step(action)
        self._terminated, self._truncated = bool(terminated), bool(truncated)
        return np.asarray(obs, dtype=np.float32), float(reward), self._terminated, self._truncated


def gymnasium_env(**options: Any) -> GymEnv:
    """The registry entry ``gymnasium``."""
    return GymEnv(GymOptions(**options))


gymnasium_env.options_model = GymOptions  # type: ignore[attr-defined]
