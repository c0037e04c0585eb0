"""Counting of Linear-layer calls: one fused kernel pass per call on CPU, torch elsewhere.

CPU float inputs are read by the kernel of :func:`~neuromark.instrument.kernels.linear_counts` as rows
of a (rows, steps, in) array: a time step announced by the adapter (``data[:, t]`` of a
(B, T, in) batch) is row set ``t`` of the batch itself, and any other input ``x`` is
``x.reshape(-1, 1, in)``. Other inputs (GPU, other dtypes) take the torch path: |x| and
its non-zero indicator written into buffers reused from call to call, and the call's
effective ops and spike residual kept as tensors until :meth:`take`.

Either way a call is an AC call when every input value is -1, 0 or 1, else a MAC call;
NaN input is reported by :meth:`take`, outside the forward pass.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from neuromark.instrument.arrays import LastArray
from neuromark.instrument.kernels import UNITS, as_array, column_counts_array, compiled
from neuromark.instrument.layer_ops import WeightCache


class StepIndex:
    """The time steps of the current batch, as announced by the adapter: step tensor ->
    (the batch as a (B, T, in) numpy array, t). Holds the step tensors, so ids stay unique."""

    def __init__(self) -> None:
        self.batch: np.ndarray | None = None
        self.steps: Sequence[Tensor] = ()
        self.index: dict[int, int] = {}

    def announce(self, data: Tensor, steps: Sequence[Tensor], time_dim: int) -> None:
        """Called by the adapter before it feeds ``steps`` (``data.unbind(time_dim)``).

        Only steps that are verifiably the slices ``data[:, t]`` of a C-contiguous CPU
        float batch are indexed (each is checked by address and strides); anything else is
        counted like any other input."""
        self.clear()
        batch = as_array(data) if time_dim == 1 and data.dim() == 3 else None
        if batch is None or not batch.flags.c_contiguous or len(steps) != data.shape[1]:
            return
        start, step_bytes = data.data_ptr(), data.stride(1) * data.element_size()
        strides = (data.stride(0), data.stride(2))
        if any(s.data_ptr() != start + t * step_bytes or s.stride() != strides
               or s.dtype != data.dtype for t, s in enumerate(steps)):
            return
        self.batch, self.steps = batch, steps
        self.index = {id(step): t for t, step in enumerate(steps)}

    def clear(self) -> None:
        self.batch, self.steps, self.index = None, (), {}


class LinearCounter:
    """Effective and dense operations of successive calls of one ``nn.Linear``."""

    def __init__(self, name: str, module: nn.Linear, weights: WeightCache,
                 steps: StepIndex, arrays: LastArray | None = None) -> None:
        self.name = name
        self.module = module
        self.weights = weights
        self.steps = steps
        self.arrays = arrays or LastArray()
        self.out_features = module.out_features
        self._parameters = module._parameters
        self._weight: Tensor | None = None  # the weight _col_nnz was computed for
        self._stamp = (0, -1)  # its (data_ptr, version) then
        self._col_nnz = np.zeros(0, np.float32)
        self._kernel = compiled()[0]  # see linear_counts(); called directly: once per call
        self.magnitude: Tensor | None = None
        self.indicator: Tensor | None = None
        self.pending: list[tuple[Tensor, Tensor]] = []  # torch path: (effective, residual)
        self.acs = 0
        self.macs = 0
        self.dense = 0
        self.nan_seen = False

    def add(self, x: Tensor) -> None:
        """Record one call's input ``x`` (..., in)."""
        step = self.steps.index.get(id(x))
        if step is not None:
            rows = self.steps.batch
        else:
            array = self.arrays.get(x)
            if array is None:
                self._add_with_torch(x)
                return
            rows, step = array.reshape(-1, 1, array.shape[-1]), 0
        self.dense += rows.shape[0] * rows.shape[2] * self.out_features
        if rows.size == 0:
            return
        weight = self._parameters["weight"]
        if weight is not self._weight or weight._version != self._stamp[1]:
            self._refresh(weight)
        effective, residual = self._kernel(rows, step, self._col_nnz, *UNITS[rows.dtype.char])
        if residual != residual:
            self.nan_seen = True
        elif residual == 0.0:
            self.acs += effective
        else:
            self.macs += effective

    def _refresh(self, weight: Tensor) -> None:
        """Column counts of a new or changed weight (in-place changes bump its version)."""
        self._weight, self._stamp = weight, (weight.data_ptr(), weight._version)
        self._col_nnz = column_counts_array(self.weights.col_nnz(weight), weight.numel())

    def _add_with_torch(self, x: Tensor) -> None:
        """The same counts with torch ops, kept as tensors until :meth:`take` (no host
        sync per call on a GPU); the weight's column counts are those of this call."""
        self.dense += x.numel() * self.out_features
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
        # per-column counts are exact in float32 (rows < 2**24); the dot product is float64
        columns = indicator.reshape(-1, x.shape[-1]).sum(dim=0, dtype=torch.float64)
        col_nnz = self.weights.col_nnz(self._parameters["weight"]).to(columns.device)
        # |x| - indicator is 0 exactly where |x| is 0 or 1; elsewhere its square is
        # >= 2**-48 (float32 spacing below 1), so the sum of squares cannot vanish.
        flat = magnitude.sub_(indicator).reshape(-1)
        self.pending.append((columns @ col_nnz, torch.dot(flat, flat)))

    def take(self) -> tuple[float, float, float]:
        """(effective ACs, effective MACs, dense) since the last take; resets the totals."""
        acs, macs, dense = float(self.acs), float(self.macs), float(self.dense)
        nan_seen = self.nan_seen
        weight = self._weight
        if weight is not None and weight.data_ptr() != self._stamp[0]:
            self._weight = None
            self._reset()
            raise ValueError(f"the weight storage of connection layer {self.name!r} was "
                             "replaced (``weight.data = ...``) during the batch; its "
                             "operations cannot be attributed to the right weights")
        if self.pending:
            effective = torch.stack([e for e, _ in self.pending]).tolist()
            residuals = torch.stack([r.to(torch.float64) for _, r in self.pending]).tolist()
            nan_seen |= any(r != r for r in residuals)
            acs += sum(e for e, r in zip(effective, residuals) if r == 0.0)
            macs += sum(e for e, r in zip(effective, residuals) if r != 0.0)
        self._reset()
        if nan_seen:
            raise ValueError(f"connection layer {self.name!r} received NaN input")
        return acs, macs, dense

    def _reset(self) -> None:
        self.pending.clear()
        self.acs = self.macs = self.dense = 0
        self.nan_seen = False
