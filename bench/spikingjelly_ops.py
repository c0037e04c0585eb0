"""SpikingJelly 2.0.0's ATen-level op counter beside neuromark's synaptic-operation count.

Five shared nets (dense LIF, conv LIF, recurrent LIF with an explicit recurrent Linear, a
functional ``F.linear`` net, a conv net with average pooling before its readout) and two
variants of the dense net (half its weights zero; signed input spikes), one
seeded batch of 4 binary inputs, single-step SpikingJelly LIF nodes. Counted with
SpikingJelly's ``SynOpCounter`` (spike-driven accumulates: nnz(spike operand) x the other
dimension, for mm/addmm/bmm/baddbmm/convolution) and ``MACCounter`` (m n k of every such
op whose operands are both non-binary), under ``DispatchCounterMode``; and with neuromark's
``SynapticOperations`` (Dense, Effective_MACs, Effective_ACs) through the harness. Both per
sample (SpikingJelly's totals / batch size).

Run it in the scratch venv of ``scripts/adapter_checks.sh`` (SpikingJelly is never a
dependency of neuromark or its tests)::

    bash scripts/adapter_checks.sh spikingjelly   # creates .cache/adapter-venvs/spikingjelly
    .cache/adapter-venvs/spikingjelly/bin/python bench/spikingjelly_ops.py
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from spikingjelly.activation_based import neuron
from spikingjelly.activation_based.op_counter import DispatchCounterMode, MACCounter, SynOpCounter
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.complexity import SynapticOperations
from neuromark.models.spikingjelly_model import SpikingJellyModel

BATCH = 4


def lif() -> nn.Module:
    return neuron.LIFNode(tau=2.0, decay_input=False, v_threshold=0.5)


class Recurrent(nn.Module):
    """Input Linear + a recurrent Linear of the last spikes, 5 steps inside one call."""

    def __init__(self) -> None:
        super().__init__()
        self.inp, self.rec, self.lif, self.out = nn.Linear(12, 10), nn.Linear(10, 10), lif(), nn.Linear(10, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        spk = torch.zeros(x.shape[0], 10)
        for _ in range(5):
            spk = self.lif(self.inp(x) + self.rec(spk))
        return self.out(spk)


class Functional(nn.Module):
    """Weights as parameters applied with ``F.linear``."""

    def __init__(self) -> None:
        super().__init__()
        self.w1, self.w2 = nn.Parameter(torch.randn(16, 20) * 0.5), nn.Parameter(torch.randn(4, 16) * 0.5)
        self.lif = lif()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(self.lif(F.linear(x, self.w1)), self.w2)


def nets() -> dict[str, tuple[nn.Module, torch.Size]]:
    torch.manual_seed(0)
    return {
        "dense LIF": (nn.Sequential(nn.Linear(20, 16), lif(), nn.Linear(16, 4), lif()), (20,)),
        "conv LIF": (nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), lif(), nn.Flatten(),
                                   nn.Linear(4 * 8 * 8, 5)), (2, 8, 8)),
        "recurrent LIF": (Recurrent(), (12,)),
        "functional F.linear": (Functional(), (20,)),
        "pooled conv": (nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), lif(), nn.AvgPool2d(2),
                                      nn.Flatten(), nn.Linear(4 * 4 * 4, 5)), (2, 8, 8)),
        "dense LIF, half the weights 0": (pruned(), (20,)),
        "dense LIF, signed input {-1, 0, 1}": (nn.Sequential(nn.Linear(20, 16), lif(),
                                                             nn.Linear(16, 4), lif()), (20,)),
    }


def pruned() -> nn.Module:
    net = nn.Sequential(nn.Linear(20, 16), lif(), nn.Linear(16, 4), lif())
    with torch.no_grad():
        for layer in (net[0], net[2]):
            layer.weight[torch.rand(layer.weight.shape) < 0.5] = 0.0
    return net


def reset(net: nn.Module) -> None:
    for m in net.modules():
        if hasattr(m, "reset") and isinstance(m, neuron.BaseNode):
            m.reset()


def main() -> None:
    print("| net | SJ SynOps | SJ MACs | neuromark Dense | Eff. MACs | Eff. ACs |")
    print("|---|---|---|---|---|---|")
    for name, (net, shape) in nets().items():
        torch.manual_seed(1)
        x = (torch.rand(BATCH, *shape) < 0.3).float()
        if "signed" in name:
            x = x * torch.where(torch.rand(x.shape) < 0.5, -1.0, 1.0)
        net.eval()
        reset(net)
        syn, mac = SynOpCounter(), MACCounter()
        with torch.no_grad(), DispatchCounterMode([syn, mac]):
            net(x)
        reset(net)
        ours = dict(Benchmark(SpikingJellyModel(net), [(x[:, None], torch.zeros(BATCH))],
                              metrics=[SynapticOperations()], quiet=True).run())["synaptic_operations"]
        print(f"| {name} | {syn.get_total() / BATCH:g} | {mac.get_total() / BATCH:g} | "
              f"{ours['Dense']:g} | {ours['Effective_MACs']:g} | {ours['Effective_ACs']:g} |")


if __name__ == "__main__":
    main()
