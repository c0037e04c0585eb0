"""Importing an SNN framework for its adapter, with one clear message when it fails.

The frameworks are extras installed with ``--no-deps`` (their declared needs pull CUDA torch,
torchvision or torchaudio, which break next to CPU torch), so a broken install can fail on
import with any exception, not only ImportError. :func:`import_framework` turns every
failure into :class:`~neuromark.errors.MissingExtraError` naming the extra and the
install command.
"""

from __future__ import annotations

import importlib
from typing import Any

import torch

from neuromark.errors import MissingExtraError
from neuromark.models.base import first_tensor

#: Extra name -> the install command that works on the CPU constraint (docs/frameworks.md).
INSTALL = {
    fw: f"pip install -c constraints-cpu.txt 'neuromark[{fw}]' && pip install --no-deps {pin}"
    for fw, pin in (("spikingjelly", "spikingjelly==2.0.0"), ("norse", "norse==1.1.0"),
                    ("sinabs", "sinabs==3.1.3"), ("rockpool", "rockpool==3.1.0"))
}


def import_framework(module: str, extra: str) -> Any:
    """Import ``module`` of the framework installed by ``neuromark[extra]``; any exception
    on import becomes a MissingExtraError that says how to (re)install it."""
    try:
        return importlib.import_module(module)
    except Exception as exc:
        how = INSTALL.get(extra, f"pip install -c constraints-cpu.txt 'neuromark[{extra}]'")
        raise MissingExtraError(
            f"{module!r} could not be imported ({type(exc).__name__}: {exc}); (re)install "
            f"the {extra!r} extra without torchvision/torchaudio: {how}") from exc


def run_step_by_step(adapter: Any, data: Any) -> Any:
    """Feed ``data`` (B, T, ...) to ``adapter.module`` one time step at a time, each step as a
    (B, 1, ...) sequence, telling the adapter's step listeners first; returns (B, T, ...).

    For frameworks whose layers keep state between calls (Sinabs, Rockpool), so that the
    harness sees every step."""
    steps = [first_tensor(adapter.module(x_t.unsqueeze(1))).squeeze(1)
             for x_t in adapter.split_steps(data, 1)]
    return torch.stack(steps, dim=1)
