"""Shared by the adapter equivalence tests: spike inputs, the snnTorch twin of a 2-layer
network (Linear, Leaky, Linear, Leaky with the same weights), and the count comparison."""

from __future__ import annotations

import torch
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.metrics.neuron_ops import NeuronOperations

#: 8 samples, 30 steps, 6 inputs of Bernoulli(0.4) spikes
X = torch.bernoulli(torch.full((8, 30, 6), 0.4), generator=torch.Generator().manual_seed(1))
KEYS = ("synaptic_operations", "activation_sparsity", "membrane_updates", "neuron_operations")


def linear_layers(net: nn.Module) -> list[nn.Linear]:
    return [m for m in net.modules() if isinstance(m, nn.Linear)]


def seeded_weights(net: nn.Module, scales: tuple[float, float] = (1.2, 1.5)) -> None:
    """Deterministic weights that make both layers spike: N(0, 1) times ``scales``."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for lin, scale in zip(linear_layers(net), scales):
            lin.weight.copy_(torch.randn(lin.weight.shape, generator=gen) * scale)
            if lin.bias is not None:
                lin.bias.copy_(torch.randn(lin.bias.shape, generator=gen) * 0.1)


def snntorch_twin(net: nn.Module, betas: tuple[float, float], reset: str = "zero",
                  threshold: float = 1.0, input_scale: tuple[float, float] = (1.0, 1.0),
                  weight_scale: tuple[float, float] = (1.2, 1.5), **leaky: object) -> nn.Module:
    """snnTorch Linear-Leaky-Linear-Leaky with ``net``'s (re-seeded) linear weights, times
    ``input_scale`` per layer (for frameworks that scale a neuron's input current);
    ``leaky``: more ``snn.Leaky`` options (e.g. ``reset_delay=False``)."""
    import snntorch as snn

    seeded_weights(net, weight_scale)
    first, second = linear_layers(net)
    twin = nn.Sequential(nn.Linear(first.in_features, first.out_features),
                         snn.Leaky(beta=betas[0], threshold=threshold, init_hidden=True,
                                   reset_mechanism=reset, **leaky),
                         nn.Linear(second.in_features, second.out_features),
                         snn.Leaky(beta=betas[1], threshold=threshold, init_hidden=True,
                                   reset_mechanism=reset, **leaky))
    with torch.no_grad():
        for mine, theirs, scale in zip(linear_layers(twin), (first, second), input_scale):
            mine.weight.copy_(theirs.weight * scale)
            mine.bias.copy_(theirs.bias * scale)
    return twin


def counts(adapter) -> tuple[torch.Tensor, dict]:
    metrics = [SynapticOperations(), ActivationSparsity(), MembraneUpdates(), NeuronOperations()]
    res = Benchmark(adapter, [(X, torch.zeros(len(X)))], metrics=metrics, quiet=True).run()
    adapter.reset_state()
    with torch.no_grad():
        out = adapter(X)
    values = {k: res[k] for k in KEYS}
    values["activation_sparsity_by_layer"] = sorted(res["activation_sparsity_by_layer"].values())
    return out, values


def assert_same_counts(adapter, twin: nn.Module) -> None:
    from neuromark.models.snntorch_model import SNNTorchModel

    out, ours = counts(adapter)
    ref_out, theirs = counts(SNNTorchModel(twin))
    assert ref_out.sum() > 10, "the reference network should spike"
    assert torch.equal(out, ref_out)
    assert ours == theirs


def dense_synops(adapter) -> float:
    """Dense synaptic operations of ``adapter`` on :data:`X` (per sample)."""
    res = Benchmark(adapter, [(X, torch.zeros(len(X)))], metrics=[SynapticOperations()],
                    quiet=True).run()
    return res["synaptic_operations"]["Dense"]
