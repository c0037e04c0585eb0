"""The ModelAdapter contract and layer discovery shared by all adapters.

An adapter wraps a framework's network and tells the harness:
- how to call it on a batch (``__call__``) and reset its state (``reset_state``);
- its connection layers (weights that multiply inputs: Linear, Conv, RNN/LSTM/GRU and cells);
- its neuron layers (spiking neurons, ReLU and any other activation module);
- its neuron state (membrane potentials), for footprint and membrane updates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import Tensor, nn

from neuromark.errors import UnsupportedLayerError

CONV_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
RNN_TYPES = (nn.RNN, nn.LSTM, nn.GRU)
CELL_TYPES = (nn.RNNCell, nn.LSTMCell, nn.GRUCell)
#: Layers whose synaptic operations neuromark counts.
CONNECTION_TYPES: tuple[type[nn.Module], ...] = (nn.Linear, *CONV_TYPES, *RNN_TYPES, *CELL_TYPES)

#: Activation modules reported as neuron layers by default.
ACTIVATION_TYPES: tuple[type[nn.Module], ...] = (
    nn.ReLU, nn.ReLU6, nn.LeakyReLU, nn.PReLU, nn.RReLU, nn.ELU, nn.SELU, nn.CELU, nn.GELU,
    nn.SiLU, nn.Mish, nn.Sigmoid, nn.Tanh, nn.Hardtanh, nn.Hardsigmoid, nn.Hardswish,
    nn.Softplus, nn.Softsign, nn.Threshold, nn.LogSigmoid, nn.Tanhshrink, nn.Softshrink,
    nn.Hardshrink,
)

#: Layers with parameters that apply no synaptic multiplications of inputs by weights.
NON_SYNAPTIC_TYPES: tuple[type[nn.Module], ...] = (
    nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm, nn.LocalResponseNorm,
    nn.Embedding, nn.EmbeddingBag, nn.PReLU,
)

#: Attribute names that hold a neuron layer's state tensors: membrane, synaptic current,
#: and the last spikes a neuron keeps for the next step (snnTorch's ``RLeaky`` and
#: ``RSynaptic`` feed them back through their recurrent weights; NIR neurons reset from
#: them), all per-sample state.
STATE_ATTRIBUTES = ("mem", "syn", "spk", "state")


def is_spiking_neuron(module: nn.Module) -> bool:
    """snnTorch neurons (any class derived from ``SpikingNeuron``) or modules that declare
    ``neuromark_neuron = True``."""
    if getattr(module, "neuromark_neuron", False):
        return True
    return any(cls.__name__ == "SpikingNeuron" for cls in type(module).__mro__)


def elementwise_weight(module: nn.Module) -> str | None:
    """The attribute holding the weight of an *element-wise* connection, ``forward(x) =
    x * weight`` with one weight per neuron (or one for all, broadcast): snnTorch's
    ``RecurrentOneToOne`` (``RLeaky``/``RSynaptic`` with ``all_to_all=False``, weight
    ``V``), or any module that declares ``neuromark_elementwise_weight = "<attribute>"``.
    None for other modules. Each such connection applies one synapse per neuron and step
    (:class:`~neuromark.instrument.elementwise_counter.ElementwiseCounter`)."""
    declared = getattr(module, "neuromark_elementwise_weight", None)
    if isinstance(declared, str):
        return declared
    cls = type(module)
    if cls.__name__ == "RecurrentOneToOne" and cls.__module__.startswith("snntorch."):
        return "V"
    return None


def is_connection(module: nn.Module) -> bool:
    """Whether neuromark's probes count ``module`` as a connection layer: one of
    :data:`CONNECTION_TYPES` or an element-wise connection (:func:`elementwise_weight`)."""
    return isinstance(module, CONNECTION_TYPES) or elementwise_weight(module) is not None


def first_tensor(output: Any) -> Tensor:
    """The spikes/activations of a neuron layer output: the tensor itself or the first
    element of a tuple such as snnTorch's ``(spk, mem)``."""
    while isinstance(output, (tuple, list)):
        output = output[0]
    return output


@dataclass(frozen=True)
class NeuronLayer:
    """A neuron layer: unique dotted name, module, and how to read its membrane state.

    ``cost``: ops per neuron update, declared by an adapter for neuron types without a
    known cost (see :mod:`neuromark.metrics.functional.neuron_ops`); None: not declared."""

    name: str
    module: nn.Module
    membrane: Callable[[nn.Module], Tensor | None]
    cost: float | None = None


def membrane_attribute(module: nn.Module) -> Tensor | None:
    """The module's ``mem`` tensor when it has one (snnTorch and our own LIF layers).

    Read from the module's buffers or ``__dict__`` directly: ``getattr`` would go through
    ``nn.Module.__getattr__``, and this runs once per layer and step."""
    mem = module._buffers.get("mem")
    if mem is None:
        mem = module.__dict__.get("mem")
        if mem is None and hasattr(type(module), "mem"):  # e.g. a property
            mem = getattr(module, "mem", None)
    return mem if isinstance(mem, Tensor) else None


def no_membrane(module: nn.Module) -> None:
    return None


def find_connection_layers(root: nn.Module, strict: bool = True) -> list[tuple[str, nn.Module]]:
    """All connection layers (:func:`is_connection`: element-wise ones such as snnTorch's
    ``RecurrentOneToOne`` included) with unique dotted names. With ``strict``, other modules with
    a ``weight*`` parameter raise; without, they are left out (the probes count their
    operations by interception, :mod:`neuromark.instrument.intercept`)."""
    found = []
    for name, module in root.named_modules():
        if is_connection(module):
            found.append((name or type(module).__name__, module))
            continue
        if getattr(module, "neuromark_no_synapses", False) or is_spiking_neuron(module):
            continue
        if isinstance(module, NON_SYNAPTIC_TYPES + ACTIVATION_TYPES):
            continue
        own = [p for p, _ in module.named_parameters(recurse=False) if p.startswith("weight")]
        if own and strict:
            raise UnsupportedLayerError(
                f"module {name or '<root>'!r} ({type(module).__name__}) has weights "
                f"{own} that neuromark cannot count; supported connection layers: Linear, "
                "Conv1d/2d/3d, RNN/LSTM/GRU and their cells. Set "
                "`neuromark_no_synapses = True` on the module if it applies no synapses.")
    return found


def find_state_updates(root: nn.Module) -> list[tuple[str, nn.Module, str]]:
    """``(name, neuron, method)`` for each neuron whose one state update (the method) applies
    connection layers it owns: snnTorch's ``RLeaky``, ``RSynaptic`` (recurrent Linear or
    Conv, or the element-wise ``RecurrentOneToOne`` of ``all_to_all=False``), ``SLSTM``
    (LSTMCell) and ``SConv2dLSTM`` (Conv2d), through ``state_function``.

    Their reset-to-zero update (``reset_mechanism="zero"``, snnTorch 0.9 to 1.0) evaluates the
    state function twice on the same state, ``base(x) - reset * base(x)`` (RLeaky) or
    ``base(x)`` then ``base_reset_zero(x)`` (the others), so the recurrent connection is
    called twice per step with the same input. A chip applies each connection once per step:
    the probes count each connection layer at most once within one such update
    (:mod:`neuromark.instrument.probes`)."""
    found = []
    for name, module in root.named_modules():
        if not is_spiking_neuron(module) or not callable(module.__dict__.get("state_function")):
            continue
        if any(is_connection(sub) for sub in module.modules()):
            found.append((name or type(module).__name__, module, "state_function"))
    return found


def find_neuron_layers(root: nn.Module) -> list[NeuronLayer]:
    """Spiking neurons and activation modules, outermost first, with unique dotted names."""
    layers = []
    inside_neuron: list[str] = []
    for name, module in root.named_modules():
        if any(name.startswith(prefix + ".") for prefix in inside_neuron):
            continue  # e.g. a spike function module inside a neuron
        if is_spiking_neuron(module):
            layers.append(NeuronLayer(name or type(module).__name__, module, membrane_attribute))
            inside_neuron.append(name)
        elif isinstance(module, ACTIVATION_TYPES):
            layers.append(NeuronLayer(name or type(module).__name__, module, no_membrane))
    return layers


def module_state(root: nn.Module) -> dict[str, Tensor]:
    """Neuron state tensors (``mem``, ``syn``, ``state``) of all neuron layers."""
    out = {}
    for layer in find_neuron_layers(root):
        for attr in STATE_ATTRIBUTES:
            value = getattr(layer.module, attr, None)
            if isinstance(value, Tensor):
                out[f"{layer.name}.{attr}"] = value
    return out
