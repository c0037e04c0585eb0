"""Lazy module attributes, so that package imports stay light (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, targets: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` importing ``targets[name]`` (a module path) on first use."""

    def __getattr__(name: str) -> Any:
        if name in targets:
            return getattr(importlib.import_module(targets[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
