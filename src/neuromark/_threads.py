"""Torch's process-wide settings around a block: the intra-op thread count set and
restored; the default dtype guarded (a change is restored and reported)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any

from neuromark.errors import ConfigError


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Set torch's intra-op threads to ``n`` inside the block, and restore them after
    (small per-step ops are often fastest on one thread)."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


@contextlib.contextmanager
def default_dtype_kept(message: Callable[[Any, Any], str]) -> Iterator[None]:
    """Run the block; when it changed torch's default dtype (``torch.set_default_dtype``,
    process-wide: everything run after it would inherit it), restore it and raise
    :class:`ConfigError` with ``message(before, after)``. Torch is not imported here: a
    block that loads it is compared against torch's own default, float32."""
    torch = sys.modules.get("torch")
    before = torch.get_default_dtype() if torch is not None else None
    yield
    torch = sys.modules.get("torch")
    if torch is None:
        return
    after = torch.get_default_dtype()
    if before is None:
        before = torch.float32
    if after != before:
        torch.set_default_dtype(before)
        raise ConfigError(message(before, after))
