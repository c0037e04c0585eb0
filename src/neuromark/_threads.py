"""Temporarily set torch's intra-op thread count."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


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
