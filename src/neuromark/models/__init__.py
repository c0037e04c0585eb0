"""Model adapters: the harness talks to every framework through a
:class:`~neuromark.models.adapter.ModelAdapter` (:mod:`.adapter`); one module per framework
(:mod:`.torch_model`, :mod:`.snntorch_model`, :mod:`.norse_model`, ... ; NIR in
:mod:`.nir_model`). Import each name from the module that defines it; :func:`as_adapter`
wraps a bare module in the adapter it needs."""

from __future__ import annotations

from typing import Any

from neuromark.models import wrapping


def as_adapter(model: Any) -> Any:
    """Wrap a bare ``nn.Module``: in its framework's adapter when it holds stepped neurons
    (an snnTorch network whose forward takes one step: ``SNNTorchModel``; otherwise an
    error naming the adapter to use, :mod:`neuromark.models.stepped`), else in a
    TorchModel; adapters pass through. The adapter of a bare net carries its
    :class:`~neuromark.models.wrapping.Wrapping` as ``auto_wrapped`` (the run says so once
    and names it in its errors)."""
    from neuromark.models.adapter import ModelAdapter
    from neuromark.models.stepped import stepped_adapter
    from neuromark.models.torch_model import TorchModel

    if isinstance(model, ModelAdapter):
        return model
    from torch import nn

    if isinstance(model, nn.Module):
        stepped = stepped_adapter(model)
        if stepped is not None:
            stepped.auto_wrapped = wrapping.SNNTORCH_STEPPED
            return stepped
        adapter = TorchModel(model)
        adapter.auto_wrapped = wrapping.PLAIN
        return adapter
    return TorchModel(model)

