"""Neuron-layer counting for one layer: non-zero outputs and membrane updates per step.

A membrane update is an element whose membrane differs before and after the step. A layer
that rebinds its membrane to a new tensor each step (snnTorch, our LIF layers) is tracked
by reference (no copy); a layer that updates its membrane in place is tracked by copy. The
first step copies and decides which case applies. A fresh state of another shape (e.g.
snnTorch's scalar ``mem`` before the first step) counts every neuron as updated, and so
does the first step after each :meth:`NeuronCounter.take` (the first step of a batch),
as neurobench 2.3.0 counts it: a state reset to zeros of the full shape (snnTorch's
Alpha) is counted like one reset to a scalar.

On CPU float tensors one kernel call per step counts both; other tensors take the torch
path (:mod:`~neuromark.instrument.deferred`): outputs are kept (copied) and membranes of
layers that rebind them kept by reference, both reduced at :meth:`NeuronCounter.take`;
a membrane updated in place is compared with its copy at each step, on the device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from neuromark.instrument.arrays import LastArray
from neuromark.instrument.deferred import CHUNK_BYTES, Held, nbytes, stacked
from neuromark.instrument.kernels import NO_STATE, as_array, compiled, neuron_counts

Membrane = Callable[[nn.Module], Tensor | None]
#: The state entering a step: (tensor, its values as an array or a torch tensor).
Before = tuple[Tensor, Any] | None


class NeuronCounter:
    """Counts of one neuron layer: non-zero and all outputs, and membrane updates.

    Args:
        name: the layer's dotted name (for error messages).
        membrane: reads the layer's membrane tensor, or None when membranes are not counted.
        activations: whether outputs are counted.
        arrays: the probes' shared :class:`LastArray`.
    """

    def __init__(self, name: str, membrane: Membrane | None, activations: bool,
                 arrays: LastArray | None = None) -> None:
        self.name = name
        self.membrane = membrane
        self.activations = activations
        self.arrays = arrays or LastArray()
        self.by_copy = True
        self.nonzeros = 0
        self.total = 0
        self.updates = 0
        self._pending: list[tuple[str, Tensor]] = []  # torch-path counts
        self._outputs: list[Held] = []  # torch path: outputs kept for the reduction
        self._chain: list[Tensor] = []  # torch path: successive states of a rebinding layer
        self._over = False  # over the torch path's memory budget: reduce each step
        self._last: tuple[Tensor, np.ndarray] | None = None  # last state seen, and its array
        self._first = True  # the next step is a batch's first: every neuron counted

    def wrap(self, module: nn.Module, forward: Callable[..., Any]) -> Callable[..., Any]:
        """``forward`` wrapped to count each call (see :mod:`~neuromark.instrument.wrapping`).

        The common case, a CPU layer that rebinds its membrane each step with the state
        of the previous step entering, runs inline: two numpy views and one kernel call."""
        membrane, activations, get_array = self.membrane, self.activations, self.arrays.get
        kernel = compiled()[1]
        kernels = self.arrays.numpy  # False: the torch path forced
        before_step, after_step = self.before, self.after

        def neuron_forward(*args: Any, **kwargs: Any) -> Any:
            last = self._last
            mem = membrane(module) if membrane is not None else None
            chain = self._chain
            if last is None and chain and mem is chain[-1] and len(args) == 1 and not kwargs:
                return torch_step(mem, forward(*args))
            if last is None or mem is not last[0] or len(args) > 1 or kwargs or self.by_copy:
                before = before_step(module, args, kwargs)
                output = forward(*args, **kwargs)
                after_step(module, output, before)
                return output
            output = forward(*args, **kwargs)
            out = output
            while isinstance(out, (tuple, list)):
                out = out[0]
            after = membrane(module)
            out_array = get_array(out) if activations else NO_STATE
            after_array = as_array(after) if after is not None and after is not mem else None
            if out_array is None or after_array is None \
                    or after_array.shape != last[1].shape:
                after_step(module, output, (mem, last[1]))  # general path
                return output
            nonzero, changed = kernel(out_array, after_array, last[1])
            self.nonzeros += nonzero
            self.total += out_array.size
            self.updates += changed
            self._last = (after, after_array)
            return output

        def torch_step(mem: Tensor, output: Any) -> Any:
            """The torch path's common step, inline: a layer that rebinds its membrane,
            the state entering it the last one kept (one copy of the output, no sync)."""
            out = output
            while isinstance(out, (tuple, list)):
                out = out[0]
            after = membrane(module)
            if after is None or after is mem or after.shape != mem.shape \
                    or after.dtype != mem.dtype or after.device != mem.device \
                    or (activations and kernels and get_array(out) is not None):
                after_step(module, output, (mem, mem))  # general path
                return output
            if activations:
                self.total += out.numel()
                if self._admit(out):
                    self._outputs.append(self.arrays.copies.hold(out))
                else:
                    self._pending.append(("nonzeros", torch.count_nonzero(out)))
            if self._admit(after):
                self._chain.append(after)
            else:
                self._pending.append(("updates", torch.count_nonzero(after != mem)))
            return output

        return neuron_forward

    def before(self, module: nn.Module, args: tuple[Any, ...],
               kwargs: dict[str, Any] | None = None) -> Before:
        """The state entering a step, or None (no membrane, or membranes not counted)."""
        if self.membrane is None:
            return None
        mem = self.membrane(module)
        passed = args[1] if len(args) > 1 else (kwargs or {}).get("mem")
        if mem is not None and isinstance(passed, Tensor):
            mem = passed  # snnTorch init_hidden=False: state passed in
        if mem is None:
            return None
        last = self._last
        if not self.by_copy:
            if last is not None and last[0] is mem:
                return mem, last[1]
            array = self.arrays.view(mem)
            return mem, (array if array is not None else mem)
        array = self.arrays.view(mem)
        return mem, (array.copy() if array is not None else mem.clone())

    def after(self, module: nn.Module, output: Any, before: Before) -> None:
        """Count one step from the layer's output and the state ``before`` returned."""
        out_array = NO_STATE
        if self.activations:
            out = output
            while isinstance(out, (tuple, list)):  # snnTorch returns (spk, mem)
                out = out[0]
            array = self.arrays.get(out)
            if array is None:
                self.total += out.numel()
                if self._admit(out):
                    self._outputs.append(self.arrays.copies.hold(out))
                else:
                    self._pending.append(("nonzeros", torch.count_nonzero(out)))
            else:
                self.total += array.size
                out_array = array
        mem = self.membrane(module) if self.membrane is not None else None
        if mem is None:
            if out_array.size:
                self.nonzeros += neuron_counts(out_array, NO_STATE, NO_STATE)[0]
            return
        prev = before[1] if before is not None else None
        if self._first:
            self._first, prev = False, None  # a batch's first step: every neuron counted
        if before is not None and not self.by_copy and before[0] is mem:
            raise RuntimeError(f"neuron layer {self.name!r} kept the same membrane tensor "
                               "after rebinding it in earlier steps; in-place updates "
                               "cannot be counted by reference")
        mem_array = self.arrays.view(mem)
        if mem_array is None or isinstance(prev, Tensor):
            fresh = self._count_with_torch(out_array, mem, prev, by_reference=not self.by_copy)
        else:
            fresh = prev is None or prev.shape != mem_array.shape
            nonzero, changed = neuron_counts(out_array, mem_array, NO_STATE if fresh else prev)
            self.nonzeros += nonzero
            self.updates += mem_array.size if fresh else changed
            self._last = (mem, mem_array)
        if self.by_copy and not fresh and mem is not before[0]:
            self.by_copy = False  # the layer rebinds its membrane: references suffice

    def _admit(self, x: Tensor) -> bool:
        """Whether the torch path may keep ``x`` (False once over the memory budget)."""
        self._over = self._over or not self.arrays.budget.admit(nbytes(x), self.name)
        return not self._over

    def _count_with_torch(self, out_array: np.ndarray, mem: Tensor, prev: Any,
                          by_reference: bool = False) -> bool:
        """Torch-path count; returns whether the state was fresh (all counted).

        ``by_reference``: ``prev`` is the state the layer rebound, left as it was, so the
        pair is kept for the reduction; otherwise (a copy) it is compared now."""
        if out_array.size:
            self.nonzeros += neuron_counts(out_array, NO_STATE, NO_STATE)[0]
        if prev is not None and not isinstance(prev, Tensor):
            prev = torch.from_numpy(prev)
        if prev is None or prev.shape != mem.shape:
            self.updates += mem.numel()
            return True
        prev = prev.to(mem.device)
        if by_reference and prev.dtype == mem.dtype and self._admit(mem):
            if not self._chain or self._chain[-1] is not prev:
                self._reduce_chain()
                self._chain.append(prev)
            self._chain.append(mem)
            return False
        self._pending.append(("updates", torch.count_nonzero(mem != prev)))
        return False

    def _reduce_chain(self) -> None:
        """Changed elements between successive kept states, as pending device counts."""
        chain, self._chain = self._chain, []
        for part in _chunks(chain, overlap=1):
            states = torch.stack(part)
            self._pending.append(("updates", torch.count_nonzero(states[1:] != states[:-1])))

    def _reduce_outputs(self) -> None:
        outputs, self._outputs = self._outputs, []
        for part in _chunks(outputs):
            for held in part:
                held.check(self.name)
            self._pending.append(("nonzeros", torch.count_nonzero(stacked(part))))

    def take(self) -> tuple[int, int, int]:
        """(non-zero outputs, all outputs, membrane updates) since the last take."""
        self._reduce_outputs()
        self._reduce_chain()
        nonzeros, total, updates = self.nonzeros, self.total, self.updates
        if self._pending:
            device = self._pending[0][1].device
            counts = torch.stack([count.to(device, torch.int64)
                                  for _, count in self._pending]).tolist()
            for (kind, _), count in zip(self._pending, counts):
                if kind == "nonzeros":
                    nonzeros += count
                else:
                    updates += count
        self._pending.clear()
        self.nonzeros = self.total = self.updates = 0
        self._last = None
        self._first = True
        return nonzeros, total, updates


def _chunks(items: list, overlap: int = 0) -> list[list]:
    """``items`` (tensors or :class:`Held`) in runs of equal shape and dtype whose stack
    stays under :data:`CHUNK_BYTES`; with ``overlap`` 1 each run starts with the previous
    run's last item (to compare successive states)."""
    tensors = [_tensor(item) for item in items]
    keys = [(t.shape, t.dtype) for t in tensors]
    runs: list[list] = []
    start = 0
    while start + overlap < len(items):
        key = keys[start]
        limit = max(overlap + 1, CHUNK_BYTES // max(nbytes(tensors[start]), 1))
        end = start + 1
        stop = min(len(items), start + limit)
        while end < stop and keys[end] == key:
            end += 1
        runs.append(items[start:end])
        start = max(end - overlap, start + 1)
    return runs


def _tensor(item: Tensor | Held) -> Tensor:
    return item.tensor if isinstance(item, Held) else item
