"""Instance-level forward wrappers: the probes' way into a layer call.

``register_forward_hook`` makes every call of a hooked module take ``nn.Module``'s slow
path (hook lists, argument tuples), about 3 us per call on the reference network. A
wrapper stored as the instance's ``forward`` keeps the fast path and costs one Python call.
``nn.Module.__call__`` still runs any user hooks around it, in the same order as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from neuromark.errors import UnsupportedLayerError

Forward = Callable[..., Any]
_MISSING = object()


class ForwardWrapper:
    """Replaces ``module.forward`` (or another method, ``attribute``) by
    ``make(original)`` until :meth:`remove`."""

    def __init__(self, module: nn.Module, make: Callable[[Forward], Forward],
                 attribute: str = "forward") -> None:
        if isinstance(module, torch.jit.ScriptModule):
            raise UnsupportedLayerError(
                f"cannot instrument the TorchScript module {type(module).__name__}: calls "
                "from compiled code bypass Python; pass the original nn.Module")
        self.module, self.attribute = module, attribute
        self.previous = module.__dict__.get(attribute, _MISSING)
        self.installed = module.__dict__[attribute] = make(getattr(module, attribute))

    def reinstall(self) -> None:
        """Put the wrapper back after :meth:`remove` (wrappers of one module in the order
        they were made)."""
        self.module.__dict__[self.attribute] = self.installed

    def remove(self) -> None:
        """Restore the module's own forward."""
        if self.previous is _MISSING:
            self.module.__dict__.pop(self.attribute, None)
        else:
            self.module.__dict__[self.attribute] = self.previous
