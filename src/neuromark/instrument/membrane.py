"""Membrane-update counting for one neuron layer: neurons whose state changed in a step."""

from __future__ import annotations

import torch
from torch import Tensor

#: Membrane elements held by reference before they are compared (256 Ki: stays in cache).
PENDING_ELEMENTS = 1 << 18


class MembraneTracker:
    """Counts, per step, the elements whose membrane differs before and after the step.

    A layer that rebinds its membrane to a new tensor each step (snnTorch, our LIF layers)
    is tracked by reference: the before/after tensors are kept and compared in one batched
    pass when counted. A layer that updates its membrane in place is tracked by copy. The
    first step copies and decides which case applies. A fresh state of another shape (e.g.
    snnTorch's scalar ``mem`` before the first step) counts every neuron as updated.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.by_copy = True
        self._before: Tensor | None = None
        self._before_ref: Tensor | None = None
        self._pairs: list[tuple[Tensor, Tensor]] = []
        self._pending = 0
        self.updates = 0
        self.seen = False

    def before(self, mem: Tensor | None) -> None:
        """Record the membrane at the start of a step."""
        if mem is None:
            self._before = None
        elif self.by_copy:
            self._before, self._before_ref = mem.clone(), mem
        else:
            self._before = mem

    def after(self, mem: Tensor | None) -> None:
        """Record the membrane at the end of the step."""
        if mem is None:
            return
        self.seen = True
        prev = self._before
        if prev is None or prev.shape != mem.shape:
            self.updates += mem.numel()
        elif self.by_copy:
            self.updates += int(torch.count_nonzero(mem != prev))
            if mem is not self._before_ref:
                self.by_copy = False  # the layer rebinds its membrane: references suffice
                self._before_ref = None
        else:
            if mem is prev:
                raise RuntimeError(f"neuron layer {self.name!r} kept the same membrane tensor "
                                   "after rebinding it in earlier steps; in-place updates "
                                   "cannot be counted by reference")
            self._pairs.append((prev, mem))
            self._pending += mem.numel()
            if self._pending > PENDING_ELEMENTS:
                self._compare_pending()

    def _compare_pending(self) -> None:
        by_shape: dict[tuple[int, ...], list[tuple[Tensor, Tensor]]] = {}
        for pair in self._pairs:
            by_shape.setdefault(tuple(pair[1].shape), []).append(pair)
        for pairs in by_shape.values():
            before = torch.stack([p[0] for p in pairs])
            after = torch.stack([p[1] for p in pairs])
            self.updates += int(torch.count_nonzero(after != before))
        self._pairs.clear()
        self._pending = 0

    def take(self) -> int:
        """Updates counted since the last call (compares what is pending first)."""
        self._compare_pending()
        updates, self.updates = self.updates, 0
        self._before = None
        return updates
