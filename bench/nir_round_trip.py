"""Measures what the snnTorch -> NIR -> neuromark round trip loses (docs/frameworks.md).

Zero-reset Leaky nets come back exactly; subtract-reset nets come back as zero-reset (NIR's
LIF resets to v_reset), and snnTorch's Synaptic with zero reset also zeroes its synaptic
current after a spike, which NIR's CubaLIF does not. For each case: the fraction of output
spikes that differ and the spike counts, over 64 samples x 100 steps of Bernoulli(0.3)
inputs into a 20-32-10 network.

Run: .venv/bin/python bench/nir_round_trip.py
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import nir
import snntorch as snn
import torch
from torch import nn

from neuromark.models.nir_model import from_nir, to_nir
from neuromark.models.snntorch_model import SNNTorchModel


def net(reset: str, synaptic: bool, seed: int) -> nn.Module:
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    second = snn.Synaptic(alpha=torch.rand(10, generator=gen) * 0.5 + 0.3,
                          beta=torch.rand(10, generator=gen) * 0.5 + 0.4,
                          threshold=torch.ones(10), init_hidden=True, reset_mechanism=reset) \
        if synaptic else snn.Leaky(beta=torch.rand(10, generator=gen) * 0.5 + 0.4,
                                   threshold=torch.ones(10), init_hidden=True,
                                   reset_mechanism=reset)
    model = nn.Sequential(nn.Linear(20, 32),
                          snn.Leaky(beta=torch.rand(32, generator=gen) * 0.5 + 0.4,
                                    threshold=torch.ones(32), init_hidden=True,
                                    reset_mechanism=reset),
                          nn.Linear(32, 10), second)
    with torch.no_grad():
        model[0].weight.mul_(2.5)
        model[2].weight.mul_(2.5)
    return model


def spikes(adapter, x: torch.Tensor) -> torch.Tensor:
    adapter.reset_state()
    with torch.no_grad():
        return adapter(x)


def main() -> None:
    x = torch.bernoulli(torch.full((64, 100, 20), 0.3), generator=torch.Generator().manual_seed(0))
    print("case                           spikes snnTorch  spikes via NIR  differing outputs")
    for name, reset, synaptic in (("Leaky, zero reset", "zero", False),
                                  ("Leaky, subtract reset", "subtract", False),
                                  ("Leaky + Synaptic, zero reset", "zero", True),
                                  ("Leaky + Synaptic, subtract", "subtract", True)):
        model = net(reset, synaptic, seed=1)
        with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
            warnings.simplefilter("ignore")
            path = Path(tmp) / "net.nir"
            nir.write(str(path), to_nir(model, torch.zeros(20)))
            back = from_nir(path)
        ref, ours = spikes(SNNTorchModel(model), x), spikes(back, x)
        differ = (ref != ours).float().mean().item()
        print(f"{name:30s} {int(ref.sum()):15d} {int(ours.sum()):15d} {100 * differ:17.2f} %")


if __name__ == "__main__":
    main()
