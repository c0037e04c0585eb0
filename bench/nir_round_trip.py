"""Measures what the snnTorch -> NIR -> neuromark round trip loses (docs/frameworks.md).

Zero-reset Leaky nets come back exactly; subtract-reset nets come back as zero-reset (NIR's
LIF resets to v_reset), and snnTorch's Synaptic with zero reset also zeroes its synaptic
current after a spike, which NIR's CubaLIF does not. For each case: the fraction of output
spikes that differ and the spike counts, over 64 samples x 100 steps of Bernoulli(0.3)
inputs into a 20-32-10 network.

Then the shipped snnTorch baselines (``nehar_ffsnn``, ``eeg_snn``, factory weights × 4 so
that every layer spikes; one shared beta per layer, broadcast per neuron by ``to_nir``):
exported, read by ``nir.read``, re-imported by snnTorch's own ``import_from_nir``, and
compared over 32 samples x 50 steps of 4·Bernoulli(0.5) input with the network as shipped
(subtract reset) and with NIR's reset (zero, in the step of the spike).

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


def _stepped(model: nn.Module, x: torch.Tensor, imported: bool = False) -> torch.Tensor:
    """Outputs (T, B, classes) fed x (T, B, inputs) one step per call from a reset state."""
    for m in model.modules():
        if type(m).__name__ in ("Leaky", "Synaptic"):
            m.reset_mem()
    outs, state = [], None
    with torch.no_grad():
        for step in x:
            if imported:
                out, state = model(step, state) if state is not None else model(step)
            else:
                out = model(step)
            outs.append(out[0] if isinstance(out, tuple) else out)
    return torch.stack(outs)


def baselines() -> None:
    from snntorch.import_nir import import_from_nir

    from neuromark.benchmarks.activity.models import FFSNN
    from neuromark.benchmarks.eeg_mi.models import EEGSNN

    print("\nshipped baseline  differing outputs vs shipped (subtract)  vs NIR's zero reset")
    for name, factory, inputs in (("nehar_ffsnn", FFSNN, 6), ("eeg_snn", EEGSNN, 62)):
        torch.manual_seed(0)
        model = factory().eval()
        with torch.no_grad():
            for layer in model.modules():
                if isinstance(layer, nn.Linear):
                    layer.weight.mul_(4)
        with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
            warnings.simplefilter("ignore")
            path = Path(tmp) / "net.nir"
            nir.write(str(path), to_nir(model, torch.zeros(inputs)))
            back = import_from_nir(nir.read(str(path)))
        x = 4 * torch.bernoulli(torch.full((50, 32, inputs), 0.5),
                                generator=torch.Generator().manual_seed(1))
        zero = factory().eval()
        zero.load_state_dict(model.state_dict())
        for m in zero.modules():
            if type(m).__name__ in ("Leaky", "Synaptic"):
                m.reset_mechanism, m.reset_delay = "zero", False
        got = _stepped(back, x, imported=True)
        vs_shipped = (got != _stepped(model, x)).float().mean().item()
        vs_zero = (got != _stepped(zero, x)).float().mean().item()
        print(f"{name:16s} {100 * vs_shipped:37.2f} % {100 * vs_zero:20.2f} %")


if __name__ == "__main__":
    main()
    baselines()
