"""SUT ``sleep``: sleeps a fixed time per sample and times itself, to check that our own
mean latency agrees with LoadGen's.

Config::

    sut: {name: sleep, options: {sleep_s: 0.001, samples: 64}}
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Annotated

import numpy as np
from pydantic import Field

from neuromark.errors import DataError
from neuromark.system.sut import BuiltSUT
from neuromark.system.suts.null import index_library
from neuromark.system.timing import StageTimer


class SleepSUT:
    """Sleeps ``sleep_s`` per sample (``time.sleep``) and records its own latency (ns)."""

    name = "sleep"
    response_dtype = "<f4"

    def __init__(self, sleep_s: float = 1e-3) -> None:
        if sleep_s < 0:
            raise DataError(f"sleep_s must be >= 0, got {sleep_s}")
        self.sleep_s = sleep_s
        self.timer = StageTimer(("inference",))
        self._empty = np.empty(0, dtype="<f4")

    def issue(self, sample_indices: Sequence[int]) -> list[np.ndarray]:
        clock = time.perf_counter_ns
        for _ in sample_indices:
            t0 = clock()
            time.sleep(self.sleep_s)
            self.timer.add("inference", clock() - t0)
        return [self._empty] * len(sample_indices)


def sleep(*, sleep_s: Annotated[float, Field(ge=0)] = 1e-3,
          samples: Annotated[int, Field(ge=1)] = 64) -> BuiltSUT:
    """The ``sleep`` entry of :data:`neuromark.registry.suts`; ``sleep_s`` per sample,
    ``samples``: library size."""
    return BuiltSUT(SleepSUT(sleep_s), index_library("sleep", samples),
                    info={"sleep_s": sleep_s, "stages": ["inference"]})  # no pre-processing
