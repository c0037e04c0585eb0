"""Adapter for Rockpool (``rockpool.nn.modules``, 3.x) networks on its torch backend.

Rockpool's torch neurons (``LIFNeuronTorch``, ``LIFTorch`` and other ``LIFBaseTorch``
subclasses) take a whole (B, T, N) sequence per call and keep their state UNBATCHED between
calls: after a call they store the state of the batch's first sample only
(``self.vmem = vmem[0]``) and replicate it over the next batch, and assigning a batched
state through the module is refused (``must be of shape (N,)``). So the adapter feeds one
step at a time, as (B, 1, F), and holds each neuron's batched state itself: before the
step it puts that state in the module's buffers (Rockpool's ``_auto_batch`` multiplies
``ones((B, N)) * state``, which keeps a (B, N) state per sample), and after the step it
reads the new state of every sample from the step's record (``_record_dict``; recording is
switched on for the step).

Rockpool keeps ``vmem`` AFTER its subtractive reset; the harness (as snnTorch and
neurobench) counts membrane updates on the potential before the reset, which the adapter
recovers as ``vmem + spikes * threshold`` (Rockpool's own reset undone; equal to the
charged potential up to one rounding of the add where a neuron spiked). Costs per update
(NeuronOperations): ``LIFNeuronTorch`` 4 (snnTorch Leaky, subtract reset), ``LIFTorch`` 6
(snnTorch Synaptic, subtract reset: a synaptic current). ``LinearTorch`` keeps its weight
as (in, out) and calls ``F.linear(x, weight.T)``: the probes count it by interception, and
so the recurrent weights ``w_rec`` of a ``LIFTorch(has_rec=True)`` (``F.linear(spikes,
w_rec.T)`` once per step), declared synaptic (``neuromark_synaptic_params``) though they
belong to a neuron. Rockpool's LIF neurons have one reset, subtractive; with
``max_spikes_per_dt`` above 1 a neuron emits spike counts, so the operations its spikes
drive (``w_rec``, the next layer) are MACs, not ACs. Neurons with state the adapter does
not hold (``aLIFTorch``'s ``iahp``) are refused by name.
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

#: Ops per update of Rockpool neuron types (NeuronOperations): without and with a synaptic
#: current.
COSTS = {"LIFNeuronTorch": 4.0, "LIFBaseTorch": 6.0}


def _membrane(module: nn.Module) -> Tensor | None:
    return module.__dict__.get("neuromark_h")


#: The neuron states the adapter holds per sample between steps.
HELD_STATES = ("vmem", "isyn", "spikes")


def _check_held_state(name: str, node: nn.Module) -> None:
    """Refuse a neuron with state the adapter does not hold per sample (``aLIFTorch``'s
    after-hyperpolarisation current ``iahp``: Rockpool would carry the first sample's value
    into every sample of the next step, and its element-wise ``w_ahp`` feedback would be
    counted nowhere)."""
    states = node.state() if callable(getattr(node, "state", None)) else {}
    unheld = sorted(set(states) - set(HELD_STATES))
    if unheld:
        raise UnsupportedLayerError(
            f"Rockpool neuron {name!r} ({type(node).__name__}) keeps state {unheld} that "
            f"RockpoolModel does not hold per sample (it holds {', '.join(HELD_STATES)}): "
            "not supported; use LIFTorch (has_rec=True for recurrent weights) or "
            "LIFNeuronTorch")


class RockpoolModel(ModelAdapter):
    """Steps a Rockpool torch network over the time dimension of (B, T, *features) batches
    (time must be dimension 1, Rockpool's layout); returns (B, T, *out).

    Args:
        module: a Rockpool ``TorchModule`` network (``Sequential`` of ``LinearTorch``,
            ``LIFNeuronTorch``, ``LIFTorch``, ...). Rockpool's own API returns dicts from
            ``parameters()`` and ``modules()`` and ``(output, state, record)`` from a call;
            the adapter switches the network to the torch API in place
            (``module.to_torch()``), as the harness reads it as a torch module.
        exempt_params: see :class:`~neuromark.models.adapter.ModelAdapter`.
    """

    time_dim = 1

    def __init__(self, module: nn.Module, exempt_params: Sequence[str] = ()) -> None:
        if callable(getattr(module, "to_torch", None)) and not getattr(module, "_has_torch_api", True):
            module.to_torch()  # in place: parameters()/modules()/calls as torch's, not dicts
        super().__init__(module, exempt_params)
        neuron = import_framework("rockpool.nn.modules.torch.lif_neuron_torch", "rockpool")
        lif = import_framework("rockpool.nn.modules.torch.lif_torch", "rockpool")
        self.neuron_types = {"LIFNeuronTorch": neuron.LIFNeuronTorch,
                             "LIFBaseTorch": lif.LIFBaseTorch}
        self._held: dict[str, dict[str, Tensor]] = {}
        for layer in self.neuron_layers():
            _check_held_state(layer.name, layer.module)
            layer.module.neuromark_neuron = True  # its parameters are neuron parameters,
            # but for the recurrent weights (has_rec=True: F.linear(spikes, w_rec.T) per step)
            layer.module.neuromark_synaptic_params = ("w_rec",)
            self._record(layer.name, layer.module)

    def _record(self, name: str, node: nn.Module) -> None:
        """Wrap ``node``'s forward to run it on the held batched state, keep the new state
        of every sample, and its membrane before reset in ``neuromark_h``."""
        if "forward" in node.__dict__:
            return
        original, held = node.forward, self._held
        synaptic = "isyn" in node._buffers

        def forward(x: Tensor, *args: Any, **kwargs: Any) -> Any:
            batch = x.shape[0]
            state = held.get(name)
            if state is None or state["vmem"].shape[0] != batch:
                state = {key: torch.zeros((batch, *value.shape), dtype=value.dtype,
                                          device=value.device)
                         for key, value in node._buffers.items()
                         if key in ("vmem", "isyn", "spikes") and isinstance(value, Tensor)}
            node._buffers.update(state)  # batched: Rockpool's setattr accepts (N,) only
            recording, node._record = node._record, True
            try:
                spikes = original(x, *args, **kwargs)
                record = node._record_dict
                new = {"vmem": record["vmem"][:, -1]}
                if synaptic:
                    new["isyn"] = record["isyn"][:, -1]
                    new["spikes"] = spikes[:, -1]
            finally:
                node._record = recording
            held[name] = new
            node.__dict__["neuromark_h"] = new["vmem"] + spikes[:, -1] * node.threshold
            return spikes

        node.__dict__["forward"] = forward

    def __call__(self, data: Tensor) -> Tensor:
        return run_step_by_step(self, data)

    def reset_state(self) -> None:
        """Every batch starts from zero state: the held batched states and the recorded
        membranes are dropped, and Rockpool's ``reset_state()`` restores its own."""
        self._held.clear()
        reset = getattr(self.module, "reset_state", None)
        if callable(reset):
            reset()
        for layer in self.neuron_layers():
            layer.module.__dict__.pop("neuromark_h", None)

    def neuron_layers(self) -> list[NeuronLayer]:
        """Rockpool LIF neurons (``LIFNeuronTorch``, ``LIFBaseTorch`` subclasses such as
        ``LIFTorch``), outermost first, with their declared costs."""
        layers: list[NeuronLayer] = []
        for name, module in self.module.named_modules():
            for kind, cls in self.neuron_types.items():
                if isinstance(module, cls):
                    layers.append(NeuronLayer(name or type(module).__name__, module, _membrane,
                                              cost=COSTS[kind]))
                    break
        return layers

    def state(self) -> dict[str, Tensor]:
        """Each layer's batched ``vmem`` (and ``isyn``) after the reset, as the adapter
        holds them."""
        return {f"{name}.{key}": value for name, state in self._held.items()
                for key, value in state.items() if key != "spikes"}
