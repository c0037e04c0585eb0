"""Forward hooks that record layer activity ONCE per call, shared by all complexity metrics.

Three probes, switched on only when some metric requires them:
- ``"synops"``: per connection layer, effective ops (AC or MAC) and dense ops;
- ``"activations"``: per neuron layer, zero and total output elements;
- ``"membrane"``: per neuron layer with a membrane, elements whose membrane changed.

Counts are kept as tensors during a batch and summed once in :meth:`Instrument.collect`,
so a hook costs a handful of tensor ops and no Python-float conversions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from neuromark.instrument.layer_ops import WeightCache, counter_for
from neuromark.instrument.linear_buffer import LinearCallBuffer
from neuromark.instrument.membrane import MembraneTracker
from neuromark.models.base import NeuronLayer, first_tensor

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
        self._handles: list[Any] = []
        self._weights = WeightCache()
        self._ops: dict[str, list[tuple[Any, Any, bool]]] = defaultdict(list)
        self._nonzeros: dict[str, list[Tensor]] = defaultdict(list)
        self._totals: dict[str, int] = defaultdict(int)
        self._membrane: dict[str, MembraneTracker] = {}
        self._linear_buffers: dict[str, LinearCallBuffer] = {}

    def __enter__(self) -> Instrument:
        self.attach()
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()

    def attach(self) -> None:
        """Register the forward hooks the requested probes need."""
        if "synops" in self.probes:
            for name, module in self.adapter.connection_layers():
                self._handles.append(module.register_forward_hook(self._ops_hook(name, module)))
        if self.probes & {"activations", "membrane"}:
            for layer in self.adapter.neuron_layers():
                self._attach_neuron(layer)

    def detach(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _ops_hook(self, name: str, module: nn.Module):
        if isinstance(module, nn.Linear):
            return self._linear_hook(name, module)
        counter = counter_for(module)
        weights = self._weights
        store = self._ops[name]

        def hook(mod: nn.Module, args: tuple[Any, ...], output: Any) -> None:
            store.extend(counter(mod, args, output, weights))

        return hook

    def _linear_hook(self, name: str, module: nn.Linear):
        """Linear layers are counted in batched chunks (see :class:`LinearCallBuffer`)."""
        buffer = self._linear_buffers[name] = LinearCallBuffer(name, module, self._weights)
        add = buffer.add

        def hook(mod: nn.Module, args: tuple[Any, ...], output: Any) -> None:
            add(args[0])

        return hook

    def _attach_neuron(self, layer: NeuronLayer) -> None:
        name = layer.name
        nonzeros, totals = self._nonzeros[name], self._totals
        want_act = "activations" in self.probes
        membrane = layer.membrane
        tracker = MembraneTracker(name) if "membrane" in self.probes else None

        def pre_hook(mod: nn.Module, args: tuple[Any, ...]) -> None:
            mem = membrane(mod)
            if mem is not None and len(args) > 1 and isinstance(args[1], Tensor):
                mem = args[1]  # snnTorch init_hidden=False: state passed in
            tracker.before(mem)

        def hook(mod: nn.Module, args: tuple[Any, ...], output: Any) -> None:
            if want_act:
                out = first_tensor(output)
                nonzeros.append(torch.count_nonzero(out))
                totals[name] += out.numel()
            if tracker is not None:
                tracker.after(membrane(mod))

        if tracker is not None:
            self._membrane[name] = tracker
            self._handles.append(layer.module.register_forward_pre_hook(pre_hook))
        self._handles.append(layer.module.register_forward_hook(hook))

    def collect(self) -> Activity:
        """Sum what the hooks recorded since the last call, and clear it."""
        activity = Activity()
        for name, parts in self._ops.items():
            activity.ops[name] = _sum_parts(name, parts)
            parts.clear()
        for name, buffer in self._linear_buffers.items():
            acs, macs, dense = buffer.take()
            activity.ops[name] = LayerOps(effective_acs=acs, effective_macs=macs, dense=dense)
        for name, nonzeros in self._nonzeros.items():
            act = activity.neurons.setdefault(name, LayerActivity())
            act.total = self._totals[name]
            act.zeros = act.total - (int(torch.stack(nonzeros).sum()) if nonzeros else 0)
            nonzeros.clear()
            self._totals[name] = 0
        for name, tracker in self._membrane.items():
            act = activity.neurons.setdefault(name, LayerActivity())
            act.membrane_updates = tracker.take()
        return activity
