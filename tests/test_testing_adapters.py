"""The model adapter check of :mod:`neuromark.testing` on the built-in adapters installed
here (the batch-independence tests of every framework adapter run it too, through
``tests/batch_independence.py``), with figures counted by hand; a model that keeps state
between batches is refused."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark.testing import check_adapter
from neuromark.testing.results import ContractError

X = torch.bernoulli(torch.full((6, 4, 5), 0.4), generator=torch.Generator().manual_seed(2))


def test_a_torch_model_passes():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 3, bias=False))  # applied per step: (B, T, 5) -> (B, T, 3)
    found = check_adapter(net, X, batch_sizes=(1, 4, 6))
    assert found["footprint"] == 5 * 3 * 4  # 15 float32 weights
    assert found["synaptic_operations"]["Dense"] == 4 * 5 * 3  # 4 steps x 15 weights per sample


def test_an_snntorch_model_passes():
    snn = pytest.importorskip("snntorch")
    from neuromark.models.snntorch_model import SNNTorchModel

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(5, 3, bias=False), snn.Leaky(beta=0.9, init_hidden=True))
    with torch.no_grad():
        net[0].weight.mul_(4.0)
    found = check_adapter(SNNTorchModel(net), X, batch_sizes=(1, 3, 6))
    assert 0 <= found["activation_sparsity"] <= 1
    assert found["synaptic_operations"]["Dense"] == 4 * 5 * 3


class Drifting(nn.Module):
    """Adds how many batches it has seen: state no reset clears."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 3)
        self.seen = 0

    def forward(self, x):
        self.seen += 1
        return self.fc(x) + self.seen


def test_a_model_keeping_state_between_batches_is_refused():
    with pytest.raises(ContractError, match="state left behind"):
        check_adapter(Drifting(), X)
