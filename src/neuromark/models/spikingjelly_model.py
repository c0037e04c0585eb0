"""Adapter for SpikingJelly (``spikingjelly.activation_based``, 2.x) networks.

SpikingJelly neurons (``neuron.BaseNode``) keep their state ``v`` AFTER the reset, while
snnTorch (and so neurobench's definitions) keeps the potential after charging and before
the reset. The harness counts membrane updates on the latter, so this adapter records each
neuron's charged potential H[t] with SpikingJelly's own charge equation
(``functional.lif_charge`` for ``LIFNode``, ``H = V + X`` for ``IFNode``) before the
neuron's step; other node types are read as their post-reset ``v`` (stated in
:meth:`SpikingJellyModel.neuron_layers`). Neuron costs per update: ``LIFNode`` 4
(snnTorch Leaky's figure: the same multiply, add, compare and reset), ``IFNode`` 3.

Recurrent containers: ``layer.LinearRecurrentContainer`` applies its ``rc`` Linear
(``in + out`` inputs: ``cat(x[t], y[t-1])``) once per step, counted like any Linear whatever
the reset (soft ``v_reset=None`` or hard, ``detach_reset``);
``layer.ElementWiseRecurrentContainer`` joins ``y[t-1]`` to ``x[t]`` by a weightless
element-wise function (an add, say): no synapse, like a residual add, so it adds no
synaptic operation. Whole-sequence ``rnn.SpikingLSTM``/``SpikingGRU``/``SpikingVanillaRNN``
are refused (their ``*Cell`` versions hold plain ``nn.Linear`` layers, counted as such).

Multi-step networks (``step_mode='m'``) are switched to single-step mode
(``functional.set_step_mode(net, 's')``) and stepped over time, which computes the same
outputs for networks whose only state is in their neurons; it is what lets the probes see
every step.
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

#: Ops per update of SpikingJelly node types (NeuronOperations).
COSTS = {"LIFNode": 4.0, "IFNode": 3.0}


def _charged(module: nn.Module) -> Tensor | None:
    return module.__dict__.get("neuromark_h")


class SpikingJellyModel(ModelAdapter):
    """Steps a SpikingJelly network over the time dimension of (B, T, *features) batches;
    returns (B, T, *out).

    Args:
        module: the network (single- or multi-step mode; multi-step is switched to single).
        time_dim: the time dimension of the batch.
        exempt_params: see :class:`~neuromark.models.adapter.ModelAdapter`.
    """

    def __init__(self, module: nn.Module, time_dim: int = 1,
                 exempt_params: Sequence[str] = ()) -> None:
        super().__init__(module, exempt_params)
        self.sj_functional = import_framework("spikingjelly.activation_based.functional",
                                              "spikingjelly")
        self.sj_neuron = import_framework("spikingjelly.activation_based.neuron", "spikingjelly")
        self.time_dim = time_dim
        rnn = import_framework("spikingjelly.activation_based.rnn", "spikingjelly")
        for name, sub in module.named_modules():
            if isinstance(sub, rnn.SpikingRNNBase):
                raise UnsupportedLayerError(
                    f"SpikingJelly module {name!r} ({type(sub).__name__}) runs a whole "
                    f"(T, B, F) sequence in one call: fed one step at a time it takes the batch "
                    f"for time, and it hides its steps from the probes; use "
                    f"{type(sub).__name__}Cell in a module that passes its state from step to "
                    "step")
        modes = {getattr(m, "step_mode", "s") for m in module.modules() if hasattr(m, "step_mode")}
        self.multi_step = "m" in modes
        if self.multi_step:
            self.sj_functional.set_step_mode(module, "s")
        for layer in self.neuron_layers():
            self._record_charge(layer.module)

    def _record_charge(self, node: nn.Module) -> None:
        """Wrap ``node``'s forward to keep its charged potential in ``neuromark_h``."""
        kind = type(node).__name__
        if kind not in COSTS or "forward" in node.__dict__:
            return
        lif_charge = getattr(self.sj_functional, "lif_charge", None)
        original = node.forward

        def forward(x: Tensor, *args: Any, **kwargs: Any) -> Any:
            v = node.v
            if not isinstance(v, Tensor):  # a float after reset_net
                v = torch.full_like(x, float(v))
            if kind == "LIFNode" and lif_charge is not None:
                h = lif_charge(x, v, node.tau, node.decay_input, node.v_reset)
            else:
                h = v + x
            node.__dict__["neuromark_h"] = h
            return original(x, *args, **kwargs)

        node.__dict__["forward"] = forward

    def __call__(self, data: Tensor) -> Tensor:
        steps = [first_tensor(self.module(x_t)) for x_t in self.split_steps(data, self.time_dim)]
        return torch.stack(steps, dim=1)

    def reset_state(self) -> None:
        """``functional.reset_net`` and the recorded charged potentials."""
        self.sj_functional.reset_net(self.module)
        for layer in self.neuron_layers():
            layer.module.__dict__.pop("neuromark_h", None)

    def neuron_layers(self) -> list[NeuronLayer]:
        """SpikingJelly nodes (``neuron.BaseNode``), outermost first: LIFNode and IFNode
        with their charged potential as membrane, other nodes with their ``v``."""
        base = self.sj_neuron.BaseNode
        layers: list[NeuronLayer] = []
        inside: list[str] = []
        for name, module in self.module.named_modules():
            if any(name.startswith(p + ".") for p in inside) or not isinstance(module, base):
                continue
            kind = type(module).__name__
            reader = _charged if kind in COSTS else _post_reset
            layers.append(NeuronLayer(name or kind, module, reader, cost=COSTS.get(kind)))
            inside.append(name)
        return layers

    def state(self) -> dict[str, Tensor]:
        """Each node's ``v`` (post-reset potential)."""
        return {f"{layer.name}.v": v for layer in self.neuron_layers()
                if isinstance(v := getattr(layer.module, "v", None), Tensor)}


def _post_reset(module: nn.Module) -> Tensor | None:
    v = getattr(module, "v", None)
    return v if isinstance(v, Tensor) else None
