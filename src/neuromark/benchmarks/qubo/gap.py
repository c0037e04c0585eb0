"""The BKS-gap: relative distance of a cost to the best-known solution's cost."""

from __future__ import annotations

import math

from neuromark.errors import MetricError


def bks_gap(cost: float, target: float) -> float:
    """``(cost - target) / |target|``: 0 at the BKS, > 0 when worse, < 0 when better.

    The NeuroBench spec writes ``(c - c_target) / c_target``, which flips the sign for
    the negative costs of MIS; dividing by ``|c_target|`` keeps "positive = worse".

    Example:
        >>> bks_gap(-95.0, -100.0)
        0.05
    """
    if not math.isfinite(cost):
        raise MetricError(f"bks_gap: cost must be finite, got {cost}")
    if not math.isfinite(target) or target == 0:
        raise MetricError(f"bks_gap: target cost must be finite and non-zero, got {target}")
    return (float(cost) - float(target)) / abs(float(target))


def cost_at_gap(target: float, gap: float) -> float:
    """The largest cost whose BKS-gap is <= ``gap`` (the threshold for time to solution)."""
    return float(target) + gap * abs(float(target))
