"""Shared by the batch-independence tests: mixed binary/analog data and the figures of a
model at evaluation batch sizes 1, 32 and 120 (footprint, synaptic operations, activation
sparsity), which must not differ."""

from __future__ import annotations

from typing import Any

import torch

from neuromark import Benchmark
from neuromark.metrics import ActivationSparsity, Footprint, SynapticOperations

BATCHES = (1, 32, 120)
SAMPLES = 120


def mixed_data(features: int, steps: int = 5, seed: int = 3) -> torch.Tensor:
    """(120, ``steps``, ``features``): even samples Bernoulli(0.3) spikes, odd samples
    analog |N(0, 1)| with 70 % zeros, so only some samples of a batch are binary."""
    g = torch.Generator().manual_seed(seed)
    spikes = (torch.rand(SAMPLES, steps, features, generator=g) < 0.3).float()
    analog = torch.randn(SAMPLES, steps, features, generator=g).abs() \
        * (torch.rand(SAMPLES, steps, features, generator=g) < 0.3)
    odd = (torch.arange(SAMPLES) % 2 == 1).view(-1, *([1] * (spikes.dim() - 1)))
    return torch.where(odd, analog, spikes)


def figures(adapter: Any, data: torch.Tensor, batch: int, mac_rule: str = "per_sample",
            counting_path: str | None = None) -> dict[str, Any]:
    """Footprint, synaptic operations (all three keys) and activation sparsity of
    ``adapter`` on ``data`` evaluated in batches of ``batch``."""
    targets = torch.zeros(len(data))
    loader = [(data[i:i + batch], targets[i:i + batch]) for i in range(0, len(data), batch)]
    metrics = [Footprint(), SynapticOperations(mac_rule=mac_rule), ActivationSparsity()]
    res = Benchmark(adapter, loader, metrics=metrics, quiet=True,
                    counting_path=counting_path).run()
    return {"footprint": int(res["footprint"]),
            "synaptic_operations": dict(res["synaptic_operations"]),
            "activation_sparsity": float(res["activation_sparsity"])}


def assert_batch_independent(adapter: Any, data: torch.Tensor, **kwargs: Any) -> dict:
    """The figures at batch 1, 32 and 120 are identical; returns them."""
    first, *others = [figures(adapter, data, batch, **kwargs) for batch in BATCHES]
    for batch, other in zip(BATCHES[1:], others):
        assert other == first, f"batch {batch} vs batch 1"
    return first
