"""NIR export of snnTorch networks through snnTorch's own exporter (``export_to_nir``).

snnTorch 1.0 with nir 1.0.8 exports ``Leaky``/``Synaptic`` only with per-neuron tensors for
beta (alpha) and threshold and an unbatched sample; the shipped baselines share one value
per layer, so :func:`to_nir` exports a copy with those values broadcast to each layer's
neuron shape (:func:`per_neuron_copy`). Layers NIR 1.0 has no node for (max pooling) are
refused naming them: snnTorch's exporter would leave them out of the graph in silence.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import Tensor, nn

from neuromark.errors import require

#: snnTorch neurons whose shared (scalar) parameters :func:`per_neuron_copy` broadcasts.
NEURONS = ("Leaky", "Synaptic", "RLeaky", "RSynaptic")
#: layers NIR 1.0 has no node for: snnTorch's exporter would leave them out of the graph.
NO_NIR_NODE = {"MaxPool1d": "max pooling", "MaxPool2d": "max pooling",
               "MaxPool3d": "max pooling", "AdaptiveMaxPool1d": "max pooling",
               "AdaptiveMaxPool2d": "max pooling"}


def _refuse_layers_without_nir_node(net: nn.Module) -> None:
    for name, module in net.named_modules():
        what = NO_NIR_NODE.get(type(module).__name__)
        if what is not None:
            raise ValueError(f"to_nir: layer {name!r} ({type(module).__name__}) is {what}, for "
                             "which NIR 1.0 defines no node (NIR pools by AvgPool2d/SumPool2d "
                             "only): snnTorch's exporter would leave it out of the graph, so "
                             "the network is not exported")


def per_neuron_copy(net: nn.Module, sample: Tensor) -> nn.Module:
    """A copy of ``net`` whose snnTorch neurons hold per-neuron tensors of beta, alpha and
    threshold (what snnTorch 1.0's NIR exporter needs), each shared scalar broadcast to its
    layer's neuron shape, found by running ``sample`` (one step of one sample, no batch
    dimension) through the copy with a batch of one. ``net`` itself is not changed."""
    _refuse_layers_without_nir_node(net)
    copy_ = copy.deepcopy(net)
    shapes: dict[str, tuple[int, ...]] = {}

    def probe(name: str) -> Any:
        def hook(module: nn.Module, args: tuple, out: Any) -> None:  # returns None: output kept
            shapes.setdefault(name, tuple(args[0].shape[1:]))
        return hook

    hooks = [module.register_forward_hook(probe(name))
             for name, module in copy_.named_modules() if type(module).__name__ in NEURONS]
    try:
        with torch.no_grad():
            copy_(sample.unsqueeze(0))
    except Exception as exc:
        raise ValueError(f"to_nir: running one sample of shape {tuple(sample.shape)} (batch of "
                         f"one) through the network failed: {type(exc).__name__}: {exc}") from None
    finally:
        for hook in hooks:
            hook.remove()
    for name, module in copy_.named_modules():
        if name not in shapes:
            continue
        for param in ("beta", "alpha", "threshold"):
            value = getattr(module, param, None)
            if not isinstance(value, Tensor) or value.shape == shapes[name]:
                continue
            full = torch.broadcast_to(value.detach(), shapes[name]).clone()
            if isinstance(value, nn.Parameter):
                setattr(module, param, nn.Parameter(full, requires_grad=value.requires_grad))
            elif param in dict(module.named_buffers(recurse=False)):
                module.register_buffer(param, full)
            else:
                setattr(module, param, full)
        if hasattr(module, "reset_mem"):
            module.reset_mem()  # forget the probe's state (not reset_hidden: a classmethod)
    return copy_


def to_nir(model: Any, sample: Tensor) -> Any:
    """Export an snnTorch network (or an adapter holding one) to a ``nir.NIRGraph`` with
    snnTorch's ``export_to_nir``; ``sample`` is ONE time step of ONE sample, no batch
    dimension (what snnTorch 1.0 with nir 1.0.8 accepts). Neurons that share one beta,
    alpha or threshold are exported from a copy with that value broadcast per neuron
    (:func:`per_neuron_copy`); layers NIR has no node for (max pooling) are refused
    naming them. Write the graph with ``nir.write``."""
    net = getattr(model, "module", model)
    if not isinstance(net, nn.Module):
        raise TypeError(f"to_nir needs an nn.Module or adapter, got {type(model).__name__}")
    require("snntorch", "snntorch")
    require("nir", "nir")
    from snntorch.export_nir import export_to_nir

    return export_to_nir(per_neuron_copy(net, sample), sample)
