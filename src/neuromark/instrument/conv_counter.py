"""Counting of convolution calls with the Linear kernel.

A convolution is linear in its input, so over all its outputs a sample's effective ops
are ``sum([x != 0] * M)``, where ``M`` (the shape of one input sample) counts the non-zero
weights each input element meets, and dense ops are ``sum(M_ones)`` with all weights
counted (:func:`~neuromark.metrics.functional.synops.conv_input_counts`). Both maps depend
only on the weight and the input shape, so they are computed once and cached; each call is
then the Linear kernel's single pass with the flattened sample as the row and ``M`` as the
weight counts (one row per sample: the MAC/AC split is per sample). neurobench instead
convolves a copy of the input with binarised weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from neuromark.errors import UnsupportedLayerError
from neuromark.instrument.arrays import LastArray
from neuromark.instrument.call_totals import CallTotals
from neuromark.instrument.kernels import NO_SAMPLES, UNITS, column_counts_array, compiled
from neuromark.instrument.linear_counter import weight_reader
from neuromark.instrument.steps import StepIndex
from neuromark.metrics.functional.synops import conv_input_counts

#: Per input-sample shape: (weight counts for the kernel, the same as a tensor, dense ops).
Maps = tuple[np.ndarray, Tensor, int]


class ConvCounter(CallTotals):
    """Effective and dense operations of successive calls of one ``nn.Conv1d/2d/3d``."""

    def __init__(self, name: str, module: nn.Module, steps: StepIndex,
                 arrays: LastArray | None = None) -> None:
        if module.padding_mode != "zeros":
            raise UnsupportedLayerError(f"{type(module).__name__} {name!r} with padding_mode="
                                        f"{module.padding_mode!r} cannot be counted (only 'zeros')")
        self.arrays = arrays or LastArray()
        super().__init__(name, self.arrays.budget)
        self.module = module
        self.dims = len(module.kernel_size)
        self.steps = steps
        self.read_weight = weight_reader(module, "weight")
        self._stamp: tuple[Tensor, int, int] | None = None  # weight, data_ptr, version
        self._maps: dict[tuple[int, ...], Maps] = {}
        self._kernel = compiled()[0]
        #: the torch path forced: no kernel to try first
        self._torch_only = not self.arrays.numpy
        #: torch path: the last call's input shape, weight with its (data_ptr, version),
        #: and what follows from them (see :meth:`_add_with_torch`)
        self._last: _TorchCall | None = None

    def maps(self, sample_shape: tuple[int, ...]) -> Maps:
        """The weight-count maps for input samples of ``sample_shape`` (C, *spatial),
        recomputed when the weight changes (in place: its version moves; or replaced)."""
        weight = self.read_weight()
        stamp = self._stamp
        derived = not isinstance(weight, nn.Parameter)  # parametrised: new each call
        if stamp is None or derived or weight is not stamp[0] or weight._version != stamp[2] \
                or weight.data_ptr() != stamp[1]:
            self._stamp = (weight, weight.data_ptr(), -1 if derived else weight._version)
            self._maps.clear()
        maps = self._maps.get(sample_shape)
        if maps is None:
            m = self.module
            geometry = (m.stride, m.padding, m.dilation, m.groups)
            effective = conv_input_counts(weight != 0, sample_shape, *geometry).reshape(-1)
            dense = int(conv_input_counts(torch.ones_like(weight), sample_shape, *geometry).sum())
            maps = self._maps[sample_shape] = (column_counts_array(effective, dense),
                                               effective, dense)
        return maps

    def add(self, x: Tensor) -> None:
        """Record one call's input ``x``: (N, C, *spatial), or (C, *spatial) unbatched."""
        if self._torch_only or not x.is_cpu:  # a GPU tensor: numpy cannot read it
            self._add_with_torch(x)
            return
        step = self.steps.index.get(id(x))
        if step is not None and self.steps.batch.ndim == self.dims + 3:
            rows, sample_shape = self.steps.flat, self.steps.batch.shape[2:]
        else:
            array = self.arrays.get(x)
            if array is None:
                self._add_with_torch(x)
                return
            batched = array.ndim == self.dims + 2
            sample_shape = array.shape[1:] if batched else array.shape
            rows, step = array.reshape(array.shape[0] if batched else 1, 1, -1), 0
        vector, _, dense = self.maps(tuple(sample_shape))
        self.dense += rows.shape[0] * dense
        if rows.size == 0:
            self.empty_seen = True  # called, on an empty input: its weights were used
            return
        self.record(*self._kernel(rows, step, vector, *UNITS[rows.dtype.char], 1, NO_SAMPLES))

    def _add_with_torch(self, x: Tensor) -> None:
        """Keep the call for the torch path's reduction, with the maps of the weight as it
        is at this call (see :mod:`~neuromark.instrument.deferred`).

        Per call only the weight's identity, version and address and the input's shape
        are compared with the previous call's; what follows from them (the maps, dense
        ops, row width) is derived again only when one of them moved."""
        weight = self.read_weight()
        last = self._last
        if last is None or weight is not last.weight or weight._version != last.version \
                or weight.data_ptr() != last.address or x.shape != last.shape:
            last = self._torch_call(x, weight)
        self.dense += last.dense
        steps = self.steps
        if steps.dims == last.step_dims:
            step = steps.torch_index.get(id(x))
            if step is not None:
                self.kept.add_step(steps.held, step, last.counts)
                return
        self.kept.add(x, last.width, last.counts, self.arrays.copies)

    def _torch_call(self, x: Tensor, weight: Tensor) -> _TorchCall:
        """What a call with input ``x`` and ``weight`` needs, kept for the next call unless
        the weight is parametrised (a new tensor each call, maybe without a version)."""
        batched = x.dim() == self.dims + 2
        sample_shape = tuple(x.shape[1:] if batched else x.shape)
        _, counts, dense = self.maps(sample_shape)
        derived = not isinstance(weight, nn.Parameter)
        call = _TorchCall(x.shape, weight, weight.data_ptr(), -1 if derived else weight._version,
                          counts, (x.shape[0] if batched else 1) * dense,
                          math.prod(sample_shape), self.dims + 3)
        self._last = None if derived else call
        return call


@dataclass(frozen=True)
class _TorchCall:
    """A torch-path call's input shape and weight (its address and version then), the
    weight counts per input element (K,), dense ops of the call, row width K and the
    dimensions of an announced batch (B, T, C, *spatial) whose steps it may be."""

    shape: torch.Size
    weight: Tensor
    address: int
    version: int
    counts: Tensor
    dense: int
    width: int
    step_dims: int
