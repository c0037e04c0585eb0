"""The reference network and data of ``tests/data/reference/neurobench_2_3_0_reference.json``,
and the other networks ``bench/overhead.py`` times.

snnTorch net: Linear(700,128) -> Leaky(beta=0.9, init_hidden) -> Linear(128,20) ->
Leaky(beta=0.9, output); first Linear weight x4 after default init with
torch.manual_seed(0); input Bernoulli(p=0.05) spikes (256, 100, 700) drawn after the net
with the same generator; batch 64. Other sample counts (``samples``) draw other data: the
reference figures hold for 256 only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

#: ``$NEUROMARK_REFERENCE_DIR`` or the figures shipped in ``tests/data/reference``.
REFERENCE_DIR = Path(os.environ.get("NEUROMARK_REFERENCE_DIR",
                                    Path(__file__).resolve().parents[1] / "tests/data/reference"))
REFERENCE_JSON = REFERENCE_DIR / "neurobench_2_3_0_reference.json"


def build_reference(batch_size: int = 64, samples: int = 256) -> tuple[nn.Module, DataLoader]:
    import snntorch as snn

    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Linear(700, 128),
        snn.Leaky(beta=0.9, init_hidden=True),
        nn.Linear(128, 20),
        snn.Leaky(beta=0.9, init_hidden=True, output=True),
    )
    with torch.no_grad():
        net[0].weight.mul_(4)
    data = torch.bernoulli(torch.full((samples, 100, 700), 0.05))
    targets = torch.randint(0, 20, (samples,))
    return net, DataLoader(TensorDataset(data, targets), batch_size=batch_size)


def build_wide(batch_size: int = 256, samples: int = 2048) -> tuple[nn.Module, DataLoader]:
    """The wide net (not in the reference file): Linear(700,1024) -> Leaky ->
    Linear(1024,1024) -> Leaky -> Linear(1024,20) -> Leaky (snnTorch, beta 0.9,
    init_hidden), first weight x4 as in the reference net; Bernoulli(0.05) spikes
    (samples, 100, 700)."""
    import snntorch as snn

    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Linear(700, 1024), snn.Leaky(beta=0.9, init_hidden=True),
        nn.Linear(1024, 1024), snn.Leaky(beta=0.9, init_hidden=True),
        nn.Linear(1024, 20), snn.Leaky(beta=0.9, init_hidden=True, output=True),
    )
    with torch.no_grad():
        net[0].weight.mul_(4)
    data = torch.bernoulli(torch.full((samples, 100, 700), 0.05))
    targets = torch.randint(0, 20, (samples,))
    return net, DataLoader(TensorDataset(data, targets), batch_size=batch_size)


class FunctionalLinear(nn.Module):
    """``F.linear(x, self.weight, self.bias)`` with its own parameters: no wrapper covers
    it, so the probes count it by interception."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.w, self.b = linear.weight, linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.w, self.b)


def build_intercepted(batch_size: int = 64) -> tuple[nn.Module, DataLoader]:
    """The reference network with its first Linear called functionally
    (:class:`FunctionalLinear`, same parameters): the same counts, through interception."""
    net, loader = build_reference(batch_size)
    net[0] = FunctionalLinear(net[0])
    return net, loader


def build_conv(batch_size: int = 16, samples: int = 64) -> tuple[nn.Module, DataLoader]:
    """A convolutional SNN (not in the reference file): Conv2d(2,16,3) -> Leaky ->
    Conv2d(16,32,3,stride 2) -> Leaky -> Linear(8192,10) -> Leaky, on Bernoulli(0.1) spikes
    of shape (samples, 20, 2, 32, 32), batch 16 (the GPU case: 512 samples, batch 64)."""
    import snntorch as snn

    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(2, 16, 3, padding=1), snn.Leaky(beta=0.9, init_hidden=True),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), snn.Leaky(beta=0.9, init_hidden=True),
        nn.Flatten(), nn.Linear(32 * 16 * 16, 10),
        snn.Leaky(beta=0.9, init_hidden=True, output=True),
    )
    data = torch.bernoulli(torch.full((samples, 20, 2, 32, 32), 0.1))
    targets = torch.randint(0, 10, (samples,))
    return net, DataLoader(TensorDataset(data, targets), batch_size=batch_size)


def reference_figures() -> dict:
    return json.loads(REFERENCE_JSON.read_text())
