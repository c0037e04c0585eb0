"""The online prosthesis simulator: NeuroBench's OPS (branch ``2025_GC``,
``neurobench/envs/ops.py`` at c8dfd47), re-implemented from its description
(``research/wave4-tasks.md`` §A1) with numpy generators of our own.

**Neurons.** ``num_neurons`` rectified cosine-tuned Poisson units. Neuron ``i`` has a
baseline rate ``lambda_min = U(0, upper_lmin) * B`` with ``B ~ Bernoulli(1 - zero_prob)``,
a peak rate ``lambda_max = U(max(lambda_min, lower_lmax), upper_lmax)`` (Hz) and a preferred
direction ``c = (cos th, sin th)``, ``th ~ U(-pi, pi)``, all drawn from one generator seeded
with ``population_seed`` (default 1337, NeuroBench's ``OPS_SEED``). Each step a unit spikes
(0/1) with probability ``p = lambda * dt``, where
``lambda = (lambda_max - lambda_min) * min(1, max(0, 1.5 <c, dv>) / max_accel) + lambda_min``,
``dv`` the step's velocity change and ``max_accel = 0.3 * max_velocity``,
``max_velocity = 20 dt`` (units/step).

**Cursor.** Starts at rest at the origin; the target lies ``min_distance`` (8) units away at
an angle ``U(-pi, pi)``. The ideal velocity points at the target with speed
``min(distance_const sqrt(d), max_velocity)``, ``distance_const = max_velocity /
sqrt(2 target_size)``; ``dv = 0.3 (ideal - v)``. An action ``u`` (2 values, "scaled
units") moves the cursor by ``u * 3.77 * dt`` and sets ``v`` to that displacement. The
ideal controller's action is ``(v + dv) / (3.77 dt)`` (:meth:`OPSEnv.ideal_action`).

**Episode.** It succeeds when the cursor stays within ``target_size`` of the target for
``hold_steps = round(min_time_in_target / dt)`` consecutive steps (leaving resets the
count) and ends then, or after ``max_steps = round(max_duration / dt)`` steps. Reward 1
per step (NeuroBench's ``reward_fn``), so the return is the episode's length.

``neurons`` reads a population from one of NeuroBench's neuron CSV files instead (e.g. the
Grand Challenge's ``gc_neuron1.csv``: the same tuning; the spike bits still differ).

Differences from the branch (docs/closed_loop.md): the spike streams are numpy's, not
torch's per-neuron generators (the statistics are the same, the bits are not); each
episode's target and spikes come from its own seed (``SeedSequence([seed, episode])``)
instead of one generator shared in episode order; step counts are integers (no
``t * dt < max_duration`` float comparison).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import Field

from neuromark.benchmarks.closed_loop.env import ActionSpace
from neuromark.config import Seed, StrictModel

#: NeuroBench's population seed (``OPS_SEED``).
OPS_SEED = 1337
VEL_SCALE = 3.77
ACCEL_CONST = 0.3


class OPSOptions(StrictModel):
    """``env.options`` of ``ops`` (defaults: the Grand Challenge tutorial's settings)."""

    num_neurons: int = Field(96, ge=1, le=100_000)
    dt: float = Field(0.01, gt=0, le=1.0, description="s per step")
    upper_lmax: float = Field(100.0, gt=0, description="Hz")
    lower_lmax: float = Field(40.0, ge=0, description="Hz")
    upper_lmin: float = Field(5.0, ge=0, description="Hz")
    zero_prob: float = Field(0.5, ge=0, le=1)
    max_duration: float = Field(3.0, gt=0, description="s")
    min_time_in_target: float = Field(0.5, gt=0, description="s")
    target_size: float = Field(2.5, gt=0)
    min_distance: float = Field(8.0, gt=0)
    population_seed: Seed = OPS_SEED
    neurons: str | None = Field(None, description="a NeuroBench neuron CSV (rows c_x, c_y, "
                                "lambda_min, lambda_max; e.g. gc_neuron1.csv) instead of "
                                "drawing the population; relative to the config's folder")


def read_neurons(path: str, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(directions (N, 2), lambda_min, lambda_max) from a NeuroBench neuron CSV (no header,
    rows ``c_x, c_y, lambda_min, lambda_max``, as ``OPS.save_neurons`` writes them);
    ``ValueError`` naming the file and row for a malformed one."""
    try:
        table = np.loadtxt(path, delimiter=",", ndmin=2, dtype=np.float64)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a neuron CSV (c_x, c_y, lambda_min, lambda_max): {exc}") from None
    if table.shape != (count, 4):
        raise ValueError(f"{path}: {table.shape[0]} rows of {table.shape[1]} values; "
                         f"num_neurons {count} needs {count} rows of 4")
    checks = [(~np.isfinite(table).all(1), "a value is not finite"),
              (table[:, 2] < 0, "lambda_min < 0"), (table[:, 3] < table[:, 2], "lambda_max < lambda_min"),
              (np.abs(np.hypot(table[:, 0], table[:, 1]) - 1) > 1e-3, "(c_x, c_y) is not a unit vector")]
    for bad, rule in checks:
        if bad.any():
            raise ValueError(f"{path}: row {int(np.argmax(bad)) + 1}: {rule}")
    return table[:, :2].copy(), table[:, 2].copy(), table[:, 3].copy()


class NeuronPopulation:
    """The units' tuning (arrays of shape (N,)) and their spikes for a velocity change."""

    def __init__(self, options: OPSOptions) -> None:
        self.dt = options.dt
        self.max_accel = 20.0 * options.dt * ACCEL_CONST
        if options.neurons is not None:
            self.direction, self.lambda_min, self.lambda_max = read_neurons(
                options.neurons, options.num_neurons)
            return
        rng = np.random.default_rng(options.population_seed)
        n = options.num_neurons
        keep = rng.random(n) >= options.zero_prob  # B: the baseline is kept
        self.lambda_min = rng.uniform(0.0, options.upper_lmin, n) * keep
        low = np.maximum(self.lambda_min, options.lower_lmax)
        self.lambda_max = low + rng.random(n) * np.maximum(options.upper_lmax - low, 0.0)
        theta = rng.uniform(-math.pi, math.pi, n)
        self.direction = np.stack([np.cos(theta), np.sin(theta)], axis=1)  # (N, 2)

    def rates(self, dv: np.ndarray) -> np.ndarray:
        """Firing rates (Hz, shape (N,)) for the velocity change ``dv`` (2,)."""
        inner = np.minimum(1.0, np.maximum(0.0, 1.5 * (self.direction @ dv)) / self.max_accel)
        return (self.lambda_max - self.lambda_min) * inner + self.lambda_min

    def spikes(self, dv: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One step's spikes (float32 0/1, shape (N,)): Bernoulli(rate * dt) per unit."""
        return (rng.random(len(self.lambda_max)) < self.rates(dv) * self.dt).astype(np.float32)


class OPSEnv:
    """The cursor task (see the module docstring); observation: the units' spikes."""

    reward_is_length = True

    def __init__(self, options: OPSOptions | None = None, **kwargs: Any) -> None:
        self.options = options if options is not None else OPSOptions(**kwargs)
        o = self.options
        self.population = NeuronPopulation(o)
        self.dt = o.dt
        self.observation_size = o.num_neurons
        self.action_space = ActionSpace("box", 2)
        self.max_velocity = 20.0 * o.dt
        self.distance_const = self.max_velocity / math.sqrt(2.0 * o.target_size)
        self.hold_steps = max(1, round(o.min_time_in_target / o.dt))
        self.max_steps = max(1, round(o.max_duration / o.dt))
        self.position = np.zeros(2)
        self.velocity = np.zeros(2)
        self.target = np.zeros(2)
        self.dv = np.zeros(2)
        self.t = self.time_in_range = 0
        self._rng = np.random.default_rng(0)

    @property
    def success(self) -> bool:
        return self.time_in_range >= self.hold_steps

    def _ideal_change(self) -> np.ndarray:
        vec = self.target - self.position
        dist = float(np.linalg.norm(vec))
        speed = min(self.distance_const * math.sqrt(dist), self.max_velocity)
        ideal = vec * (speed / dist) if dist > 0 else np.zeros(2)
        return (ideal - self.velocity) * ACCEL_CONST

    def reset(self, seed: np.random.SeedSequence) -> np.ndarray:
        """A new episode: target from ``seed``'s first draw, spikes from its own stream."""
        target_seq, spike_seq = seed.spawn(2)
        angle = np.random.default_rng(target_seq).uniform(-math.pi, math.pi)
        self._rng = np.random.default_rng(spike_seq)
        self.target = self.options.min_distance * np.array([math.cos(angle), math.sin(angle)])
        self.position, self.velocity = np.zeros(2), np.zeros(2)
        self.t = self.time_in_range = 0
        self.dv = self._ideal_change()
        return self.population.spikes(self.dv, self._rng)

    def ideal_action(self) -> np.ndarray:
        """The ideal controller's action now: ``(v + dv) / (3.77 dt)``."""
        return (self.velocity + self.dv) / (VEL_SCALE * self.dt)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool]:
        """Move by ``action * 3.77 * dt``; (spikes, 1.0, terminated, truncated)."""
        disp = np.asarray(action, dtype=np.float64).reshape(2) * VEL_SCALE * self.dt
        self.position = self.position + disp
        self.velocity = disp
        self.t += 1
        inside = float(np.linalg.norm(self.position - self.target)) < self.options.target_size
        self.time_in_range = self.time_in_range + 1 if inside else 0
        self.dv = self._ideal_change()
        spikes = self.population.spikes(self.dv, self._rng)
        return spikes, 1.0, self.success, self.t >= self.max_steps and not self.success


def ops(**options: Any) -> OPSEnv:
    """The registry entry ``ops``: an :class:`OPSEnv` of ``env.options``."""
    return OPSEnv(OPSOptions(**options))


ops.options_model = OPSOptions  # type: ignore[attr-defined]
