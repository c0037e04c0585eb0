"""Counting of Linear-layer calls with few passes over the input, in reusable buffers.

Per call the hook writes |x| and its non-zero indicator into two buffers reused from call
to call (they stay in cache; no temporaries are allocated), keeps the per-column non-zero
counts (shape (in,)), and classifies the call: spike input (ACs) when |x| - indicator is
zero everywhere, i.e. every value is -1, 0 or 1. The dot products with the weight's
per-column non-zero counts are done for all calls at once in :meth:`take`. On this 2-core
machine each pass over the input costs about a tenth of the Linear layer itself, so the
pass count is what the design minimises.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from neuromark.instrument.layer_ops import WeightCache


class LinearCallBuffer:
    """Effective and dense operations of successive calls of one ``nn.Linear``."""

    def __init__(self, name: str, module: nn.Linear, weights: WeightCache) -> None:
        self.name = name
        self.module = module
        self.weights = weights
        self.magnitude: Tensor | None = None
        self.indicator: Tensor | None = None
        self.column_counts: list[Tensor] = []
        self.spikes: list[bool] = []
        self.dense = 0.0
        self.nan_seen = False

    def add(self, x: Tensor) -> None:
        """Record one call's input ``x`` (..., in)."""
        if x.dtype not in (torch.float32, torch.float64):
            x = x.to(torch.float32)
        magnitude = self.magnitude
        if magnitude is None or magnitude.shape != x.shape or magnitude.dtype != x.dtype \
                or magnitude.device != x.device:
            self.magnitude = magnitude = torch.empty_like(x, memory_format=torch.contiguous_format)
            self.indicator = torch.empty_like(magnitude)
        indicator = self.indicator
        torch.abs(x, out=magnitude)
        torch.sign(magnitude, out=indicator)  # 1 where x != 0 (NaN -> 0)
        in_features = x.shape[-1]
        self.column_counts.append(indicator.reshape(-1, in_features).sum(dim=0))
        # |x| - indicator is 0 exactly where |x| is 0 or 1; elsewhere its square is
        # >= 2**-48 (float32 spacing below 1), so the sum of squares cannot vanish.
        flat = magnitude.sub_(indicator).reshape(-1)
        residual = float(torch.dot(flat, flat))
        self.nan_seen |= residual != residual  # reported by take(), outside the forward pass
        spikes = residual == 0.0
        self.spikes.append(spikes)
        self.dense += float(x.numel() * self.module.out_features)

    def take(self) -> tuple[float, float, float]:
        """(effective ACs, effective MACs, dense) since the last take; resets the totals."""
        if self.nan_seen:
            self.nan_seen = False
            self.column_counts.clear()
            self.spikes.clear()
            raise ValueError(f"connection layer {self.name!r} received NaN input")
        acs = macs = 0.0
        if self.column_counts:
            counts = torch.stack(self.column_counts).to(torch.float64)
            effective = (counts @ self.weights.col_nnz(self.module.weight)).tolist()
            acs = sum(e for e, s in zip(effective, self.spikes) if s)
            macs = sum(e for e, s in zip(effective, self.spikes) if not s)
        totals = (acs, macs, self.dense)
        self.column_counts.clear()
        self.spikes.clear()
        self.dense = 0.0
        return totals
