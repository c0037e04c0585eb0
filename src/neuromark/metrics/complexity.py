"""Workload complexity metrics: activation sparsity, synaptic operations, membrane updates.

All three read the activity recorded once per step by :mod:`neuromark.instrument`.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any, NamedTuple

from neuromark.metrics.base import Step, WorkloadMetric
from neuromark.metrics.functional.coverage import coverage_message
from neuromark.metrics.functional.snntorch_costs import WHOLE_SEQUENCE
from neuromark.metrics.functional.sparsity import zero_fraction
from neuromark.results import Score


class ActivationSparsity(WorkloadMetric):
    """Zero activations / all activations over all neuron layers, timesteps and samples.

    Also gives ``activation_sparsity_by_layer``: the same figure per layer.
    """

    name = "activation_sparsity"
    higher_is_better = True
    requires = frozenset({"activations"})
    zeros: dict[str, int]
    totals: dict[str, int]

    def __init__(self) -> None:
        super().__init__()
        self.add_state("zeros", defaultdict(int), merge="sum")  # per layer
        self.add_state("totals", defaultdict(int), merge="sum")

    def update(self, step: Step) -> None:
        for layer, act in step.activity.neurons.items():
            self.zeros[layer] += act.zeros
            self.totals[layer] += act.total

    def compute(self) -> dict[str, Score]:
        if not self.totals:
            raise ValueError("the model has no neuron layers (spiking neurons or activation "
                             "modules) whose activations could be counted")
        overall = zero_fraction(sum(self.zeros.values()), sum(self.totals.values()))
        by_layer = {k: zero_fraction(self.zeros[k], t) for k, t in self.totals.items() if t}
        return {self.name: Score(overall, higher_is_better=self.higher_is_better),
                f"{self.name}_by_layer": Score(by_layer, higher_is_better=self.higher_is_better)}


#: How effective ops are split into ACs and MACs (see :class:`SynapticOperations`).
MAC_RULES = ("per_sample", "per_call")


class CoverageView(NamedTuple):
    """What synaptic operations keep of a run's coverage plan (picklable: no modules):
    parameter infos by dotted name and the exempt names with their reasons."""

    params: dict[str, Any]
    exempt: dict[str, str]


class SynapticOperations(WorkloadMetric):
    """Per model execution (per sample): Effective_MACs, Effective_ACs and Dense.

    Effective ops need a non-zero input and a non-zero weight; they are ACs when the layer
    input holds only -1, 0, 1, else MACs. Dense counts every input-weight multiplication.

    ``mac_rule`` says whose input decides: ``"per_sample"`` (the default) classifies each
    sample's ops in each layer call by that sample's own input (the input read batch-first:
    sample ``i`` is ``x[i]``), so the figures do not depend on the evaluation batch size
    (they equal neurobench's at batch 1); ``"per_call"`` is neurobench 2.3.0's rule: one
    non-binary value anywhere in the batch makes every sample's ops in that call MACs.
    Biases are not counted. Activation x activation products (attention scores, ``A @ V``)
    are not synaptic: they are reported in :meth:`details` as ``activation_products``.

    Recurrent cells: by default each matrix's ops are ACs or MACs by its own input (x for
    W_ih, h for W_hh) and gate products are not synaptic. neurobench 2.3.0's definition:
    ``recurrent_gates=True`` adds the gate products (LSTM f*c, i*g, o*tanh c; GRU
    r*(W_hn h + b), (1 - z)*n, z*h: 3 x hidden per sample and step) as MACs and to Dense,
    ``cell_mac_rule="input"`` classifies a cell's ops from x alone (per sample or per call,
    as ``mac_rule`` says).

    Restricted weights (issue 31.2): a layer whose weights all lie in {-1, 0, 1} multiplies
    by nothing but a sign, so its effective MACs count as ACs (``ternary_as_ac``, default
    True; False: neurobench 2.3.0, which looks at the input only); ``shift_as_ac=True``
    does the same for weights that are all 0 or +-2^k (a shift and an add; default False).
    :meth:`details` names the layers so counted. Gate products stay MACs.

    Coverage: after the run every parameter must have been consumed by a counted operation
    or be exempt (see :mod:`neuromark.instrument.coverage`); ``coverage="error"`` (the
    default) fails naming each uncovered parameter, ``"warn"`` reports them in
    :meth:`details` and warns.
    """

    name = "synaptic_operations"
    unit = "ops/sample"
    higher_is_better = False
    requires = frozenset({"synops"})

    def __init__(self, coverage: str = "error", recurrent_gates: bool = False,
                 cell_mac_rule: str = "matrix", mac_rule: str = "per_sample",
                 ternary_as_ac: bool = True, shift_as_ac: bool = False) -> None:
        if coverage not in ("error", "warn"):
            raise ValueError(f"coverage must be 'error' or 'warn', got {coverage!r}")
        if cell_mac_rule not in ("matrix", "input"):
            raise ValueError(f"cell_mac_rule must be 'matrix' or 'input', got {cell_mac_rule!r}")
        if mac_rule not in MAC_RULES:
            raise ValueError(f"mac_rule must be one of {list(MAC_RULES)}, got {mac_rule!r}")
        self.mac_rule = mac_rule
        self.coverage = coverage
        self.recurrent_gates = recurrent_gates
        self.cell_mac_rule = cell_mac_rule
        self.as_ac = {"ternary"} if ternary_as_ac else set()
        if shift_as_ac:
            self.as_ac |= {"ternary", "power_of_two"}  # a ternary weight is 0 or +-2^0
        self.ternary_as_ac, self.shift_as_ac = bool(ternary_as_ac), bool(shift_as_ac)
        super().__init__()
        for name in ("macs", "acs", "dense", "activation_products"):
            self.add_state(name, 0.0, merge="sum")
        self.add_state("samples", 0, merge="sum")
        self.add_state("consumed", set(), merge="union")  # parameter names used by counted ops
        self.add_state("plan", None, merge="first")  # CoverageView: the same in every unit
        self.add_state("uses", {}, merge="first")
        # per layer: MACs and ACs (energy prices a layer's MACs at its weight's bits) and
        # the layers whose MACs were counted as ACs, with their weights' kind
        self.add_state("layer_macs", {}, merge="sum")
        self.add_state("layer_acs", {}, merge="sum")
        self.add_state("as_ac_layers", {}, merge="union")

    def update(self, step: Step) -> None:
        activity = step.activity
        per_call = self.mac_rule == "per_call"
        for layer, ops in activity.ops.items():
            rule = getattr(ops, "input_call_rule" if per_call else "input_rule", None)
            if rule is None or self.cell_mac_rule != "input":
                rule = ops.call_rule if per_call else (ops.effective_acs, ops.effective_macs)
            acs, macs = rule
            kind = getattr(ops, "weight_values", None)
            if kind in self.as_ac and macs:
                acs, macs = acs + macs, 0.0
                self.as_ac_layers[layer] = kind
            if self.recurrent_gates and getattr(ops, "gates", 0.0):
                macs += ops.gates  # analog gate values: multiply-accumulates
                self.dense += ops.gates
            self.acs += acs
            self.macs += macs
            self.dense += ops.dense
            self.layer_acs[layer] = self.layer_acs.get(layer, 0.0) + acs
            self.layer_macs[layer] = self.layer_macs.get(layer, 0.0) + macs
        self.samples += step.num_samples
        self.consumed |= getattr(activity, "consumed", set())
        self.activation_products += getattr(activity, "activation_products", 0.0)
        plan = getattr(activity, "coverage", None)
        if plan is not None and (self.plan is None or self.plan.params is not plan.params):
            self.plan = CoverageView(plan.params, plan.exempt)
        self.uses = getattr(activity, "uses", None) or self.uses

    def compute(self) -> Score:
        if self.samples == 0:
            raise ValueError("no samples seen")
        uncovered = self._uncovered()
        if uncovered and self.coverage == "error":
            raise ValueError(coverage_message(uncovered, self.uses))
        if uncovered:
            warnings.warn(coverage_message(uncovered, self.uses), stacklevel=2)
        n = self.samples
        return Score({"Effective_MACs": self.macs / n, "Effective_ACs": self.acs / n,
                      "Dense": self.dense / n}, unit=self.unit, higher_is_better=False)

    def _uncovered(self) -> list[Any]:
        if self.plan is None:
            return []
        return [info for name, info in self.plan.params.items()
                if name not in self.consumed and name not in self.plan.exempt]

    def details(self) -> dict[str, Any]:
        """Coverage (``counted`` and ``total`` parameter tensors and elements, the exempt
        and uncovered names), ``activation_products`` per sample and the ``mac_rule``."""
        out: dict[str, Any] = {"activation_products": self.activation_products
                               / max(self.samples, 1), "mac_rule": self.mac_rule,
                               "restricted_weights": {
                                   "ternary_as_ac": self.ternary_as_ac,
                                   "shift_as_ac": self.shift_as_ac,
                                   "layers_counted_as_ac": dict(self.as_ac_layers)}}
        plan = self.plan
        if plan is not None:
            counted = [i for n, i in plan.params.items() if n in self.consumed]
            out["coverage"] = {
                "mode": self.coverage,
                "counted": {"tensors": len(counted), "elements": sum(i.numel for i in counted)},
                "total": {"tensors": len(plan.params),
                          "elements": sum(i.numel for i in plan.params.values())},
                "exempt": dict(plan.exempt),
                "uncovered": [i.name for i in self._uncovered()],
            }
        return out


class MembraneUpdates(WorkloadMetric):
    """Per sample: neuron state updates, i.e. over all timesteps the number of neurons whose
    membrane potential changed in that step, every neuron in a batch's first step (as
    neurobench 2.3.0). Layers without a membrane (ReLU and other activations) contribute
    none; snnTorch's whole-sequence neurons (StateLeaky, ...), whose per-step membrane is
    never observable, are an error rather than a silent 0."""

    name = "membrane_updates"
    unit = "updates/sample"
    higher_is_better = False
    requires = frozenset({"membrane"})

    def __init__(self) -> None:
        super().__init__()
        self.add_state("updates", 0, merge="sum")
        self.add_state("samples", 0, merge="sum")

    def update(self, step: Step) -> None:
        for name, layer in getattr(step.activity, "neuron_layers", {}).items():
            if type(layer.module).__name__ in WHOLE_SEQUENCE:
                raise ValueError(f"layer {name!r} ({type(layer.module).__name__}) processes the "
                                 "whole sequence in one call, so its membrane is never seen "
                                 "step by step and membrane updates cannot be counted for it "
                                 "(not 0); leave membrane_updates out of this model's metrics")
        self.updates += sum(a.membrane_updates for a in step.activity.neurons.values())
        self.samples += step.num_samples

    def compute(self) -> Score:
        if self.samples == 0:
            raise ValueError("no samples seen")
        return Score(self.updates / self.samples, unit=self.unit, higher_is_better=False)
