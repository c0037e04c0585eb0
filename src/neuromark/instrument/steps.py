"""Time steps announced by an adapter, so that probes read them straight from the batch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from torch import Tensor

from neuromark.instrument.deferred import Held, hold
from neuromark.instrument.kernels import as_array


class StepIndex:
    """The time steps of the current batch: ``index`` maps a step tensor's id to its step
    ``t``, ``batch`` is the batch (B, T, *F) as a numpy array and ``flat`` the same viewed
    as (B, T, prod(F)). ``linear_index`` is ``index`` when F has one dimension (a Linear
    layer's rows are then the batch's rows), else empty. The step tensors are held, so
    their ids stay unique while indexed.

    For the torch path (any device; ``numpy=False`` forces it on CPU) ``held`` is the batch
    viewed as (B, T, prod(F)) (see :func:`~neuromark.instrument.deferred.hold`) and
    ``torch_index`` maps step ids to steps."""

    def __init__(self, numpy: bool = True) -> None:
        self.numpy = numpy
        self.clear()

    def announce(self, data: Tensor, steps: Sequence[Tensor], time_dim: int) -> None:
        """Called by the adapter before it feeds ``steps`` (``data.unbind(time_dim)``).

        Only steps that are verifiably the slices ``data[:, t]`` of the batch are indexed
        (each is checked by address, strides, dtype and device), on CPU float batches only
        when C-contiguous; anything else is counted like any other input."""
        self.clear()
        if time_dim != 1 or data.dim() < 3 or len(steps) != data.shape[1]:
            return
        start, step_bytes = data.data_ptr(), data.stride(1) * data.element_size()
        strides = data.stride()[:1] + data.stride()[2:]
        if any(s.data_ptr() != start + t * step_bytes or s.stride() != strides
               or s.dtype != data.dtype or s.device != data.device
               for t, s in enumerate(steps)):
            return
        batch = as_array(data) if self.numpy else None
        if batch is not None and not batch.flags.c_contiguous:
            return
        if batch is None:  # the torch path
            self.steps = steps
            self.held = hold(data.flatten(2))
            self.torch_index = {id(step): t for t, step in enumerate(steps)}
            self.dims = data.dim()
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
        self.held: Held | None = None
        self.torch_index: dict[int, int] = {}
        self.dims = 0  # the torch-path batch's dimensions (B, T, *F)
