"""The ModelAdapter base class: the harness talks to every framework through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch import Tensor, nn

from neuromark.models.base import (
    NeuronLayer,
    find_connection_layers,
    find_neuron_layers,
    module_state,
)


class ModelAdapter:
    """Wraps a network for the harness. Subclasses change how a batch is fed in.

    Args:
        module: the network (an ``nn.Module``).
        exempt_params: dotted names of parameters (or of modules, for all their
            parameters) that apply no synaptic operations in this task, such as a head
            the task replaces; they are exempt from the coverage check.
    """

    def __init__(self, module: nn.Module, exempt_params: Sequence[str] = ()) -> None:
        if not isinstance(module, nn.Module):
            raise TypeError(f"{type(self).__name__} needs an nn.Module, got {type(module).__name__}")
        if isinstance(exempt_params, str):
            raise TypeError("exempt_params must be a list of dotted names, not a string")
        self.module = module
        self.exempt_params = tuple(exempt_params)
        self.last_batch_size: int | None = None
        #: Called as ``listener(data, steps, time_dim)`` by adapters that feed a batch one
        #: time step at a time (``steps = data.unbind(time_dim)``), before the first step;
        #: probes use it to read step inputs straight from the batch.
        self.step_listeners: list[Callable[[Tensor, Sequence[Tensor], int], None]] = []

    def __call__(self, data: Tensor) -> Any:
        """Run the network on one batch; returns its output."""
        self.last_batch_size = int(data.shape[0])
        return self.module(data)

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

    def state(self) -> dict[str, Tensor]:
        """Neuron state tensors (membrane potentials, synaptic currents), by dotted name."""
        return module_state(self.module)

    def train(self, mode: bool = False) -> ModelAdapter:
        self.module.train(mode)
        return self
