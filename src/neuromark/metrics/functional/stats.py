"""Sufficient statistics for means with standard errors (torch imported only by
:meth:`MeanStats.add`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor


def standard_error(values: Sequence[float]) -> float | None:
    """Standard error of the mean: sample standard deviation (ddof=1) / sqrt(n).

    Fewer than two values have no error estimate: the result is None ("no error"), never 0.
    """
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


@dataclass
class MeanStats:
    """Count, sum and sum of squares of per-sample values (float64)."""

    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0

    def add(self, values: Tensor) -> None:
        """Add per-sample values, shape (N,)."""
        import torch  # deferred: standard_error alone must not import torch

        v = values.detach().to(torch.float64).reshape(-1)
        self.n += v.numel()
        self.total += float(v.sum())
        self.total_sq += float((v * v).sum())

    @property
    def mean(self) -> float:
        if self.n == 0:
            raise ValueError("no samples seen")
        return self.total / self.n

    @property
    def standard_error(self) -> float | None:
        """Sample standard deviation (n-1) / sqrt(n); None for fewer than 2 samples."""
        if self.n < 2:
            return None
        var = max(self.total_sq - self.n * self.mean ** 2, 0.0) / (self.n - 1)
        return math.sqrt(var / self.n)

