"""Success probability and time to solution over repeated runs (the optimisation literature's
figures; e.g. Rønnow et al., "Defining and detecting quantum speedup", Science 2014, and
QOBLIB, Koch et al., arXiv 2504.03832).

For ``R`` independent runs of ``tau`` seconds each, ``k`` of which reached the target:

- success probability ``p_s = k / R``;
- ``TTS99 = tau * ln(1 - 0.99) / ln(1 - p_s)``: the expected seconds of repeated runs until
  the target is reached at least once with 99 % confidence, never less than one run:
  ``p_s >= 0.99`` (``p_s = 1`` included) gives ``tau`` (the formula's value would be below
  one run, which no repetition achieves);
  ``p_s = 0`` gives no finite value (reported as ``None``, "not reached");
- its uncertainty: a seeded bootstrap over runs (resample the R runs with replacement,
  ``B`` times, recompute ``TTS99`` from the resampled success flags and wall times; the
  2.5 and 97.5 percentiles). A resample without a success has an infinite TTS99, so the
  upper bound is ``None`` (unbounded) when more than 2.5 % of the resamples have none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from neuromark.errors import MetricError

#: The confidence of TTS99.
CONFIDENCE = 0.99
#: Bootstrap resamples for the TTS99 interval.
BOOTSTRAP = 2000


def tts(tau_s: float, p_success: float, confidence: float = CONFIDENCE) -> float:
    """``tau * ln(1 - confidence) / ln(1 - p_s)`` seconds, at least ``tau`` (so ``tau`` at
    ``p_s = 1``); ``inf`` at ``p_s = 0``.

    Example:
        >>> round(tts(1.0, 0.5), 4)
        6.6439
    """
    if not (math.isfinite(tau_s) and tau_s > 0):
        raise MetricError(f"tts: tau must be positive seconds, got {tau_s}")
    if not 0.0 <= p_success <= 1.0:
        raise MetricError(f"tts: success probability must be in [0, 1], got {p_success}")
    if p_success >= 1.0:
        return float(tau_s)
    if p_success <= 0.0:
        return math.inf
    return max(float(tau_s), tau_s * math.log(1.0 - confidence) / math.log1p(-p_success))


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def tts_summary(success: Sequence[bool], wall_s: Sequence[float], seed: int = 0,
                resamples: int = BOOTSTRAP) -> dict[str, Any]:
    """Success probability and TTS99 of R runs (``success`` and ``wall_s``, length R) with a
    seeded bootstrap 95 % interval; ``tau`` is the mean wall time of a run.

    Returns ``{"runs", "successes", "p_success", "tau_s", "tts99_s", "tts99_ci95_s"}``;
    ``tts99_s`` is ``None`` when no run succeeded, and an interval bound is ``None`` where
    it is unbounded.
    """
    ok = np.asarray(success, dtype=bool)
    wall = np.asarray(wall_s, dtype=np.float64)
    if ok.size == 0 or ok.shape != wall.shape:
        raise MetricError(f"tts_summary: need one success flag per wall time, got "
                          f"{ok.size} and {wall.size}")
    p = float(ok.mean())
    tau = float(wall.mean())
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, ok.size, size=(resamples, ok.size))
    p_b = ok[picks].mean(axis=1)
    tau_b = wall[picks].mean(axis=1)
    tts_b = np.array([tts(t, q) for t, q in zip(tau_b, p_b)])
    low, high = np.quantile(tts_b, [0.025, 0.975], method="inverted_cdf")
    return {"runs": int(ok.size), "successes": int(ok.sum()), "p_success": p, "tau_s": tau,
            "tts99_s": _finite_or_none(tts(tau, p)),
            "tts99_ci95_s": [_finite_or_none(low), _finite_or_none(high)],
            "bootstrap": {"resamples": resamples, "seed": seed}}
