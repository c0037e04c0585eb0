"""Probes that record layer activity ONCE per call, shared by all complexity metrics.

Three probes, switched on only when some metric requires them:
- ``"synops"``: per connection layer, effective ops (AC or MAC) and dense ops;
- ``"activations"``: per neuron layer, zero and total output elements;
- ``"membrane"``: per neuron layer with a membrane, elements whose membrane changed.

On CPU a probed call costs one fused kernel pass (:mod:`~neuromark.instrument.kernels`)
and Python integers; elsewhere a few torch ops whose results stay tensors until
:meth:`Instrument.collect`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from neuromark.instrument.arrays import LastArray
from neuromark.instrument.conv_counter import ConvCounter
from neuromark.instrument.layer_ops import Part, WeightCache, counter_for
from neuromark.instrument.linear_counter import CellCounter, LinearCounter
from neuromark.instrument.membrane import NeuronCounter
from neuromark.instrument.steps import StepIndex
from neuromark.instrument.wrapping import Forward, ForwardWrapper
from neuromark.models.base import CELL_TYPES, CONV_TYPES, NeuronLayer

PROBES = frozenset({"synops", "activations", "membrane"})


@dataclass
class LayerOps:
    """Operation counts of one connection layer over a batch (all samples summed)."""

    effective_acs: float = 0.0
    effective_macs: float = 0.0
    dense: float = 0.0


@dataclass
class LayerActivity:
    """Neuron-layer counts over a batch: zero outputs, all outputs, membrane updates."""

    zeros: int = 0
    total: int = 0
    membrane_updates: int = 0


def _sum_parts(layer: str, parts: list[tuple[Tensor, float, Tensor, Tensor]]) -> LayerOps:
    """Split recorded parts into ACs (spike inputs) and MACs and sum them (float64)."""
    if not parts:
        return LayerOps()
    effective = torch.stack([p[0] for p in parts]).to(torch.float64)
    defects = torch.stack([p[2].to(torch.float64) for p in parts])
    peaks = torch.stack([p[3].to(torch.float64) for p in parts])
    if not bool(torch.isfinite(defects).all()):
        raise ValueError(f"connection layer {layer!r} received NaN or infinite input")
    spikes = (defects == 0) & (peaks <= 1)
    return LayerOps(effective_acs=float(effective[spikes].sum()),
                    effective_macs=float(effective[~spikes].sum()),
                    dense=float(sum(p[1] for p in parts)))


@dataclass
class Activity:
    """What the probes saw during one batch, keyed by unique dotted layer names."""

    ops: dict[str, LayerOps] = field(default_factory=dict)
    neurons: dict[str, LayerActivity] = field(default_factory=dict)


class Instrument:
    """Attach probes to an adapter's layers; use as a context manager.

    Each probed layer gets one forward wrapper (see :mod:`~neuromark.instrument.wrapping`)
    that records the probes' counts for the call; the adapter announces time steps so that
    Linear layers read them straight from the batch.

    Example:
        >>> with Instrument(adapter, {"synops"}) as probe:  # doctest: +SKIP
        ...     adapter(batch)
        ...     activity = probe.collect()
    """

    def __init__(self, adapter: Any, probes: Iterable[str]) -> None:
        self.adapter = adapter
        self.probes = frozenset(probes)
        unknown = self.probes - PROBES
        if unknown:
            raise ValueError(f"unknown probes {sorted(unknown)}; known: {sorted(PROBES)}")
        self._wrappers: list[ForwardWrapper] = []
        self._weights = WeightCache()
        self._steps = StepIndex()
        self._arrays = LastArray()
        self._ops: dict[str, list[Part]] = defaultdict(list)
        self._matrices: dict[str, LinearCounter | ConvCounter | CellCounter] = {}
        self._neurons: dict[str, NeuronCounter] = {}

    def __enter__(self) -> Instrument:
        self.attach()
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()

    def attach(self) -> None:
        """Wrap the layers the requested probes need."""
        try:
            if "synops" in self.probes:
                for name, module in self.adapter.connection_layers():
                    self._wrap_connection(name, module)
            if self.probes & {"activations", "membrane"}:
                for layer in self.adapter.neuron_layers():
                    self._wrap_neuron(layer)
        except BaseException:
            self.detach()
            raise
        listeners = getattr(self.adapter, "step_listeners", None)
        if listeners is not None and self._matrices:
            listeners.append(self._steps.announce)

    def detach(self) -> None:
        for wrapper in reversed(self._wrappers):
            wrapper.remove()
        self._wrappers.clear()
        listeners = getattr(self.adapter, "step_listeners", None)
        if listeners is not None and self._steps.announce in listeners:
            listeners.remove(self._steps.announce)
        self._steps.clear()

    def _wrap_connection(self, name: str, module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, *CONV_TYPES)):
            counter = LinearCounter(name, module, self._weights, self._steps, self._arrays) \
                if isinstance(module, nn.Linear) else ConvCounter(name, module, self._steps,
                                                                  self._arrays)
            self._matrices[name] = counter
            add = counter.add

            def make(forward: Forward) -> Forward:
                def matrix_forward(*args: Any, **kwargs: Any) -> Any:
                    output = forward(*args, **kwargs)
                    add(args[0] if args else kwargs["input"])
                    return output
                return matrix_forward
        elif isinstance(module, CELL_TYPES):
            cell = self._matrices[name] = CellCounter(name, module, self._weights, self._steps,
                                                      self._arrays)
            add_call = cell.add_call

            def make(forward: Forward) -> Forward:
                def cell_forward(*args: Any, **kwargs: Any) -> Any:
                    output = forward(*args, **kwargs)
                    add_call(args, kwargs)
                    return output
                return cell_forward
        else:
            count_call = counter_for(module)
            weights, store = self._weights, self._ops[name]

            def make(forward: Forward) -> Forward:
                def counted_forward(*args: Any, **kwargs: Any) -> Any:
                    output = forward(*args, **kwargs)
                    store.extend(count_call(module, args, output, weights))
                    return output
                return counted_forward
        self._wrappers.append(ForwardWrapper(module, make))

    def _wrap_neuron(self, layer: NeuronLayer) -> None:
        counter = self._neurons[layer.name] = NeuronCounter(
            layer.name, layer.membrane if "membrane" in self.probes else None,
            "activations" in self.probes, self._arrays)
        module = layer.module
        self._wrappers.append(ForwardWrapper(module, lambda forward: counter.wrap(module, forward)))

    def collect(self) -> Activity:
        """Sum what the probes recorded since the last call, and clear it."""
        activity = Activity()
        self._arrays.clear()
        for name, parts in self._ops.items():
            activity.ops[name] = _sum_parts(name, parts)
            parts.clear()
        for name, counter in self._matrices.items():
            acs, macs, dense = counter.take()
            activity.ops[name] = LayerOps(effective_acs=acs, effective_macs=macs, dense=dense)
        for name, counter in self._neurons.items():
            nonzeros, total, updates = counter.take()
            activity.neurons[name] = LayerActivity(zeros=total - nonzeros, total=total,
                                                   membrane_updates=updates)
        return activity
