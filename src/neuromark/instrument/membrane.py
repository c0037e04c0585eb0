"""Membrane-update counting for one neuron layer: neurons whose state changed in a step."""

from __future__ import annotations

import torch
from torch import Tensor


class MembraneTracker:
    """Counts, per step, the elements whose membrane differs before and after the step.

    A layer that rebinds its membrane to a new tensor each step (snnTorch, our LIF layers)
    is tracked by reference (no copy); a layer that updates its membrane in place is
    tracked by copy. The first step copies and decides which case applies. Each step costs
    one comparison and one count, kept as a tensor until :meth:`take` (no Python sync).
    A fresh state of another shape (e.g. snnTorch's scalar ``mem`` before the first step)
    counts every neuron as updated.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.by_copy = True
        self._before: Tensor | None = None
        self._before_ref: Tensor | None = None
        self._counts: list[Tensor] = []
        self.updates = 0

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
        prev = self._before
        if prev is None or prev.shape != mem.shape:
            self.updates += mem.numel()
        elif self.by_copy:
            self._counts.append(torch.count_nonzero(mem != prev))
            if mem is not self._before_ref:
                self.by_copy = False  # the layer rebinds its membrane: references suffice
                self._before_ref = None
        else:
            if mem is prev:
                raise RuntimeError(f"neuron layer {self.name!r} kept the same membrane tensor "
                                   "after rebinding it in earlier steps; in-place updates "
                                   "cannot be counted by reference")
            self._counts.append(torch.count_nonzero(mem != prev))

    def take(self) -> int:
        """Updates counted since the last call."""
        counted = int(torch.stack(self._counts).sum()) if self._counts else 0
        updates, self.updates = self.updates + counted, 0
        self._counts.clear()
        self._before = None
        return updates
