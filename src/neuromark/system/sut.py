"""Ready-made sample libraries and systems under test.

- :class:`InMemoryLibrary`: loads samples through a callable when LoadGen asks (untimed)
  and hands them out by index.
- :class:`StagedSUT`: pre-processing and inference as two callables, timed separately per
  sample at batch size 1 (NeuroBench rule), with the timings kept in a
  :class:`~neuromark.system.timing.StageTimer`.
- :class:`NullSUT` (answers at once; measures harness overhead) and :class:`SleepSUT`
  (sleeps a fixed time; checks latency agreement with LoadGen).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from neuromark.errors import DataError, ModelOutputError
from neuromark.system.timing import StageTimer


class InMemoryLibrary:
    """A sample library over ``fetch(index) -> sample``; LoadGen's load/unload fill and drop
    an in-memory cache, so timed code only reads memory.

    Args:
        name: shown in errors and results.
        fetch: returns sample ``index`` (called during ``load`` only, untimed).
        total_count: number of samples.
        performance_count: samples held in memory at once in performance mode
            (default: all).
        fetch_many: optional ``indices -> {index: sample}`` used by ``load`` instead of
            ``fetch`` one by one (e.g. to read each audio file once).
    """

    def __init__(self, name: str, fetch: Callable[[int], Any], total_count: int,
                 performance_count: int | None = None,
                 fetch_many: Callable[[list[int]], dict[int, Any]] | None = None) -> None:
        if total_count < 1:
            raise DataError(f"sample library {name!r} is empty")
        self.name = name
        self.fetch = fetch
        self.fetch_many = fetch_many
        self.total_count = total_count
        self.performance_count = min(performance_count or total_count, total_count)
        self.cache: dict[int, Any] = {}

    def load(self, indices: Sequence[int]) -> None:
        missing = [i for i in indices if i not in self.cache]
        if self.fetch_many is not None and missing:
            self.cache.update(self.fetch_many(missing))
            return
        for i in missing:
            self.cache[i] = self.fetch(i)

    def unload(self, indices: Sequence[int]) -> None:
        for i in indices:
            self.cache.pop(i, None)

    def get(self, index: int) -> Any:
        try:
            return self.cache[index]
        except KeyError:
            raise DataError(f"sample library {self.name!r}: sample {index} was not loaded "
                            "(LoadGen did not ask for it)") from None


class StagedSUT:
    """Pre-processing then inference, one sample at a time, each stage timed (ns).

    ``preprocess(sample) -> features`` and ``infer(features) -> response``; the response is
    converted to a contiguous array of ``response_dtype`` (the conversion is outside the
    timed region). Errors name the sample index. For asynchronous devices pass ``sync``
    (e.g. ``torch.cuda.synchronize``): it runs before each clock read after a stage, so a
    stage ends when its last timestep has been processed, not when it was queued.
    """

    def __init__(self, name: str, library: InMemoryLibrary, preprocess: Callable[[Any], Any],
                 infer: Callable[[Any], Any], *, response_dtype: str = "<f4",
                 warmup: int = 0, sync: Callable[[], Any] | None = None) -> None:
        self.name = name
        self.sync = sync
        self.library = library
        self.preprocess = preprocess
        self.infer = infer
        self.response_dtype = np.dtype(response_dtype).str
        self.timer = StageTimer(("preprocess", "inference"), warmup=warmup)

    def issue(self, sample_indices: Sequence[int]) -> list[np.ndarray]:
        clock = time.perf_counter_ns
        add = self.timer.add
        dtype = self.response_dtype
        sync = self.sync or _no_sync
        out = []
        for index in sample_indices:
            sample = self.library.get(index)
            try:
                t0 = clock()
                features = self.preprocess(sample)
                sync()
                t1 = clock()
                response = self.infer(features)
                sync()
                t2 = clock()
            except Exception as exc:
                raise ModelOutputError(f"SUT {self.name!r} failed on sample {index}: "
                                       f"{type(exc).__name__}: {exc}") from exc
            add("preprocess", t1 - t0)
            add("inference", t2 - t1)
            arr = np.ascontiguousarray(_to_numpy(response), dtype=dtype)
            if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                raise ModelOutputError(f"SUT {self.name!r}: non-finite response to sample {index}")
            out.append(arr)
        return out

    def run_one(self, index: int) -> None:
        """Process one sample untimed by LoadGen (used for warm-up and power windows)."""
        self.infer(self.preprocess(self.library.get(index)))


def _no_sync() -> None:
    pass


def _to_numpy(value: Any) -> Any:
    if hasattr(value, "detach"):  # torch tensor, without importing torch
        return value.detach().cpu().numpy()
    return value


class NullSUT:
    """Answers every sample at once with an empty float32 array (harness overhead)."""

    name = "null"
    response_dtype = "<f4"
    _EMPTY = np.empty(0, dtype="<f4")
    _ONE = (_EMPTY,)

    def issue(self, sample_indices: Sequence[int]) -> Sequence[np.ndarray]:
        n = len(sample_indices)
        return self._ONE if n == 1 else [self._EMPTY] * n


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
