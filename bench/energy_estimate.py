"""Energy estimates beside their counts on a small snnTorch network (docs/frameworks.md).

A 20-32-10 network (Leaky, then Synaptic; snnTorch, subtract reset), 64 samples x 100 steps
of Bernoulli(0.3) spikes: synaptic operations, neuron operations and the estimate for each
shipped Horowitz 45 nm profile, per sample.

Run: .venv/bin/python bench/energy_estimate.py
"""

from __future__ import annotations

import snntorch as snn
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.complexity import SynapticOperations
from neuromark.metrics.energy import EnergyEstimate
from neuromark.metrics.neuron_ops import NeuronOperations
from neuromark.models.snntorch_model import SNNTorchModel


def main() -> None:
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(20, 32), snn.Leaky(beta=0.8, init_hidden=True),
                        nn.Linear(32, 10), snn.Synaptic(alpha=0.6, beta=0.8, init_hidden=True))
    with torch.no_grad():
        net[0].weight.mul_(2.5)
        net[2].weight.mul_(2.5)
    x = torch.bernoulli(torch.full((64, 100, 20), 0.3), generator=torch.Generator().manual_seed(0))
    energy = EnergyEstimate()
    res = Benchmark(SNNTorchModel(net), [(x, torch.zeros(64))],
                    metrics=[SynapticOperations(), NeuronOperations(), energy], quiet=True).run()
    ops, neuron = res["synaptic_operations"], res["neuron_operations"]
    print(f"per sample: {ops['Effective_MACs']:.0f} MACs, {ops['Effective_ACs']:.0f} ACs, "
          f"{neuron['Effective_Neuron_Ops']:.0f} neuron ops (dense {neuron['Dense_Neuron_Ops']:.0f})")
    for name, joules in res["energy_estimate"].items():
        label = res.details["energy_estimate"]["profiles"][name]["label"]
        print(f"  {label:38s} {joules * 1e9:8.3f} nJ/sample (estimate, arithmetic only)")


if __name__ == "__main__":
    main()
