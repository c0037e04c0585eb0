"""Buffered counting of Linear-layer calls: a hook writes |x|, chunks are counted at once."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from neuromark.instrument.layer_ops import WeightCache
from neuromark.metrics.functional.synops import linear_ops_stacked

#: Elements of one layer's buffered inputs (256 Ki float32 = 1 MB, to stay in cache).
CHUNK_ELEMENTS = 1 << 18
#: Calls per chunk at most.
CHUNK_CALLS = 64


class LinearCallBuffer:
    """|x| of successive calls of one ``nn.Linear``, counted in chunks of equal shape.

    Writing |x| into a preallocated slot is one tensor op per call and keeps a private copy,
    so later in-place changes of x by the model cannot alter the count.
    """

    def __init__(self, name: str, module: nn.Linear, weights: WeightCache) -> None:
        self.name = name
        self.module = module
        self.weights = weights
        self.buffer: Tensor | None = None
        self.scratch: Tensor | None = None
        self.used = 0
        self.acs = self.macs = self.dense = 0.0

    def add(self, x: Tensor) -> None:
        """Record one call's input ``x`` (..., in)."""
        if not x.is_floating_point():
            x = x.to(torch.float32)
        buffer = self.buffer
        fits = buffer is not None and buffer.shape[1:] == x.shape and buffer.dtype == x.dtype \
            and buffer.device == x.device
        if not fits or self.used == buffer.shape[0]:
            self.flush()
            if not fits:
                slots = max(1, min(CHUNK_CALLS, CHUNK_ELEMENTS // max(1, x.numel())))
                self.buffer = buffer = torch.empty((slots, *x.shape), dtype=x.dtype,
                                                   device=x.device)
                self.scratch = torch.empty_like(buffer)
        torch.abs(x, out=buffer[self.used])
        self.used += 1

    def flush(self) -> None:
        """Count the buffered calls and add them to the totals."""
        if not self.used or self.buffer is None:
            return
        calls, self.used = self.used, 0
        in_features = self.buffer.shape[-1]
        shape = (calls, -1, in_features)
        try:
            acs, macs, dense = linear_ops_stacked(self.buffer[:calls].reshape(shape),
                                                  self.weights.col_nnz(self.module.weight),
                                                  self.module.out_features,
                                                  scratch=self.scratch[:calls].reshape(shape))
        except ValueError as exc:
            raise ValueError(f"connection layer {self.name!r} {exc}") from None
        self.acs += acs
        self.macs += macs
        self.dense += dense

    def take(self) -> tuple[float, float, float]:
        """Flush, return (ACs, MACs, dense) since the last take, and reset the totals."""
        self.flush()
        totals = (self.acs, self.macs, self.dense)
        self.acs = self.macs = self.dense = 0.0
        return totals
