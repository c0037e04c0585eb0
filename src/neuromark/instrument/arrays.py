"""One-slot cache of the numpy view of the tensor seen last.

A neuron layer's output is usually the next Linear layer's input: both probes then read
it through the same view instead of asking torch twice (each binding call costs about a
microsecond between layers)."""

from __future__ import annotations

import numpy as np
from torch import Tensor

from neuromark.instrument.kernels import as_array


class LastArray:
    """``get(x)``: :func:`~neuromark.instrument.kernels.as_array` of ``x``, reused when
    ``x`` is the tensor of the previous call."""

    def __init__(self) -> None:
        self.tensor: Tensor | None = None
        self.array: np.ndarray | None = None

    def get(self, x: Tensor) -> np.ndarray | None:
        if x is not self.tensor:
            self.tensor, self.array = x, as_array(x)
        return self.array

    def clear(self) -> None:
        self.tensor = self.array = None
