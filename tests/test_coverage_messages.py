"""The coverage error's advice: a weight used by a parent's forward (an undercount if
exempted) against one that truly applies no synapses (exempting it is right)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.complexity import SynapticOperations
from neuromark.models.torch_model import TorchModel

X = torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 1.0]])


class FunctionalParent(nn.Module):
    """Uses its child's weight in F.linear instead of calling the child."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.fc.weight)


class MatmulParent(nn.Module):
    """``x @ self.fc.weight.T`` from a grandparent, beside a head that never runs."""

    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Module()
        self.block.fc = nn.Linear(3, 2, bias=False)
        self.spare = nn.Linear(2, 2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.block.fc.weight.T


class CalledChild(FunctionalParent):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


class OwnParameter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.full((2, 3), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.w)


def _run(net: nn.Module, **adapter):
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(0.5)  # not ternary: the input alone decides AC or MAC
    return Benchmark(TorchModel(net, **adapter), [(X, torch.zeros(2))],
                     metrics=[SynapticOperations()], quiet=True).run()


def test_parent_use_says_exempting_undercounts_and_gives_the_fix():
    with pytest.raises(Exception) as err:
        _run(FunctionalParent())
    msg = str(err.value)
    assert "fc.weight (module 'fc', Linear, shape [2, 3]); '<root>' (FunctionalParent) " \
           "uses `self.fc.weight` in its forward, outside module 'fc'" in msg
    assert "do NOT exempt them" in msg and "undercount" in msg
    assert "call the module itself (e.g. `self.fc(x)`" in msg and "interception" in msg
    assert "If a parameter applies no synapses" not in msg  # no exemption advice here


def test_both_cases_in_one_message_each_with_its_advice():
    with pytest.raises(Exception) as err:
        _run(MatmulParent())
    msg = str(err.value)
    parent, _, rest = msg.partition("Not used by a parent's forward:")
    assert "block.fc.weight" in parent and "uses `self.block.fc.weight`" in parent
    assert "do NOT exempt" in parent and "spare.weight" not in parent
    assert "spare.weight (module 'spare', Linear, shape [2, 2]); no counted operation used " \
           "it" in rest
    assert "exempt it: `exempt_params: [NAME, ...]`" in rest and "do NOT" not in rest


def test_the_advised_fixes_count_what_the_parent_computed():
    # hand count, weights all 0.5 (not ternary), 2 outputs: sample 0 [1, 0, 2] is not binary: 2 non-zero
    # inputs x 2 = 4 MACs; sample 1 [0, 0, 1]: 1 x 2 = 2 ACs; dense 2 x 3 x 2 = 12; per sample
    expected = {"Effective_MACs": 2.0, "Effective_ACs": 1.0, "Dense": 6.0}
    assert _run(CalledChild())["synaptic_operations"] == expected
    assert _run(OwnParameter())["synaptic_operations"] == expected
    # exempting the parent-used weight (the advice we no longer give) drops them all
    assert _run(FunctionalParent(), exempt_params=["fc"])["synaptic_operations"] == {
        "Effective_MACs": 0.0, "Effective_ACs": 0.0, "Dense": 0.0}


def test_a_parameter_that_applies_no_synapses_may_be_exempted():
    class Scale(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 2, bias=False)
            self.gain = nn.Parameter(torch.ones(2))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(x) * self.gain

    with pytest.raises(Exception) as err:
        _run(Scale())
    msg = str(err.value)
    assert "gain (module '<root>', Scale, shape [2])" in msg and "exempt it" in msg
    assert "do NOT exempt" not in msg
    assert _run(Scale(), exempt_params=["gain"])["synaptic_operations"]["Dense"] == 6.0
