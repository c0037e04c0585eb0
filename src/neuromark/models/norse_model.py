"""Adapter for Norse (``norse.torch``, 1.x) networks: cells with explicit state.

A Norse network here is a module called as ``output, state = net(x_t, state)`` once per time
step (``norse.torch.SequentialState`` of layers and ``*Cell`` neurons, or any module with
that signature); the adapter threads the state through the steps, starting from ``None``
for every batch (so resetting is starting afresh).

Norse cells return their state AFTER the reset, while the harness (as snnTorch and
neurobench) counts membrane updates on the potential after integration and before the
reset. For ``LIFBoxCell`` the adapter recomputes that potential with Norse's own update,
``v + dt tau_mem_inv (I + v_leak - v)`` (``norse.torch.functional.lif_box``); other cells
are read as the ``v`` of the state they return. Costs per update: LIFBoxCell 4 (snnTorch
Leaky's figure), LIFCell 8 (snnTorch Synaptic, zero reset), LICell 4, LIBoxCell 2.

Recurrent cells (``LIFRecurrentCell``, ``LSNNRecurrentCell`` and the other
``SNNRecurrentCell`` subclasses) are neuron layers too; their ``input_weights`` and
``recurrent_weights`` (``F.linear`` on the input and on the last spikes ``z``, once per
step) are counted as synaptic operations by interception, whatever the reset value
(``v_reset``, Izhikevich's ``c``); ``LIFMCRecurrentCell``'s ``g_coupling`` acts on the
membrane voltages (MACs, effective where ``v`` is non-zero). No neuron cost is declared for
them (:class:`~neuromark.metrics.neuron_ops.NeuronOperations` leaves them out).

Multi-step Norse modules (``LIF``, ``LIFBox``, ``LIFRecurrent``, ...) take the whole
sequence in one call and hide the steps from the probes: use their ``*Cell`` versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn

from neuromark.errors import UnsupportedLayerError
from neuromark.models.adapter import ModelAdapter
from neuromark.models.base import NeuronLayer, first_tensor
from neuromark.models.frameworks import import_framework

#: Ops per update of Norse cell types (NeuronOperations).
COSTS = {"LIFBoxCell": 4.0, "LIFCell": 8.0, "LICell": 4.0, "LIBoxCell": 2.0}


def _membrane(module: nn.Module) -> Tensor | None:
    return module.__dict__.get("neuromark_h")


class NorseModel(ModelAdapter):
    """Steps a Norse network over the time dimension of (B, T, *features) batches;
    returns (B, T, *out).

    Args:
        module: called as ``module(x_t, state) -> (output, state)``.
        time_dim: the time dimension of the batch.
        exempt_params: see :class:`~neuromark.models.adapter.ModelAdapter`.
    """

    def __init__(self, module: nn.Module, time_dim: int = 1,
                 exempt_params: Sequence[str] = ()) -> None:
        super().__init__(module, exempt_params)
        snn = import_framework("norse.torch.module.snn", "norse")
        # cells: feed-forward (SNNCell) and recurrent (SNNRecurrentCell: input and recurrent
        # weights of its own, applied once per step, counted by interception)
        self.cell_type = (snn.SNNCell, snn.SNNRecurrentCell)
        self.sequence_type = (snn.SNN, snn.SNNRecurrent)
        self.time_dim = time_dim
        for name, sub in module.named_modules():
            if isinstance(sub, self.sequence_type):
                raise UnsupportedLayerError(
                    f"Norse module {name!r} ({type(sub).__name__}) runs a whole sequence in "
                    f"one call, hiding its steps from the probes; use "
                    f"{type(sub).__name__}Cell instead")
        for layer in self.neuron_layers():
            self._record(layer.module)

    def _record(self, cell: nn.Module) -> None:
        """Wrap ``cell``'s forward to keep its membrane before reset in ``neuromark_h``."""
        if "forward" in cell.__dict__:
            return
        original = cell.forward
        box = type(cell).__name__ == "LIFBoxCell"

        def forward(x: Tensor, state: Any = None, *args: Any, **kwargs: Any) -> Any:
            if box:
                before = state if state is not None else cell.state_fallback(x)
                p, dt = cell.p, cell.dt
                # Norse's lif_box_feed_forward_step, up to the reset
                cell.__dict__["neuromark_h"] = before.v + dt * p.tau_mem_inv * (
                    x + p.v_leak - before.v)
            out = original(x, state, *args, **kwargs)
            if not box:
                v = getattr(out[1], "v", None) if isinstance(out, tuple) else None
                cell.__dict__["neuromark_h"] = v
            return out

        cell.__dict__["forward"] = forward

    def __call__(self, data: Tensor) -> Tensor:
        state: Any = None
        steps = []
        for x_t in self.split_steps(data, self.time_dim):
            out = self.module(x_t, state)
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(f"a Norse network must return (output, state) per step, got "
                                f"{type(out).__name__}")
            output, state = out
            steps.append(first_tensor(output))
        self._state = state
        return torch.stack(steps, dim=1)

    def reset_state(self) -> None:
        """Norse state is passed explicitly: each batch starts from ``None``; the recorded
        membranes are dropped."""
        self._state = None
        for layer in self.neuron_layers():
            layer.module.__dict__.pop("neuromark_h", None)

    def neuron_layers(self) -> list[NeuronLayer]:
        """Norse cells (``SNNCell`` and ``SNNRecurrentCell``), outermost first, with their
        declared costs."""
        layers: list[NeuronLayer] = []
        inside: list[str] = []
        for name, module in self.module.named_modules():
            if any(name.startswith(p + ".") for p in inside) \
                    or not isinstance(module, self.cell_type):
                continue
            kind = type(module).__name__
            layers.append(NeuronLayer(name or kind, module, _membrane, cost=COSTS.get(kind)))
            inside.append(name)
        return layers

    def state(self) -> dict[str, Tensor]:
        """The last batch's state tensors (``v``, ``i``) of each cell, as Norse returned
        them."""
        out: dict[str, Tensor] = {}
        names = [layer.name for layer in self.neuron_layers()]
        states = getattr(self, "_state", None)
        if isinstance(states, (list, tuple)) and not hasattr(states, "_fields"):
            cells = [s for s in states if s is not None]
        else:
            cells = [states] if states is not None else []
        for name, cell_state in zip(names, cells):
            for field in ("v", "i"):
                value = getattr(cell_state, field, None)
                if isinstance(value, Tensor):
                    out[f"{name}.{field}"] = value
        return out
