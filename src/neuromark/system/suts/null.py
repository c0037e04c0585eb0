"""SUT ``null``: answers every sample at once, so LoadGen's latency is the harness overhead.

Config::

    sut: {name: "null", options: {samples: 1024}}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import numpy as np
from pydantic import Field

from neuromark.system.sut import BuiltSUT, InMemoryLibrary


class NullSUT:
    """Answers every sample at once with an empty float32 array (harness overhead)."""

    name = "null"
    response_dtype = "<f4"
    _EMPTY = np.empty(0, dtype="<f4")
    _ONE = (_EMPTY,)

    def issue(self, sample_indices: Sequence[int]) -> Sequence[np.ndarray]:
        n = len(sample_indices)
        return self._ONE if n == 1 else [self._EMPTY] * n


def index_library(name: str, samples: int) -> InMemoryLibrary:
    """A library whose sample ``i`` is the integer ``i`` (for SUTs that ignore their input)."""
    return InMemoryLibrary(f"{name}-indices", lambda i: i, samples)


def null(*, samples: Annotated[int, Field(ge=1)] = 64) -> BuiltSUT:
    """The ``null`` entry of :data:`neuromark.registry.suts`; ``samples``: library size."""
    # no stages: it does no work, so LoadGen's latency is the harness overhead alone
    return BuiltSUT(NullSUT(), index_library("null", samples), info={"stages": []})
