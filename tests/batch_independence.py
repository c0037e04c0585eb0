"""Shared by the batch-independence tests: mixed binary/analog data and the figures of a
model at evaluation batch sizes 1, 32 and 120 (footprint, synaptic operations, activation
sparsity), which must not differ: :func:`neuromark.testing.adapter.check_adapter`, the
check plugin authors run on their adapters."""

from __future__ import annotations

from typing import Any

import torch

from neuromark.testing.adapter import check_adapter, figures_at

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
    return figures_at(adapter, data, batch, spiking=True, mac_rule=mac_rule,
                      counting_path=counting_path)


def assert_batch_independent(adapter: Any, data: torch.Tensor, **kwargs: Any) -> dict:
    """The figures at batch 1, 32 and 120 are identical (and the adapter keeps the rest of
    neuromark.testing.adapter's contract); returns them."""
    return check_adapter(adapter, data, batch_sizes=BATCHES, spiking=True, **kwargs)
