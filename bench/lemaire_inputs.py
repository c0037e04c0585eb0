"""Which inputs of the Lemaire et al. (2022) energy model neuromark's probes give.

SpikingJelly 2.0.0's ``estimate_lemaire_energy`` (``op_counter/analytical_energy.py``;
Lemaire et al., arXiv:2210.13107) prices one forward pass from, per Linear/Conv layer and
call: the input's non-zero count (spike input) or element count, the output's element
count, the weight fan-out per input spike, the bias reads, the layer's parameter bytes,
the input and potential buffer sizes (bytes, which set the cost per byte); per LIF/IF node:
its neurons per time step, its output spikes and its time steps. neuromark's probes keep,
per connection layer, Dense and the Effective ACs/MACs (a non-zero input times a non-zero
weight), and per neuron layer the outputs, their zeros and the membrane updates.

This script runs both on the dense LIF net of ``bench/spikingjelly_ops.py`` (20-16-4, one
batch of 4 binary inputs, 30 % ones, single-step nodes) and prints Lemaire's counts per
sample beside the same counts rebuilt from our probes, where the rebuilding holds only
because the net has Linear layers with no zero weight (active inputs = Effective_ACs /
out_features, elements = Dense / in_features) and one time step per call. Run it in the
SpikingJelly venv of ``scripts/adapter_checks.sh``::

    bash scripts/adapter_checks.sh spikingjelly
    .cache/adapter-venvs/spikingjelly/bin/python bench/lemaire_inputs.py
"""

from __future__ import annotations

import torch
from spikingjelly.activation_based import neuron
from spikingjelly.activation_based.op_counter.analytical_energy import estimate_lemaire_energy
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.base import Step, WorkloadMetric
from neuromark.models.spikingjelly_model import SpikingJellyModel
from neuromark.results import Score

BATCH = 4
WORD = 4  # bytes per access in SpikingJelly's Lemaire model


class Probes(WorkloadMetric):
    """Keeps what the probes saw, per layer, summed over the run."""

    name = "probes"
    requires = frozenset({"synops", "activations", "membrane"})

    def __init__(self) -> None:
        super().__init__()
        self.add_state("ops", {}, merge=None)
        self.add_state("neurons", {}, merge=None)

    def update(self, step: Step) -> None:
        for name, ops in step.activity.ops.items():
            acc = self.ops.setdefault(name, [0.0, 0.0, 0.0])
            acc[0] += ops.effective_acs
            acc[1] += ops.effective_macs
            acc[2] += ops.dense
        for name, act in step.activity.neurons.items():
            acc = self.neurons.setdefault(name, [0, 0, 0])
            acc[0] += act.total
            acc[1] += act.zeros
            acc[2] += act.membrane_updates

    def compute(self) -> Score:
        return Score({"ops": self.ops, "neurons": self.neurons})


def net() -> nn.Sequential:
    torch.manual_seed(0)
    lif = [neuron.LIFNode(tau=2.0, decay_input=False, v_threshold=0.5) for _ in range(2)]
    return nn.Sequential(nn.Linear(20, 16), lif[0], nn.Linear(16, 4), lif[1])


def rebuilt(model: nn.Sequential, probes: dict[str, dict[str, list[float]]]) -> dict[str, float]:
    """Lemaire's counts per sample from our per-layer probes (Linear, no zero weight, one
    step per call; the layer order read from the Sequential: not known in general)."""
    ops, neurons = probes["ops"], probes["neurons"]
    out = dict.fromkeys(("ac", "mac", "acc_addr", "read_in_bytes", "read_params_bytes",
                         "read_potential_bytes", "write_out_bytes"), 0.0)
    for name, layer in model.named_children():
        if isinstance(layer, nn.Linear):
            acs, macs, dense = (v / BATCH for v in ops[name])
            outputs = dense / layer.in_features  # output elements per sample
            if macs == 0:  # spike input: one fan-out of out_features per input spike
                active = acs / layer.out_features
                out["ac"] += acs
                out["acc_addr"] += acs  # one address per weight of the fan-out
                out["read_in_bytes"] += active * WORD
                out["read_params_bytes"] += acs * WORD
                out["read_potential_bytes"] += acs * WORD  # read and write once per fan-out
            else:
                out["mac"] += dense
                out["acc_addr"] += dense / layer.out_features + outputs
                out["read_in_bytes"] += dense / layer.out_features * WORD
                out["read_params_bytes"] += dense * WORD
            out["ac"] += outputs  # one bias add per output element
            out["read_params_bytes"] += outputs * WORD
        else:
            total, zeros, _updates = (v / BATCH for v in neurons[name])
            out["read_potential_bytes"] += total * WORD
            out["ac"] += total - zeros  # output spikes
            out["mac"] += total  # the LIF leak, one multiply per neuron and step
            out["write_out_bytes"] += (total - zeros) * WORD
    out["write_potential_bytes"] = out["read_potential_bytes"]
    return out


def main() -> None:
    model = net().eval()
    torch.manual_seed(1)
    x = (torch.rand(BATCH, 20) < 0.3).float()
    report = estimate_lemaire_energy(model, x)
    for m in model.modules():
        if isinstance(m, neuron.BaseNode):
            m.reset()
    probes = dict(Benchmark(SpikingJellyModel(model), [(x[:, None], torch.zeros(BATCH))],
                            metrics=[Probes()], quiet=True).run())["probes"]
    ours = rebuilt(model, probes)
    print(f"Lemaire (SpikingJelly), per sample: total {report.total_pj / BATCH:.1f} pJ; buffers "
          f"{report.buffer_sizes_bytes}")
    print("| count | Lemaire / sample | rebuilt from neuromark's probes |")
    print("|---|---|---|")
    for key, value in ours.items():
        print(f"| {key} | {report.counts[key] / BATCH:g} | {value:g} |")
    print(f"| mac_addr | {report.counts['mac_addr'] / BATCH:g} | 0 (Linear layers have none) |")


if __name__ == "__main__":
    main()
