"""Pre- and post-processors.

Preprocessors are called as ``(data, targets) -> (data, targets)`` on a tuple;
postprocessors as ``output -> predictions``. Any callable with that signature works,
lambdas included.
"""

from __future__ import annotations

from neuromark._lazy import lazy_attributes

_LAZY = {
    "ChooseMaxCount": "neuromark.processors.post",
    "Argmax": "neuromark.processors.post",
}

__all__ = sorted(_LAZY)


__getattr__ = lazy_attributes(__name__, _LAZY)
