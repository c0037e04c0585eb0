"""Lazy module attributes, so that package imports stay light (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, targets: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` importing ``targets[name]`` (a module path) on first use."""

    def __getattr__(name: str) -> Any:
        if name in targets:
            return getattr(importlib.import_module(targets[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def by_module(package: str, groups: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """``{name: module path}`` for :func:`lazy_attributes` from ``groups``: each submodule of
    ``package`` (its last name, e.g. ``"static"``) with the names it defines. A name listed
    under two submodules raises :class:`ValueError` naming both."""
    targets: dict[str, str] = {}
    for sub, names in groups.items():
        for name in names:
            module = f"{package}.{sub}"
            if name in targets:
                raise ValueError(f"{package}: {name!r} is listed under both {targets[name]} and {module}")
            targets[name] = module
    return targets
