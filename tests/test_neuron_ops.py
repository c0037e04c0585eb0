"""NeuronOperations: NeuroBench 2.3.0's cost table, declared costs, hand-computed counts."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.complexity import MembraneUpdates
from neuromark.metrics.functional.neuron_ops import (
    SNNTORCH_COSTS,
    NeuronCostError,
    neuron_cost,
    neuron_operations,
)
from neuromark.metrics.neuron_ops import NeuronOperations
from neuromark.models.adapter import ModelAdapter
from neuromark.models.base import NeuronLayer, membrane_attribute
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.registry import metrics as metric_registry

snn = pytest.importorskip("snntorch")

# one sample, 3 steps, 2 neurons; neuron 1 gets no input and keeps mem 0; no spikes
X = torch.tensor([[[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]])
# step 1 from a fresh state: both neurons (2); steps 2, 3: only neuron 0 changes (1 + 1)
UPDATES, NEURON_STEPS = 4, 6


def neuron_of(kind: str, reset: str) -> nn.Module:
    common = {"threshold": 100.0, "reset_mechanism": reset, "init_hidden": True}
    if kind == "Leaky":
        return snn.Leaky(beta=0.5, **common)
    if kind == "Synaptic":
        return snn.Synaptic(alpha=0.6, beta=0.5, **common)
    if kind == "Lapicque":
        return snn.Lapicque(beta=0.5, **common)
    return snn.Alpha(alpha=0.6, beta=0.5, **common)


def run(net: nn.Module, adapter=SNNTorchModel, metrics=None):
    metrics = metrics or [NeuronOperations(), MembraneUpdates()]
    return Benchmark(adapter(net), [(X, torch.zeros(1)), (X.repeat(2, 1, 1), torch.zeros(2))],
                     metrics=metrics, quiet=True).run()


def test_cost_table_is_neurobench_2_3_0():
    assert SNNTORCH_COSTS == {"Leaky": {"subtract": 4, "zero": 4},
                              "Synaptic": {"subtract": 6, "zero": 8},
                              "Lapicque": {"subtract": 11, "zero": 11},
                              "Alpha": {"subtract": 18, "zero": 24}}
    assert neuron_operations(3, 5, 6) == (18.0, 30.0)
    assert metric_registry.get("neuron_operations") is NeuronOperations


@pytest.mark.parametrize("kind", sorted(SNNTORCH_COSTS))
@pytest.mark.parametrize("reset", ["subtract", "zero"])
def test_snntorch_neurons_hand_counted(kind, reset):
    net = nn.Sequential(nn.Identity(), neuron_of(kind, reset))
    res = run(net)
    cost = SNNTORCH_COSTS[kind][reset]
    assert res["membrane_updates"] == UPDATES
    assert res["neuron_operations"] == {"Effective_Neuron_Ops": UPDATES * cost,
                                        "Dense_Neuron_Ops": NEURON_STEPS * cost}
    assert res.details["neuron_operations"]["by_layer"]["1"]["cost"] == cost


def test_two_layers_sum_and_stateless_activations_add_nothing():
    lin = nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.eye(2))
    net = nn.Sequential(neuron_of("Leaky", "subtract"), lin, nn.ReLU(),
                        neuron_of("Synaptic", "zero"))
    res = run(net)
    # layer 0 (Leaky, 4): 4 updates of 6; layer 3 (Synaptic zero, 8): its input is layer 0's
    # spikes (none): step 1 counts both (fresh), then nothing changes: 2 updates of 6
    assert res["membrane_updates"] == 4 + 2
    assert res["neuron_operations"] == {"Effective_Neuron_Ops": 4 * 4 + 2 * 8,
                                              "Dense_Neuron_Ops": 6 * 4 + 6 * 8}
    assert set(res.details["neuron_operations"]["by_layer"]) == {"0", "3"}


class Custom(nn.Module):
    """A leaky integrator with its own membrane, no known cost."""

    neuromark_neuron = True

    def __init__(self) -> None:
        super().__init__()
        self.mem = None

    def reset_state(self) -> None:
        self.mem = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.mem = x if self.mem is None else 0.5 * self.mem + x
        return (self.mem > 100).float()


def test_undeclared_cost_fails_naming_the_layer():
    with pytest.raises(Exception, match=r"neuron layer 'neuron'.*Custom.*no declared cost"):
        run(_named(Custom()))
    # snnTorch's own neurons all have a cost now (tests/test_snntorch_neuron_costs.py),
    # reset "none" included (beta*U + I: 2); a subclass of one of them is not one of them
    assert neuron_cost(snn.Leaky(beta=0.5, reset_mechanism="none"), "lif") == 2

    class MyLeaky(snn.Leaky):
        pass

    with pytest.raises(NeuronCostError, match=r"'lif'.*MyLeaky.*no declared cost"):
        neuron_cost(MyLeaky(beta=0.5), "lif")


def _named(module: nn.Module) -> nn.Module:
    net = nn.Sequential()
    net.add_module("neuron", module)
    return net


def test_cost_declared_by_attribute_or_adapter():
    neuron = Custom()
    neuron.neuromark_neuron_cost = 3
    res = run(_named(neuron))
    assert res["neuron_operations"] == {"Effective_Neuron_Ops": 12, "Dense_Neuron_Ops": 18}
    neuron.neuromark_neuron_cost = {"subtract": 5}
    with pytest.raises(Exception, match="no cost for reset mechanism None"):
        run(_named(neuron))
    neuron.reset_mechanism = "subtract"
    assert run(_named(neuron))["neuron_operations"]["Effective_Neuron_Ops"] == 20

    class Declaring(SNNTorchModel):
        def neuron_layers(self):
            return [NeuronLayer(layer.name, layer.module, membrane_attribute, cost=2.5)
                    for layer in super().neuron_layers()]

    res = run(_named(Custom()), adapter=Declaring)
    assert res["neuron_operations"] == {"Effective_Neuron_Ops": 10, "Dense_Neuron_Ops": 15}
    with pytest.raises(NeuronCostError, match="finite number"):
        neuron_cost(Custom(), "x", declared=float("nan"))
    assert issubclass(Declaring, ModelAdapter)
