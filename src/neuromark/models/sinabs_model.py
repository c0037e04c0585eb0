"""Adapter for Sinabs (``sinabs.layers``, 3.x) networks.

Sinabs layers take a whole (B, T, *features) sequence per call and keep their state
(``v_mem``, ``i_syn``) in buffers between calls. The adapter feeds one step at a time, as
(B, 1, *features), so the probes see every step; ``reset_states()`` starts each batch.

Recurrent layers (``LIFRecurrent``, ``IAFRecurrent``: ``rec_connect``, any module, applied
to each step's spikes) add ``rec_connect(spikes[t])`` to the input of step t + 1 within one
call, starting from zeros at each call: fed one step per call they would never see it. The
adapter keeps each step's ``rec_connect`` output and adds it to the next step's input, which
gives Sinabs' own whole-sequence output. ``rec_connect`` is counted like any connection layer
(once per step, on that step's spikes), whatever the reset function (``MembraneSubtract``,
``MembraneReset``). Layers the adapter does not step are refused by name: ``ALIF`` and
``ALIFRecurrent`` (no membrane record, no reset) and the ``*Squeeze`` layers (time folded
into the batch).

Sinabs keeps ``v_mem`` AFTER the reset; the harness (as snnTorch and neurobench) counts
membrane updates on the potential after integration and before the reset, which the adapter
recomputes with Sinabs' own step (``layers.functional.lif.lif_forward_single`` with no
spike function) before each step. Costs per update (NeuronOperations): ``LIF``/``IAF``
4 (snnTorch Leaky's figure), 6 with a synaptic current (``tau_syn``). Sinabs' neuron
parameters (``tau_mem``, ``spike_threshold``) are marked as neuron parameters, not
synapses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn

from neuromark.errors import UnsupportedLayerError
from neuromark.models.adapter import ModelAdapter
from neuromark.models.base import NeuronLayer
from neuromark.models.frameworks import import_framework, run_step_by_step


def _membrane(module: nn.Module) -> Tensor | None:
    return module.__dict__.get("neuromark_h")


class SinabsModel(ModelAdapter):
    """Steps a Sinabs network over the time dimension of (B, T, *features) batches (time
    must be dimension 1, Sinabs' layout); returns (B, T, *out).

    Args:
        module: a network of torch layers and Sinabs spiking layers (``LIF``, ``IAF``).
        exempt_params: see :class:`~neuromark.models.adapter.ModelAdapter`.
    """

    time_dim = 1

    def __init__(self, module: nn.Module, exempt_params: Sequence[str] = ()) -> None:
        super().__init__(module, exempt_params)
        layers = import_framework("sinabs.layers", "sinabs")
        self.lif_type = layers.LIF
        for name, sub in module.named_modules():
            squeeze = isinstance(sub, layers.SqueezeMixin)
            if squeeze or (isinstance(sub, layers.StatefulLayer)
                           and not isinstance(sub, layers.LIF)):
                why = "takes time folded into the batch (B*T, ...)" if squeeze else \
                    "is not a LIF layer (LIF, IAF, ExpLeak and their Recurrent versions)"
                raise UnsupportedLayerError(
                    f"Sinabs layer {name!r} ({type(sub).__name__}) {why}: SinabsModel cannot "
                    "step it one time step at a time, reset it or read its membrane")
        self.step = import_framework("sinabs.layers.functional.lif", "sinabs").lif_forward_single
        for layer in self.neuron_layers():
            layer.module.neuromark_neuron = True  # its parameters are neuron parameters
            self._record(layer.module)

    def _record(self, node: nn.Module) -> None:
        """Wrap ``node``'s forward to keep its membrane before reset in ``neuromark_h``; a
        recurrent layer (``rec_connect``) also gets the recurrent input its last step left
        (``neuromark_rec``, see the module doc)."""
        if "forward" in node.__dict__:
            return
        original, step = node.forward, self.step
        rec_connect = getattr(node, "rec_connect", None)

        def forward(x: Tensor, *args: Any, **kwargs: Any) -> Any:
            carried = node.__dict__.get("neuromark_rec")
            if carried is not None and carried.shape == x[:, 0].shape:
                x = x + carried.unsqueeze(1)  # Sinabs' rec_out of the last step
            x_t = x[:, 0]
            ready = node.is_state_initialised() and node.v_mem.shape == x_t.shape
            state = {"v_mem": node.v_mem if ready else torch.zeros_like(x_t)}
            alpha_syn = node.alpha_syn_calculated
            if alpha_syn is not None:
                state["i_syn"] = node.i_syn if ready else torch.zeros_like(x_t)
            charged, _ = step(x_t, node.alpha_mem_calculated, alpha_syn, state,
                              node.spike_threshold, None, None, None, None, node.norm_input)
            node.__dict__["neuromark_h"] = charged
            if not isinstance(rec_connect, nn.Module):
                return original(x, *args, **kwargs)
            outputs: list[Tensor] = []
            hook = rec_connect.register_forward_hook(lambda m, i, out: outputs.append(out))
            try:
                spikes = original(x, *args, **kwargs)
            finally:
                hook.remove()
            if outputs:  # rec_connect(spikes of this step): the next step's recurrent input
                node.__dict__["neuromark_rec"] = outputs[-1].reshape(x_t.shape)
            return spikes

        node.__dict__["forward"] = forward

    def __call__(self, data: Tensor) -> Tensor:
        return run_step_by_step(self, data)

    def reset_state(self) -> None:
        """``reset_states()`` of every Sinabs layer; the recorded membranes are dropped."""
        for layer in self.neuron_layers():
            buffers = layer.module._buffers
            for name, value in buffers.items():  # made under the runner's inference mode
                if isinstance(value, Tensor) and value.is_inference() \
                        and not torch.is_inference_mode_enabled():
                    buffers[name] = torch.zeros_like(value)
            layer.module.reset_states()
            layer.module.__dict__.pop("neuromark_h", None)
            layer.module.__dict__.pop("neuromark_rec", None)

    def neuron_layers(self) -> list[NeuronLayer]:
        """Sinabs spiking layers (``LIF`` and subclasses such as ``IAF``), outermost first."""
        layers: list[NeuronLayer] = []
        for name, module in self.module.named_modules():
            if isinstance(module, self.lif_type):
                cost = 6.0 if module.alpha_syn_calculated is not None else 4.0
                layers.append(NeuronLayer(name or type(module).__name__, module, _membrane,
                                          cost=cost))
        return layers

    def state(self) -> dict[str, Tensor]:
        """Each layer's ``v_mem`` (and ``i_syn``) after the reset, as Sinabs keeps them."""
        out = {}
        for layer in self.neuron_layers():
            for buffer in ("v_mem", "i_syn"):
                value = layer.module._buffers.get(buffer)
                if isinstance(value, Tensor) and value.numel():
                    out[f"{layer.name}.{buffer}"] = value
        return out
