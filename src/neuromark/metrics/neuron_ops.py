"""NeuronOperations: the arithmetic of spiking neuron state updates, per sample.

NeuroBench 2.3.0's definition: for each spiking neuron layer, effective neuron ops are the
layer's membrane updates (neurons whose membrane changed in a step, all neurons in the
first step; the same count as ``membrane_updates``) times the layer's cost per update, and
dense neuron ops are all neurons x steps times that cost. Costs come from
:mod:`neuromark.metrics.functional.neuron_ops` (snnTorch's table, or declared).

Differences from NeuroBench: stateless activation modules (ReLU, ...) contribute none
(NeuroBench fails on them); dense ops count the layer's output elements x steps, which
equal its membrane elements for every neuron whose spikes have the membrane's shape.
snnTorch's whole-sequence neurons (StateLeaky, LinearLeaky, LeakyParallel,
AssociativeLeaky) update every neuron at every step of the sequence they take in one call,
with no membrane seen step by step: their effective ops equal their dense ops.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from neuromark.metrics.base import Step, WorkloadMetric
from neuromark.metrics.functional.neuron_ops import neuron_cost, neuron_operations
from neuromark.metrics.functional.snntorch_costs import WHOLE_SEQUENCE, is_snntorch_neuron
from neuromark.results import Score


def _is_spiking(module: Any) -> bool:
    if getattr(module, "neuromark_neuron", False):
        return True
    return any(cls.__name__ == "SpikingNeuron" for cls in type(module).__mro__)


def _whole_sequence(module: Any) -> bool:
    return is_snntorch_neuron(module) and type(module).__name__ in WHOLE_SEQUENCE


class NeuronOperations(WorkloadMetric):
    """Per sample: ``Effective_Neuron_Ops`` and ``Dense_Neuron_Ops`` (see the module doc);
    :meth:`details` gives both by layer with each layer's cost."""

    name = "neuron_operations"
    unit = "ops/sample"
    higher_is_better = False
    requires = frozenset({"membrane", "activations"})

    effective: dict[str, float]
    dense: dict[str, float]
    costs: dict[str, float]
    samples: int

    def __init__(self) -> None:
        super().__init__()
        self.add_state("effective", defaultdict(float), merge="sum")  # per layer
        self.add_state("dense", defaultdict(float), merge="sum")
        self.add_state("costs", {}, merge="union")  # per layer: ops per update
        self.add_state("samples", 0, merge="sum")

    def update(self, step: Step) -> None:
        activity = step.activity
        layers = getattr(activity, "neuron_layers", {}) if activity is not None else {}
        for name, counts in (activity.neurons.items() if activity is not None else ()):
            layer = layers.get(name)
            if layer is None or not (_is_spiking(layer.module) or layer.cost is not None):
                continue  # stateless activation modules: no neuron state update
            cost = self.costs.get(name)
            if cost is None:
                cost = self.costs[name] = neuron_cost(layer.module, name, layer.cost)
            updates = counts.total if _whole_sequence(layer.module) else counts.membrane_updates
            effective, dense = neuron_operations(updates, counts.total, cost)
            self.effective[name] += effective
            self.dense[name] += dense
        self.samples += step.num_samples

    def compute(self) -> Score:
        if self.samples == 0:
            raise ValueError("no samples seen")
        if not self.costs:
            raise ValueError("the model has no spiking neuron layers whose neuron operations "
                             "could be counted")
        n = self.samples
        return Score({"Effective_Neuron_Ops": sum(self.effective.values()) / n,
                      "Dense_Neuron_Ops": sum(self.dense.values()) / n},
                     unit=self.unit, higher_is_better=False)

    def details(self) -> dict[str, Any]:
        """Per layer: cost per update, effective and dense ops per sample."""
        n = max(self.samples, 1)
        return {"by_layer": {name: {"cost": cost, "effective": self.effective[name] / n,
                                    "dense": self.dense[name] / n}
                             for name, cost in self.costs.items()}}
