"""One-slot cache of the numpy view of the tensor seen last.

A neuron layer's output is usually the next Linear layer's input: both probes then read
it through the same view instead of asking torch twice (each binding call costs about a
microsecond between layers). The torch path shares its copies the same way
(:class:`~neuromark.instrument.deferred.Copies`)."""

from __future__ import annotations

import numpy as np
from torch import Tensor

from neuromark.instrument.deferred import Copies, KeepBudget
from neuromark.instrument.kernels import as_array


class LastArray:
    """``get(x)``: :func:`~neuromark.instrument.kernels.as_array` of ``x``, reused when
    ``x`` is the tensor of the previous call; always None when ``numpy`` is False (the
    torch path forced). ``copies`` and ``budget`` are the torch path's, shared by all
    probes of an instrument."""

    def __init__(self, numpy: bool = True, budget: KeepBudget | None = None) -> None:
        self.numpy = numpy
        self.copies = Copies()
        self.budget = budget if budget is not None else KeepBudget()
        self.tensor: Tensor | None = None
        self.array: np.ndarray | None = None

    def get(self, x: Tensor) -> np.ndarray | None:
        if x is not self.tensor:
            self.tensor, self.array = x, as_array(x) if self.numpy else None
        return self.array

    def view(self, x: Tensor) -> np.ndarray | None:
        """:func:`as_array` of ``x`` (uncached), or None when ``numpy`` is False."""
        return as_array(x) if self.numpy else None

    def clear(self) -> None:
        self.tensor = self.array = None
        self.copies.clear()
