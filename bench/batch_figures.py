"""Figures of an snnTorch ``RLeaky`` network at evaluation batch sizes 1, 32 and 120.

The docs' example for "figures independent of the batch" (docs/algorithm_track.md):
footprint (bytes), synaptic operations (Effective_MACs, Effective_ACs, Dense per sample)
under the per-sample MAC/AC rule (the default) and neurobench's per-call rule
(``SynapticOperations(mac_rule="per_call")``), and activation sparsity.

Network (seed 0): Linear 40->64, ``snn.RLeaky`` (64 neurons, all-to-all recurrent
Linear 64->64), Linear 64->10, ``snn.Leaky``. Data (seed 1): 120 samples x 25 steps x 40
features; even samples are Bernoulli(0.2) spikes, odd samples analog currents
``|N(0, 1)|`` with 80 % of the values zeroed, so the first layer's input is binary for
half of the samples.

Usage: python bench/batch_figures.py [--batches 1 32 120]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import torch
from torch import nn

SAMPLES, STEPS, FEATURES, HIDDEN, OUT = 120, 25, 40, 64, 10


def build_net() -> nn.Module:
    """The RLeaky network (weights from seed 0)."""
    import snntorch as snn

    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(FEATURES, HIDDEN)
            self.lif1 = snn.RLeaky(beta=0.9, linear_features=HIDDEN, init_hidden=True)
            self.fc2 = nn.Linear(HIDDEN, OUT)
            self.lif2 = snn.Leaky(beta=0.9, init_hidden=True)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lif2(self.fc2(self.lif1(self.fc1(x) * 4.0)))

    return Net().eval()


def build_data() -> tuple[torch.Tensor, torch.Tensor]:
    """(data (120, 25, 40), targets (120,)): even samples spikes, odd samples analog."""
    g = torch.Generator().manual_seed(1)
    spikes = (torch.rand(SAMPLES, STEPS, FEATURES, generator=g) < 0.2).float()
    analog = torch.randn(SAMPLES, STEPS, FEATURES, generator=g).abs()
    analog = analog * (torch.rand(SAMPLES, STEPS, FEATURES, generator=g) < 0.2)
    odd = (torch.arange(SAMPLES) % 2 == 1).view(-1, 1, 1)
    data = torch.where(odd, analog, spikes)
    return data, torch.arange(SAMPLES) % OUT


def figures(batch: int, mac_rule: str | None = None) -> dict[str, Any]:
    """Footprint, synaptic operations (``mac_rule``; None: the default) and activation
    sparsity of the network on the data, evaluated in batches of ``batch``."""
    from neuromark import Benchmark
    from neuromark.metrics.complexity import ActivationSparsity, SynapticOperations
    from neuromark.metrics.static import Footprint
    from neuromark.models.snntorch_model import SNNTorchModel

    data, targets = build_data()
    loader = [(data[i:i + batch], targets[i:i + batch]) for i in range(0, SAMPLES, batch)]
    synops = SynapticOperations() if mac_rule is None else SynapticOperations(mac_rule=mac_rule)
    results = Benchmark(SNNTorchModel(build_net()), loader,
                        metrics=[Footprint(), synops, ActivationSparsity()], quiet=True).run()
    scores = dict(results)
    return {"footprint": scores["footprint"], "synaptic_operations": scores["synaptic_operations"],
            "activation_sparsity": scores["activation_sparsity"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 32, 120])
    args = parser.parse_args(argv)
    print(f"{'rule':10} {'batch':>5} {'footprint':>10} {'Effective_MACs':>15} "
          f"{'Effective_ACs':>14} {'Dense':>10} {'act. sparsity':>14}")
    for rule in ("per_sample", "per_call"):
        for batch in args.batches:
            try:
                f = figures(batch, rule)
            except TypeError:  # a neuromark without the mac_rule option: its only rule
                f = figures(batch)
            ops = f["synaptic_operations"]
            print(f"{rule:10} {batch:5d} {f['footprint']:10,d} {ops['Effective_MACs']:15,.3f} "
                  f"{ops['Effective_ACs']:14,.3f} {ops['Dense']:10,.1f} "
                  f"{f['activation_sparsity']:14.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
