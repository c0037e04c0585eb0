"""Ready-made sample libraries and systems under test.

- :class:`InMemoryLibrary`: loads samples through a callable when LoadGen asks (untimed)
  and hands them out by index.
- :class:`StagedSUT`: pre-processing and inference as two callables, timed separately per
  sample at batch size 1 (NeuroBench rule), with the timings kept in a
  :class:`~neuromark.system.timing.StageTimer`.
- :func:`warm_up`: untimed samples before a test.
- :func:`check_first_response`: the labels and the responses to the first queries checked
  before any timed run (type, dtype, shape, finite), with errors naming the SUT and the field.
- :class:`BuiltSUT`: what a factory of :data:`neuromark.registry.suts` returns (the SUT,
  its library, labels or None, an info dict); the factories live in
  :mod:`neuromark.system.suts`, one module each.

The test doubles ``NullSUT`` (answers at once) and ``SleepSUT`` (sleeps a fixed time) are
in :mod:`neuromark.system.suts.null` and :mod:`neuromark.system.suts.sleep`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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


@dataclass
class BuiltSUT:
    """A system under test ready to run, as a :data:`neuromark.registry.suts` factory returns it.

    Attributes:
        sut: has ``name``, ``response_dtype`` and ``issue(indices) -> list of arrays``
            (a :class:`StagedSUT` for separate stage timings); a ``timer`` attribute
            (:class:`~neuromark.system.timing.StageTimer`) gives per-sample latencies.
        library: the sample library LoadGen loads and unloads.
        labels: the ground truth of the accuracy pass: ``labels[i]`` is the class of library
            sample ``i`` (an integer array, shape (N,)) or its regression target (a float
            array, shape (N,) or (N, ...)); None when the SUT has nothing to score (a
            pure-timing SUT, whose config then says ``accuracy: {exempt: reason}``).
        info: recorded under ``details.sut`` in the results (data, threads, weights, ...).
        close: called once after the run, also when it fails (restore torch's thread
            count, release a device); None when there is nothing to undo.
        workload: ``workload() -> (model, batches)``: the model the SUT runs and batches of
            ``(input, target)`` in which each sample is one inference, for the energy
            ESTIMATE the system task prints beside the measured energy (config
            ``estimate:``); None when the SUT's operations cannot be counted.
        scores: figures the SUT measured itself before the run, added to the results'
            scores (the ``remote`` SUT's ``transport_latency``).
        metric: the task's metric for the SUT's outputs, a name of
            :data:`neuromark.registry.metrics` (``sMAPE`` for a forecast); None:
            ``classification_accuracy`` for integer labels. The config's
            ``accuracy.metric`` wins.
        reference: ``reference(indices) -> list of arrays``: the float reference model's
            outputs for those library samples (called once, untimed, outside LoadGen, with
            every index in ascending order, so a stateful model sees its series in order);
            the accuracy pass scores them with the same metric when the config says
            ``accuracy: {reference: float_model}``. None: the config gives the figure.
        quantized_reference: ``quantized_reference(indices) -> list of arrays``: the
            validated quantized reference's outputs (for a chip: the SDK's own quantized
            model run in its simulation or software engine, untimed), called like
            ``reference``; the accuracy pass scores it beside the float reference and names
            both gaps, and ``accuracy: {reference: quantized_model}`` judges against it.
            None: the SUT has no quantized model (a float SUT).
        operation_counts: operations per inference the SUT counted itself, where the
            harness cannot count its model (a chip simulator's synaptic events): ``{macs,
            acs, neuron_updates, source}``, priced by the energy profiles when no meter is
            attached (an ESTIMATE); None: not counted.
        front_end: the cost of the SUT's input encoder (a block of
            :mod:`neuromark.processors.encoder_cost`), recorded under ``details.front_end``
            beside the model's figures; None when the input passes no encoder.
    """

    sut: Any
    library: InMemoryLibrary
    labels: np.ndarray | None = None
    info: dict[str, Any] = field(default_factory=dict)
    close: Callable[[], Any] | None = None
    workload: Callable[[], tuple[Any, Any]] | None = None
    scores: dict[str, Any] = field(default_factory=dict)
    metric: str | None = None
    reference: Callable[[Sequence[int]], Sequence[Any]] | None = None
    quantized_reference: Callable[[Sequence[int]], Sequence[Any]] | None = None
    operation_counts: dict[str, Any] | None = None
    front_end: dict[str, Any] | None = None


class StagedSUT:
    """Pre-processing then inference, one sample at a time, each stage timed (ns).

    ``preprocess(sample) -> features`` and ``infer(features) -> response``; the response is
    converted to a contiguous array of ``response_dtype`` (the conversion is outside the
    timed region). Errors name the sample index. For asynchronous devices pass ``sync``
    (e.g. ``torch.cuda.synchronize``): it runs before each clock read after a stage, so a
    stage ends when its last timestep has been processed, not when it was queued.
    ``stateful`` says why the responses depend on the order of the queries (state kept
    between them), or is None; MLPerf's TEST01 is then not applicable.
    """

    def __init__(self, name: str, library: InMemoryLibrary, preprocess: Callable[[Any], Any],
                 infer: Callable[[Any], Any], *, response_dtype: str = "<f4",
                 warmup: int = 0, sync: Callable[[], Any] | None = None,
                 stateful: str | None = None) -> None:
        self.name = name
        self.stateful = stateful
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


def warm_up(sut: Any, library: InMemoryLibrary, n: int) -> None:
    """Run ``n`` samples untimed (loaded and unloaded around them), then reset the SUT's
    timer, so the test starts with warm caches and an empty timer."""
    if n == 0:
        return
    idx = [i % library.total_count for i in range(n)]
    library.load(sorted(set(idx)))
    for i in idx:
        if isinstance(sut, StagedSUT):
            sut.run_one(i)
        else:
            sut.issue([i])
    library.unload(sorted(set(idx)))
    if getattr(sut, "timer", None) is not None:
        sut.timer.reset()


def check_labels(labels: Any, entry: str, count: int, classes: bool = True) -> None:
    """``BuiltSUT.labels`` is None or a numpy array with one entry per sample of the library
    (``count``): integer class indices of shape (count,) when ``classes``, else any finite
    numbers of shape (count, ...) (regression targets); :class:`DataError` naming SUT
    ``entry`` otherwise."""
    if labels is None:
        return
    what = f"SUT {entry!r}: BuiltSUT.labels"
    if not isinstance(labels, np.ndarray):
        raise DataError(f"{what} is a {type(labels).__name__}; give a numpy array of {count} class "
                        "indices (integers) or regression targets, e.g. np.asarray(labels, "
                        "dtype=np.int64)")
    if classes and (labels.ndim != 1 or len(labels) != count or labels.dtype.kind not in "iu"):
        raise DataError(f"{what} has shape {labels.shape} and dtype {labels.dtype}; expected "
                        f"shape ({count},) (one class per library sample) of an integer dtype")
    if not classes:
        if labels.ndim < 1 or len(labels) != count or labels.dtype.kind not in "iuf":
            raise DataError(f"{what} has shape {labels.shape} and dtype {labels.dtype}; expected "
                            f"{count} numeric targets (shape ({count}, ...))")
        if labels.dtype.kind == "f" and not np.isfinite(labels).all():
            raise DataError(f"{what}: the regression targets hold NaN or inf")


def check_first_response(built: BuiltSUT, entry: str, scored: bool, classes: bool = True) -> None:
    """Issue the library's first sample(s) (one query each, untimed) and check what comes
    back before LoadGen runs: a sequence of one numpy array per query, of the declared
    ``response_dtype``, C-contiguous, finite, of one shape; with ``scored`` labels, a 1-D
    vector of class scores with an entry for every label (``classes``: scored by argmax against
    integer labels; otherwise the labels are checked as regression targets). Errors (:class:`DataError`,
    :class:`ModelOutputError` for non-finite values) name SUT ``entry`` and the field; the
    SUT's timer is reset afterwards."""
    sut, library = built.sut, built.library
    check_labels(built.labels, entry, library.total_count, classes)
    dtype = np.dtype(sut.response_dtype)
    indices = list(range(min(2, library.total_count)))
    library.load(indices)
    shapes = []
    try:
        for index in indices:
            outs = sut.issue([index])
            where = f"SUT {entry!r}: issue([{index}])"
            if isinstance(outs, np.ndarray) or not hasattr(outs, "__len__") or len(outs) != 1:
                got = (f"an array of shape {outs.shape}" if isinstance(outs, np.ndarray) else
                       f"{len(outs)} responses" if hasattr(outs, "__len__") else
                       f"a {type(outs).__name__}")
                raise DataError(f"{where} returned {got}; expected a list of one numpy array "
                                "per sample index")
            out = outs[0]
            if not isinstance(out, np.ndarray):
                raise DataError(f"{where}: the response is a {type(out).__name__}; expected a "
                                f"numpy array of the declared response_dtype {dtype.str}")
            if out.dtype != dtype:
                raise DataError(f"{where}: the response has dtype {out.dtype.str}, expected the "
                                f"declared response_dtype {dtype.str}")
            if not out.flags.c_contiguous:
                raise DataError(f"{where}: the response is not C-contiguous "
                                "(np.ascontiguousarray)")
            if out.dtype.kind in "fc" and not np.isfinite(out).all():
                raise ModelOutputError(f"{where}: the response holds non-finite values (NaN or "
                                       f"inf): {np.array2string(out.ravel()[:8])}")
            shapes.append(out.shape)
    finally:
        library.unload(indices)
    if len(set(shapes)) > 1:
        raise DataError(f"SUT {entry!r}: responses to samples 0 and 1 have shapes {shapes[0]} "
                        f"and {shapes[1]}; every response must have one shape")
    if scored and classes and built.labels is not None:
        count = int(built.labels.max(initial=0)) + 1
        if len(shapes[0]) != 1 or shapes[0][0] < count:
            raise DataError(f"SUT {entry!r}: the response has shape {shapes[0]}; scored against "
                            f"labels up to {count - 1} it must be 1-D with at least {count} "
                            "class scores (argmax is the prediction)")
    if getattr(sut, "timer", None) is not None:
        sut.timer.reset()
