"""Shared test helpers."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from torch import nn

#: ``$NEUROMARK_REFERENCE_DIR`` or ``tests/data/reference`` (reference figures shipped with
#: their provenance; a test whose file is absent there skips).
REFERENCE_DIR = Path(os.environ.get("NEUROMARK_REFERENCE_DIR",
                                    Path(__file__).resolve().parent / "data" / "reference"))


class CountingLIF(nn.Module):
    """A tiny LIF with a ``mem`` attribute rebound each step (as snnTorch does), in the
    dtype of its input."""

    neuromark_neuron = True

    def __init__(self) -> None:
        super().__init__()
        self.mem = torch.zeros(())

    def reset_state(self) -> None:
        self.mem = torch.zeros(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.mem = 0.5 * self.mem + x
        spk = (self.mem >= 1).to(x.dtype)
        self.mem = self.mem - spk
        return spk
