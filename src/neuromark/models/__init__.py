"""Model adapters: the harness talks to every framework through a ModelAdapter."""

from __future__ import annotations

from typing import Any

__all__ = ["ModelAdapter", "SNNTorchModel", "TorchModel", "as_adapter"]

_LAZY = {
    "ModelAdapter": "neuromark.models.adapter",
    "TorchModel": "neuromark.models.torch_model",
    "SNNTorchModel": "neuromark.models.snntorch_model",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'neuromark.models' has no attribute {name!r}")


def as_adapter(model: Any) -> Any:
    """Wrap a bare ``nn.Module`` in a TorchModel; adapters pass through."""
    from neuromark.models.adapter import ModelAdapter
    from neuromark.models.torch_model import TorchModel

    return model if isinstance(model, ModelAdapter) else TorchModel(model)
