"""Model adapters: the harness talks to every framework through a ModelAdapter."""

from __future__ import annotations

from typing import Any

from neuromark._lazy import lazy_attributes

__all__ = ["ModelAdapter", "SNNTorchModel", "TorchModel", "as_adapter", "from_nir", "to_nir"]

_LAZY = {
    "ModelAdapter": "neuromark.models.adapter",
    "TorchModel": "neuromark.models.torch_model",
    "SNNTorchModel": "neuromark.models.snntorch_model",
    "from_nir": "neuromark.models.nir_model",
    "to_nir": "neuromark.models.nir_model",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


def as_adapter(model: Any) -> Any:
    """Wrap a bare ``nn.Module``: in its framework's adapter when it holds stepped neurons
    (an snnTorch network whose forward takes one step: ``SNNTorchModel``; otherwise an
    error naming the adapter to use, :mod:`neuromark.models.stepped`), else in a
    TorchModel; adapters pass through."""
    from neuromark.models.adapter import ModelAdapter
    from neuromark.models.stepped import stepped_adapter
    from neuromark.models.torch_model import TorchModel

    if isinstance(model, ModelAdapter):
        return model
    from torch import nn

    if isinstance(model, nn.Module):
        stepped = stepped_adapter(model)
        if stepped is not None:
            return stepped
    return TorchModel(model)

