"""Time steps announced by an adapter, so that probes read them straight from the batch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from torch import Tensor

from neuromark.instrument.kernels import as_array


class StepIndex:
    """The time steps of the current batch: ``index`` maps a step tensor's id to its step
    ``t``, ``batch`` is the batch (B, T, *F) as a numpy array and ``flat`` the same viewed
    as (B, T, prod(F)). ``linear_index`` is ``index`` when F has one dimension (a Linear
    layer's rows are then the batch's rows), else empty. The step tensors are held, so
    their ids stay unique while indexed."""

    def __init__(self) -> None:
        self.clear()

    def announce(self, data: Tensor, steps: Sequence[Tensor], time_dim: int) -> None:
        """Called by the adapter before it feeds ``steps`` (``data.unbind(time_dim)``).

        Only steps that are verifiably the slices ``data[:, t]`` of a C-contiguous CPU
        float batch are indexed (each is checked by address, strides and dtype); anything
        else is counted like any other input."""
        self.clear()
        batch = as_array(data) if time_dim == 1 and data.dim() >= 3 else None
        if batch is None or not batch.flags.c_contiguous or len(steps) != data.shape[1]:
            return
        start, step_bytes = data.data_ptr(), data.stride(1) * data.element_size()
        strides = data.stride()[:1] + data.stride()[2:]
        if any(s.data_ptr() != start + t * step_bytes or s.stride() != strides
               or s.dtype != data.dtype for t, s in enumerate(steps)):
            return
        self.batch, self.steps = batch, steps
        self.flat = batch.reshape(batch.shape[0], batch.shape[1], -1)
        self.index = {id(step): t for t, step in enumerate(steps)}
        self.linear_index = self.index if batch.ndim == 3 else {}

    def clear(self) -> None:
        self.batch: np.ndarray | None = None
        self.flat: np.ndarray | None = None
        self.steps: Sequence[Tensor] = ()
        self.index: dict[int, int] = {}
        self.linear_index: dict[int, int] = {}
