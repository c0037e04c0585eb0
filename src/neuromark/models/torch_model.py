"""Adapter for any ``nn.Module``: stateless nets, or nets with explicit time loops inside."""

from __future__ import annotations

from neuromark.models.adapter import ModelAdapter


class TorchModel(ModelAdapter):
    """A plain PyTorch network called once per batch: ``output = module(data)``, with
    ``data`` passed through as it is (a tensor, a tuple, a list or a dict of tensors).

    Custom neuron layers are found when they set ``neuromark_neuron = True`` and keep their
    membrane potential in a ``mem`` tensor attribute; ``reset_state()`` is called on every
    module that defines it.
    """
