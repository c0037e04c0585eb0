"""The ModelAdapter base class: the harness talks to every framework through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch import Tensor, nn

from neuromark.models.base import (
    NeuronLayer,
    find_connection_layers,
    find_neuron_layers,
    find_state_updates,
    module_state,
)


def find_tensor(data: Any) -> Tensor | None:
    """The first tensor of ``data``, depth-first through tuples, lists and dict values."""
    if isinstance(data, Tensor):
        return data
    items = data.values() if isinstance(data, dict) else data \
        if isinstance(data, (tuple, list)) else ()
    for item in items:
        found = find_tensor(item)
        if found is not None:
            return found
    return None


class ModelAdapter:
    """Wraps a network for the harness. Subclasses change how a batch is fed in.

    Args:
        module: the network (an ``nn.Module``).
        exempt_params: dotted names of parameters (or of modules, for all their
            parameters) that apply no synaptic operations in this task, such as a head
            the task replaces; they are exempt from the coverage check.
        weight_bits: stored bit width per parameter or buffer, e.g. ``{"fc1.weight": 2}``
            for weights trained to 2 bits but held in float32 (the footprint counts them
            packed; :mod:`neuromark.metrics.functional.precision`).
    """

    def __init__(self, module: nn.Module, exempt_params: Sequence[str] = (),
                 batch_dim: int | None = 0, *, weight_bits: dict[str, int] | None = None) -> None:
        if not isinstance(module, nn.Module):
            raise TypeError(f"{type(self).__name__} needs an nn.Module, got {type(module).__name__}")
        if isinstance(exempt_params, str):
            raise TypeError("exempt_params must be a list of dotted names, not a string")
        self.module = module
        self.exempt_params = tuple(exempt_params)
        #: declared stored precision per tensor name (see ``weight_bits`` above)
        self.weight_bits = dict(weight_bits or {})
        #: the batch dimension of inputs and neuron state; None: inputs are single samples
        self.batch_dim = batch_dim
        #: samples in the last call (1 for an unbatched input), None before any call
        self.last_batch_size: int | None = None
        #: whether the last call's input (and so the neuron state) had a batch dimension
        self.last_batched: bool | None = None
        #: Called as ``listener(data, steps, time_dim)`` by adapters that feed a batch one
        #: time step at a time (``steps = data.unbind(time_dim)``), before the first step;
        #: probes use it to read step inputs straight from the batch.
        self.step_listeners: list[Callable[[Tensor, Sequence[Tensor], int], None]] = []

    def __call__(self, data: Any) -> Any:
        """Run the network on one batch (a tensor, or any structure of tensors such as
        ``[x, (h, c)]``, passed through as it is); returns its output."""
        self.record_batch(data)
        return self.module(data)

    def split_steps(self, data: Tensor, time_dim: int) -> tuple[Tensor, ...]:
        """``data.unbind(time_dim)`` for an adapter that feeds a batch (batch dimension 0) one
        time step at a time: records the batch and tells the step listeners first."""
        self.last_batch_size, self.last_batched = int(data.shape[0]), True
        steps = data.unbind(time_dim)
        for listener in self.step_listeners:
            listener(data, steps, time_dim)
        return steps

    def record_batch(self, data: Any) -> None:
        """Record the batch size of ``data``: the size along :attr:`batch_dim` of its first
        tensor (depth-first through tuples, lists and dicts). A tensor of one dimension,
        or ``batch_dim=None``, is one unbatched sample."""
        first = find_tensor(data)
        if first is None or self.batch_dim is None or first.dim() < 2:
            self.last_batch_size, self.last_batched = 1, False
        else:
            self.last_batch_size, self.last_batched = int(first.shape[self.batch_dim]), True

    def reset_state(self) -> None:
        """Reset all neuron state (called by the runner before every batch).

        Calls ``reset_state()`` or, failing that, ``reset_mem()`` (snnTorch) on every
        module that has one, the network itself included. snnTorch neurons keep ``mem``
        even with ``init_hidden=False``, so every neuron is reset, not only hidden ones.
        """
        for module in self.module.modules():
            for method in ("reset_state", "reset_mem"):
                reset = getattr(module, method, None)
                if callable(reset):
                    reset()
                    break

    def connection_layers(self, strict: bool = True) -> list[tuple[str, nn.Module]]:
        """Linear, Conv and recurrent layers (and cells) with unique dotted names; with
        ``strict``, a module with other weights raises."""
        return find_connection_layers(self.module, strict)

    def neuron_layers(self) -> list[NeuronLayer]:
        """Spiking neurons and activation modules with unique dotted names."""
        return find_neuron_layers(self.module)

    def state_updates(self) -> list[tuple[str, nn.Module, str]]:
        """``(name, neuron, method)``: one state update of a neuron that calls its own
        connection layers (:func:`~neuromark.models.base.find_state_updates`); the probes
        count each of those connections once per update."""
        return find_state_updates(self.module)

    def state(self) -> dict[str, Tensor]:
        """Neuron state tensors (membrane potentials, synaptic currents), by dotted name."""
        return module_state(self.module)

    def train(self, mode: bool = False) -> ModelAdapter:
        self.module.train(mode)
        return self
