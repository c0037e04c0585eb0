"""Pre- and post-processors.

Preprocessors are called as ``(data, targets) -> (data, targets)`` on a tuple;
postprocessors as ``output -> predictions``. Any callable with that signature works,
lambdas included.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "ChooseMaxCount": "neuromark.processors.post",
    "Argmax": "neuromark.processors.post",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'neuromark.processors' has no attribute {name!r}")
