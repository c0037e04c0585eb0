"""Adapter for snnTorch networks that are called once per timestep."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from neuromark.models.adapter import ModelAdapter
from neuromark.models.base import first_tensor
from neuromark.models.wrapping import describe_output


class SNNTorchModel(ModelAdapter):
    """Steps an snnTorch network over the time dimension of the input.

    Args:
        module: a network mapping one timestep (B, *features) to spikes, or to a tuple whose
            first element is the spikes (e.g. ``(spk, mem)``).
        time_dim: the time dimension of the batch; data is (B, T, *features) by default.
        exempt_params: see :class:`~neuromark.models.adapter.ModelAdapter`.

    Returns per batch the output spikes stacked over time, (B, T, *out_features).
    """

    def __init__(self, module: nn.Module, time_dim: int = 1,
                 exempt_params: Sequence[str] = ()) -> None:
        super().__init__(module, exempt_params)
        self.time_dim = time_dim
        #: what the net's forward returned on its first step (:func:`describe_output`)
        self.step_output: str | None = None

    def __call__(self, data: Tensor) -> Tensor:
        steps = []
        for x_t in self.split_steps(data, self.time_dim):
            out = self.module(x_t)
            if self.step_output is None:
                self.step_output = describe_output(out)
            steps.append(first_tensor(out))
        return torch.stack(steps, dim=1)
