"""EnergyEstimate: estimated joules per sample from synaptic and neuron operation counts.

Per profile: Effective_MACs E_MAC + Effective_ACs E_AC (synaptic operations' counts) +
Effective_Neuron_Ops E_update (NeuronOperations) for spiking models. The score is a dict
``{profile name: J/sample}``; its unit says "estimate" and :meth:`EnergyEstimate.details`
labels every figure with its profile, version, source and caveats. Never a measurement:
the system track's measured energy stays a separate score.

Operand precision (issue 31.2): the runner hands the model to :meth:`bind_model`, which
reads each weight's stored bits (:func:`~neuromark.metrics.functional.precision.
operand_bits`: quantised dtypes, fake-quant observers, ``weight_bits`` declarations); a
layer's MACs are then priced at its weight's width where the profile lists one
(``mac_j_by_bits``; the next wider width it lists: an upper bound, stated in
:meth:`EnergyEstimate.details`). Float32 weights are priced as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuromark.errors import ConfigError
from neuromark.metrics.base import Step, WorkloadMetric
from neuromark.metrics.complexity import SynapticOperations
from neuromark.metrics.functional.energy import energy_estimate, mac_price
from neuromark.metrics.functional.energy_profiles import EnergyProfile, get_profile
from neuromark.metrics.functional.precision import operand_bits
from neuromark.metrics.neuron_ops import NeuronOperations
from neuromark.results import Score

#: The shipped profiles, estimated together by default.
SHIPPED = ("horowitz45-fp32", "horowitz45-fp16", "horowitz45-int32", "horowitz45-int8")


class EnergyEstimate(WorkloadMetric):
    """Estimated energy per sample for each of ``profiles`` (names, YAML files or
    :class:`EnergyProfile`).

    ``neurons``: ``"auto"`` adds neuron operations when the model has spiking neuron
    layers (every one needs a cost, see NeuronOperations); ``False`` counts synapses only.
    ``coverage``: as for synaptic operations.
    """

    name = "energy_estimate"
    unit = "J/sample (estimate)"
    higher_is_better = False
    requires = SynapticOperations.requires | NeuronOperations.requires
    synops: SynapticOperations
    neuron_ops: NeuronOperations

    def __init__(self, profiles: Sequence[str | Path | EnergyProfile] = SHIPPED,
                 neurons: bool | str = "auto", coverage: str = "error") -> None:
        if neurons not in ("auto", False):
            raise ValueError(f"neurons must be 'auto' or False, got {neurons!r}")
        self.profiles = [get_profile(p) for p in profiles]
        if not self.profiles:
            raise ValueError("energy_estimate needs at least one energy profile")
        names = [p.name for p in self.profiles]
        if len(set(names)) != len(names):
            raise ConfigError(f"energy_estimate: profile names repeat: {names}; list each "
                              f"profile once")
        self.neurons = neurons
        self._coverage = coverage
        super().__init__()
        self.add_state("synops", SynapticOperations(coverage=coverage), merge="nested")
        self.add_state("neuron_ops", NeuronOperations(), merge="nested")
        self.add_state("operand_bits", {}, merge="first")  # {weight name: bits}

    def bind_model(self, adapter: Any) -> None:
        """Read the model's operand precision (called by the runner after :meth:`reset`)."""
        self.operand_bits = operand_bits(adapter)

    def layer_bits(self, layer: str) -> int | None:
        """Bits of ``layer``'s weight (the widest of its ``weight*`` tensors; an intercepted
        weight by its own name); None when unknown."""
        bits = [b for name, b in self.operand_bits.items() if name == layer
                or (name.startswith(layer + ".") and name[len(layer) + 1:].startswith("weight")
                    and "." not in name[len(layer) + 1:])]
        return max(bits) if bits else None

    def repriced(self, profile: EnergyProfile) -> dict[str, dict[str, Any]]:
        """The layers whose MACs ``profile`` prices other than at ``mac_j``: per layer its
        weight's bits, the width priced at, MACs per sample and whether an upper bound."""
        n = max(self.synops.samples, 1)
        out = {}
        for layer, macs in self.synops.layer_macs.items():
            bits = self.layer_bits(layer)
            joules, width = mac_price(profile, bits)
            if width is None or joules == profile.mac_j and width == bits:
                continue
            out[layer] = {"bits": bits, "priced_at_bits": width, "macs": macs / n,
                          "mac_j": joules, "upper_bound": width != bits}
        return out

    def _energy(self, profile: EnergyProfile, c: dict[str, float]) -> float:
        energy = energy_estimate(c["Effective_MACs"], c["Effective_ACs"], profile,
                                 neuron_updates=c["Effective_Neuron_Ops"])
        for layer in self.repriced(profile).values():  # none for float32 weights
            energy += layer["macs"] * (layer["mac_j"] - profile.mac_j)
        return energy

    @property
    def coverage(self) -> str:
        """The coverage mode of the inner synaptic-operations count (``--coverage`` reaches
        it through :meth:`neuromark.context.RunContext.apply_coverage`)."""
        return self._coverage

    @coverage.setter
    def coverage(self, mode: str) -> None:
        self._coverage = mode
        self.synops.coverage = mode

    def update(self, step: Step) -> None:
        self.synops.coverage = self._coverage  # reset() restores the inner metric's default
        self.synops.update(step)
        if self.neurons == "auto":
            self.neuron_ops.update(step)

    def counts(self) -> dict[str, float]:
        """Per sample: the MACs, ACs and neuron ops the estimate multiplies."""
        ops = self.synops.compute().value
        neuron = self.neuron_ops.compute().value["Effective_Neuron_Ops"] \
            if self.neurons == "auto" and self.neuron_ops.costs else 0.0
        return {"Effective_MACs": ops["Effective_MACs"], "Effective_ACs": ops["Effective_ACs"],
                "Effective_Neuron_Ops": neuron}

    def compute(self) -> Score:
        c = self.counts()
        value = {p.name: self._energy(p, c) for p in self.profiles}
        return Score(value, unit=self.unit, higher_is_better=False)

    def details(self) -> dict[str, Any]:
        """The counts used and each profile's label, source and caveats; where a layer's
        weight is stored narrower than the profile, ``operand_precision`` (see
        :meth:`repriced`)."""
        out: dict[str, Any] = {
            "estimate": True, "counts": self.counts(),
            "profiles": {p.name: {"label": p.label(), "source": p.source,
                                  "memory": "not counted (the run counts no memory "
                                  "accesses)", "caveats": list(p.caveats)}
                         for p in self.profiles}}
        for p in self.profiles:
            layers = self.repriced(p)
            if layers:
                out["profiles"][p.name]["operand_precision"] = {
                    "layers": layers, "upper_bound": any(x["upper_bound"] for x in layers.values())}
        return out
