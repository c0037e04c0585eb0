"""Episode scores of closed-loop runs: success rate, time to target, reward mean, standard
deviation and risk, with errors over episodes and over seeds.

Definitions (docs/closed_loop.md):

- an episode's **time** is its length in steps times ``dt`` (s), NeuroBench's ``t_sim*dt``
  (for OPS it includes the hold in the target);
- **time to target** ``time_to_target_successes_s``: mean time of the successful episodes
  (undefined without one); ``time_to_target_all_s``: mean time of all episodes, failures
  counted at their full length (NeuroBench's ``average_time_taken``);
- **reward**: mean and population standard deviation (``np.std``) of the episode returns;
  **risk**: the mean of the lowest ``int(0.05 N)`` returns (NeuroBench's ``RewardScore``),
  undefined for N < 20 episodes;
- errors: the standard error of the mean over episodes; with several seeds, over the
  seeds' means (each seed's episodes form one estimate).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from neuromark.metrics.functional.stats import standard_error


@dataclass(frozen=True)
class Episode:
    """One finished episode: its seed, index, steps, return and success."""

    seed: int
    index: int
    steps: int
    ret: float
    success: bool


def risk(returns: Sequence[float]) -> float | None:
    """Mean of the lowest ``int(0.05 N)`` returns; None when that is no return (N < 20)."""
    k = int(0.05 * len(returns))
    if k == 0:
        return None
    return sum(sorted(returns)[:k]) / k


def population_std(values: Sequence[float]) -> float:
    """Population standard deviation (ddof 0, as ``np.std``)."""
    n = len(values)
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / n)


def summarise(episodes: Sequence[Episode], dt: float) -> dict[str, Any]:
    """The figures of ``episodes`` (see the module): each as ``{"value", "error"}``
    (error over episodes; None where undefined), and ``episodes``/``successes``."""
    n = len(episodes)
    if n == 0:
        raise ValueError("no episode was run")
    ok = [1.0 if e.success else 0.0 for e in episodes]
    steps = [float(e.steps) for e in episodes]
    wins = [t for t, s in zip(steps, ok) if s]
    returns = [e.ret for e in episodes]
    return {
        "episodes": n, "successes": int(sum(ok)),
        "success_rate": {"value": sum(ok) / n, "error": standard_error(ok)},
        "time_to_target_successes_s": {"value": sum(wins) / len(wins) * dt if wins else None,
                                       "error": _times(standard_error(wins), dt)},
        "time_to_target_all_s": {"value": sum(steps) / n * dt,
                                 "error": _times(standard_error(steps), dt)},
        "reward_mean": {"value": sum(returns) / n, "error": standard_error(returns)},
        "reward_std": {"value": population_std(returns), "error": None},
        "reward_risk": {"value": risk(returns), "error": None},
        "steps_mean": sum(e.steps for e in episodes) / n,
    }


def _times(value: float | None, dt: float) -> float | None:
    return None if value is None else value * dt


#: The figures :func:`summarise` gives as ``{"value", "error"}``.
FIGURES = ("success_rate", "time_to_target_successes_s", "time_to_target_all_s", "reward_mean",
           "reward_std", "reward_risk")


def over_seeds(episodes: Sequence[Episode], dt: float) -> dict[str, Any]:
    """:func:`summarise` of all episodes pooled, with ``per_seed`` summaries; with several
    seeds every figure's ``error`` is the standard error over the seeds' values (those
    defined), and its error over episodes moves to ``error_over_episodes``."""
    pooled = summarise(episodes, dt)
    seeds = sorted({e.seed for e in episodes})
    per_seed = {s: summarise([e for e in episodes if e.seed == s], dt) for s in seeds}
    pooled["per_seed"] = {str(s): v for s, v in per_seed.items()}
    if len(seeds) > 1:
        for name in FIGURES:
            values = [v[name]["value"] for v in per_seed.values() if v[name]["value"] is not None]
            pooled[name]["error_over_episodes"] = pooled[name]["error"]
            pooled[name]["error"] = standard_error(values)
    return pooled
