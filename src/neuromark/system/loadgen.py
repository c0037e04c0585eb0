"""MLPerf LoadGen wrappers: settings from YAML, the SUT and sample-library roles, one test run.

We use the real LoadGen (PyPI ``mlcommons-loadgen``, import ``mlperf_loadgen``); see
https://github.com/mlcommons/inference/tree/master/loadgen. Roles are kept apart as in
MLPerf: a :class:`SampleLibrary` owns the data (loading is untimed), a
:class:`SystemUnderTest` answers ``issue(sample_indices) -> responses``, and LoadGen
schedules queries for one of four scenarios (SingleStream, MultiStream, Server, Offline)
in PerformanceOnly or AccuracyOnly mode. This module never imports models, data or metrics.

Every response is a contiguous numpy array of the SUT's declared ``response_dtype``; it is
kept alive until ``QuerySamplesComplete`` returns (LoadGen reads the buffer by address and
crashes on a freed one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

import numpy as np
from pydantic import Field, model_validator

from neuromark.config import StrictModel, memory_budget
from neuromark.errors import ConfigError, ModelOutputError, require
from neuromark.system.loadgen_log import summarize
from neuromark.system.search import SearchSettings

ndarray = np.ndarray

Scenario = Literal["SingleStream", "MultiStream", "Server", "Offline"]
Mode = Literal["PerformanceOnly", "AccuracyOnly"]


#: Largest duration or latency setting (seconds, about 11.6 days): LoadGen keeps them as
#: 64-bit nanoseconds, and a larger value is a typo, not a benchmark.
MAX_SECONDS = 1e6
#: Largest ``target_qps`` accepted (queries per second).
MAX_QPS = 1e9
#: Most queries LoadGen may pre-generate (it allocates them all before the test).
MAX_QUERIES = 10_000_000
#: Bytes per pre-generated query and per sample index, an estimate from LoadGen's
#: ``QueryMetadata`` (for the memory check at validation).
QUERY_BYTES = 256
SAMPLE_BYTES = 16
#: LoadGen's default single-stream expected latency (seconds).
DEFAULT_EXPECTED_LATENCY_S = 1e-3
#: A setting the calibration run chooses (the default of ``expected_latency_s`` and ``target_qps``).
AUTO = "auto"


class Seeds(StrictModel):
    """LoadGen's four random seeds (MLPerf publishes official values each round: 64-bit,
    as LoadGen's ``uint64_t`` seeds, so ``[0, 2**64)`` here)."""

    qsl_rng_seed: int = Field(0, ge=0, lt=2**64)
    sample_index_rng_seed: int = Field(0, ge=0, lt=2**64)
    schedule_rng_seed: int = Field(0, ge=0, lt=2**64)
    accuracy_log_rng_seed: int = Field(0, ge=0, lt=2**64)


class LoadGenSettings(StrictModel):
    """Requested LoadGen settings (YAML ``loadgen:`` section); times in seconds.

    ``expected_latency_s`` sets the single/multi-stream expected latency (LoadGen
    pre-generates ``2 * min_duration / expected_latency`` queries); ``target_qps`` is the
    Server target or the Offline expected QPS. Both default to ``"auto"``: the system task
    measures the SUT in a short untimed calibration run and chooses them
    (:mod:`neuromark.system.calibration`); a number in the config wins. Unresolved
    ``"auto"`` reaching LoadGen means LoadGen's own default. ``latency_bound_s`` is the
    Server latency bound (and the MultiStream per-query bound of a search);
    ``target_latency_percentile`` applies to the scenario in use; ``search`` asks for the
    scenario's paper metric (:mod:`neuromark.system.search`: Server's highest valid
    ``target_qps``, MultiStream's largest ``samples_per_query`` meeting the bound).
    """

    scenario: Scenario = "SingleStream"
    mode: Mode = "PerformanceOnly"
    min_query_count: int = Field(100, ge=1)
    max_query_count: int = Field(0, ge=0, description="0 = no limit")
    min_duration_s: float = Field(1.0, ge=0, le=MAX_SECONDS)
    max_duration_s: float = Field(0.0, ge=0, le=MAX_SECONDS, description="0 = no limit")
    target_latency_percentile: float | None = Field(None, gt=0, lt=1)
    expected_latency_s: Annotated[float, Field(gt=0, le=MAX_SECONDS)] | Literal["auto"] | None = AUTO
    target_qps: Annotated[float, Field(gt=0, le=MAX_QPS)] | Literal["auto"] | None = AUTO
    latency_bound_s: float | None = Field(None, gt=0, le=MAX_SECONDS)
    samples_per_query: int | None = Field(None, ge=1)
    performance_sample_count: int | None = Field(None, ge=1)
    seeds: Seeds = Seeds()
    search: bool | SearchSettings = Field(
        False, description="Server: highest valid target_qps; MultiStream: largest samples_per_query")

    @model_validator(mode="after")
    def _check(self) -> LoadGenSettings:
        if self.max_duration_s and self.max_duration_s < self.min_duration_s:
            raise ValueError(f"max_duration_s ({self.max_duration_s}) < min_duration_s "
                             f"({self.min_duration_s})")
        if self.max_query_count and self.max_query_count < self.min_query_count:
            raise ValueError(f"max_query_count ({self.max_query_count}) < min_query_count "
                             f"({self.min_query_count})")
        if self.scenario == "Server" and self.target_qps is None:
            raise ValueError("the Server scenario needs target_qps (a number or auto)")
        if self.search and self.scenario not in ("Server", "MultiStream"):
            raise ValueError(f"search: the {self.scenario} scenario has nothing to search "
                             "(Server searches target_qps, MultiStream samples_per_query)")
        if self.search and self.scenario == "MultiStream" and self.latency_bound_s is None:
            raise ValueError("search: MultiStream searches the largest samples_per_query whose "
                             "p99 meets latency_bound_s; set latency_bound_s")
        if AUTO in (self.expected_latency_s, self.target_qps) and self.needs_calibration():
            return self  # the memory check runs on the calibrated settings
        queries, samples = self.planned_queries()
        need = queries * QUERY_BYTES + samples * SAMPLE_BYTES
        if queries > MAX_QUERIES or need > memory_budget():
            raise ValueError(
                f"LoadGen would pre-generate about {queries:.3g} queries ({samples:.3g} samples, "
                f"~{need / 2**30:.3g} GiB) for min_duration_s={self.min_duration_s} at "
                f"{self._rate_text()}; at most {MAX_QUERIES:.0e} queries and "
                f"{memory_budget() / 2**30:.3g} GiB fit. Set the expected latency or target_qps "
                "near the real figure, or lower min_duration_s / set max_query_count")
        return self

    def needs_calibration(self) -> bool:
        """Whether the scenario's rate setting is ``auto`` (SingleStream/MultiStream:
        ``expected_latency_s``; Server/Offline: ``target_qps``) or a search was asked for."""
        stream = self.scenario in ("SingleStream", "MultiStream")
        return bool(self.search) or (self.expected_latency_s if stream else self.target_qps) == AUTO

    def planned_queries(self) -> tuple[float, float]:
        """(queries, samples) LoadGen pre-generates for these settings: about
        ``k * min_duration * rate`` (k = 2, Server 1) but at least ``min_query_count``, capped
        by ``max_query_count`` (LoadGen's ``GenerateQueries``); ``rate`` is ``1/expected
        latency`` (default 1 ms) for the stream scenarios, ``target_qps`` otherwise."""
        if self.scenario in ("SingleStream", "MultiStream"):
            rate = 1.0 / _number(self.expected_latency_s, DEFAULT_EXPECTED_LATENCY_S)
        else:
            rate = _number(self.target_qps, 1.0)
        per_query = (self.samples_per_query or 8) if self.scenario == "MultiStream" else 1
        factor = 1.0 if self.scenario == "Server" else 2.0
        count = max(float(self.min_query_count), factor * self.min_duration_s * rate)
        if self.max_query_count:
            count = min(count, float(self.max_query_count))
        if self.scenario == "Offline":  # one query holding every sample
            return 1.0, count
        return count, count * per_query

    def _rate_text(self) -> str:
        if self.scenario in ("SingleStream", "MultiStream"):
            return f"expected_latency_s={_number(self.expected_latency_s, DEFAULT_EXPECTED_LATENCY_S)}"
        return f"target_qps={_number(self.target_qps, 1.0)}"


def _number(value: float | str | None, default: float) -> float:
    """``value`` when it is a number; ``default`` for None and an unresolved ``"auto"``."""
    return float(value) if isinstance(value, (int, float)) else default


def to_test_settings(settings: LoadGenSettings, lg: Any) -> Any:
    """Build ``mlperf_loadgen.TestSettings`` from our settings."""
    ts = lg.TestSettings()
    ts.scenario = getattr(lg.TestScenario, settings.scenario)
    ts.mode = getattr(lg.TestMode, settings.mode)
    ts.min_query_count = settings.min_query_count
    ts.max_query_count = settings.max_query_count
    ts.min_duration_ms = round(settings.min_duration_s * 1e3)
    ts.max_duration_ms = round(settings.max_duration_s * 1e3)
    for name, value in settings.seeds.model_dump().items():
        setattr(ts, name, value)
    if isinstance(settings.expected_latency_s, (int, float)):  # None or "auto": LoadGen's default
        ns = max(1, round(settings.expected_latency_s * 1e9))
        ts.single_stream_expected_latency_ns = ns
        ts.multi_stream_expected_latency_ns = ns
    if settings.target_latency_percentile is not None:
        p = settings.target_latency_percentile
        ts.single_stream_target_latency_percentile = p
        ts.multi_stream_target_latency_percentile = p
        ts.server_target_latency_percentile = p
    if isinstance(settings.target_qps, (int, float)):
        ts.server_target_qps = settings.target_qps
        ts.offline_expected_qps = settings.target_qps
    if settings.latency_bound_s is not None:
        ts.server_target_latency_ns = max(1, round(settings.latency_bound_s * 1e9))
    if settings.samples_per_query is not None:
        ts.multi_stream_samples_per_query = settings.samples_per_query
    if settings.performance_sample_count is not None:
        ts.performance_sample_count_override = settings.performance_sample_count
    return ts


@runtime_checkable
class SampleLibrary(Protocol):
    """Owns the samples; ``load``/``unload`` are called by LoadGen outside timed regions."""

    name: str
    total_count: int
    performance_count: int

    def load(self, indices: Sequence[int]) -> None: ...

    def unload(self, indices: Sequence[int]) -> None: ...


@runtime_checkable
class SystemUnderTest(Protocol):
    """``issue(sample_indices) -> responses``: one numpy array of ``response_dtype`` per index."""

    name: str
    response_dtype: str

    def issue(self, sample_indices: Sequence[int]) -> Sequence[np.ndarray]: ...


class SUTFailure(ModelOutputError):
    """The SUT raised or answered badly during a LoadGen test; names the sample and logs."""


@dataclass
class LoadGenRun:
    """Outcome of one LoadGen test: the parsed figures and where the raw logs are."""

    log_dir: Path
    summary: dict[str, Any]
    response_dtype: str
    failure: str | None = None


class _Bridge:
    """The Python callbacks LoadGen calls (SUT issue/flush, QSL load/unload). No exception
    may escape into LoadGen: the first failure is recorded, the rest of the test drains at
    once, and :func:`run_test` raises after LoadGen has written its logs. The issue path is
    kept short (see ``bench/loadgen_overhead.py``)."""

    def __init__(self, sut: SystemUnderTest, library: SampleLibrary, lg: Any) -> None:
        self.sut = sut
        self.library = library
        self.lg = lg
        self.dtype = np.dtype(sut.response_dtype)
        self._issue = sut.issue
        self._response = lg.QuerySampleResponse
        self._complete = lg.QuerySamplesComplete
        self.failure: str | None = None

    def issue_query(self, ids: list[int], indices: list[int]) -> None:
        """LoadGen's fast issue callback: response ids and sample indices as plain ints."""
        if self.failure is not None:  # drain the rest of the test quickly
            self._drain(ids)
            return
        try:
            outs = self._issue(indices)
            dtype = self.dtype
            if len(ids) == 1:  # SingleStream / Server: the short path
                try:
                    (out,) = outs
                except (TypeError, ValueError):
                    self._bad_count(indices, outs)
                if out.__class__ is not ndarray or (out.dtype is not dtype and out.dtype != dtype):
                    self._bad_response(indices[0], out)
                size = out.nbytes
                self._complete([self._response(ids[0], self._address(indices[0], out) if size else 0, size)])
                return
            if len(outs) != len(ids):
                self._bad_count(indices, outs)
            responses = []
            for rid, index, out in zip(ids, indices, outs):
                if out.__class__ is not ndarray or (out.dtype is not dtype and out.dtype != dtype):
                    self._bad_response(index, out)
                size = out.nbytes
                responses.append(self._response(rid, self._address(index, out) if size else 0, size))
            self._complete(responses)  # ``outs`` stays referenced until this returns
        except Exception as exc:  # reported after the test, with the logs
            self.failure = (str(exc) if isinstance(exc, SUTFailure) else
                            f"SUT {self.sut.name!r} raised {type(exc).__name__} on sample "
                            f"indices {list(indices[:8])}: {exc}")
            self._drain(ids)

    def _address(self, index: int, out: np.ndarray) -> int:
        if not out.flags.c_contiguous:
            raise SUTFailure(f"SUT {self.sut.name!r}: response to sample {index} is not C-contiguous")
        return out.ctypes.data

    def _bad_count(self, indices: list[int], outs: Any) -> None:
        count = len(outs) if hasattr(outs, "__len__") else type(outs).__name__
        raise SUTFailure(f"SUT {self.sut.name!r} returned {count} responses for "
                         f"{len(indices)} samples (sample indices {list(indices[:8])})")

    def _bad_response(self, index: int, out: Any) -> None:
        if isinstance(out, np.ndarray) and out.dtype == self.dtype:
            return  # an ndarray subclass of the right dtype is fine
        got = out.dtype.str if isinstance(out, np.ndarray) else type(out).__name__
        raise SUTFailure(f"SUT {self.sut.name!r}: response to sample {index} has "
                         f"dtype {got}, expected the declared {self.dtype.str}")

    def _drain(self, ids: list[int]) -> None:
        self._complete([self._response(rid, 0, 0) for rid in ids])

    def flush(self) -> None:
        pass

    def load(self, indices: list[int]) -> None:
        """QSL load callback: an exception must not cross into LoadGen (it crashes there)."""
        try:
            self.library.load(indices)
        except Exception as exc:  # reported after the test, with the logs
            if self.failure is None:
                self.failure = (f"sample library {self.library.name!r} failed to load samples "
                                f"{list(indices[:8])}{' ...' if len(indices) > 8 else ''}: "
                                f"{type(exc).__name__}: {exc}")

    def unload(self, indices: list[int]) -> None:
        try:
            self.library.unload(indices)
        except Exception as exc:
            if self.failure is None:
                self.failure = (f"sample library {self.library.name!r} failed to unload samples: "
                                f"{type(exc).__name__}: {exc}")


def run_test(sut: SystemUnderTest, library: SampleLibrary, settings: LoadGenSettings,
             log_dir: str | Path, *, raise_on_failure: bool = True,
             overrides: dict[str, Any] | None = None) -> LoadGenRun:
    """Run one LoadGen test and parse its logs (written to ``log_dir``, kept on failure).

    ``overrides`` sets further ``mlperf_loadgen.TestSettings`` attributes after ours (the
    compliance tests' audit settings, e.g. ``performance_issue_same``); an unknown name
    raises :class:`ConfigError`.

    Raises :class:`SUTFailure` (after LoadGen has finished and written its logs) when the
    SUT raised, answered with the wrong count or dtype; the message names the sample and
    the log folder.
    """
    lg = require("mlperf_loadgen", "system")
    if library.performance_count < 1 or library.performance_count > library.total_count:
        raise ConfigError(f"sample library {library.name!r}: performance_count "
                          f"{library.performance_count} must be in 1..{library.total_count}")
    count = settings.performance_sample_count
    if count is not None and count > library.total_count:
        raise ConfigError(f"loadgen.performance_sample_count: {count} is larger than the sample "
                          f"library {library.name!r} ({library.total_count} samples)")
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    bridge = _Bridge(sut, library, lg)
    out = lg.LogOutputSettings()
    out.outdir = str(log_dir)
    out.copy_summary_to_stdout = False
    log_settings = lg.LogSettings()
    log_settings.log_output = out
    log_settings.enable_trace = False
    sut_handle = lg.ConstructFastSUT(bridge.issue_query, bridge.flush)
    qsl_handle = lg.ConstructQSL(library.total_count, library.performance_count,
                                 bridge.load, bridge.unload)
    test_settings = to_test_settings(settings, lg)
    for name, value in (overrides or {}).items():
        if not hasattr(test_settings, name):
            lg.DestroyQSL(qsl_handle)
            lg.DestroyFastSUT(sut_handle)
            raise ConfigError(f"LoadGen TestSettings has no setting {name!r}")
        setattr(test_settings, name, value)
    try:
        lg.StartTestWithLogSettings(sut_handle, qsl_handle, test_settings, log_settings)
    finally:
        lg.DestroyQSL(qsl_handle)
        lg.DestroyFastSUT(sut_handle)
    run = LoadGenRun(log_dir=log_dir, summary=summarize(log_dir), response_dtype=bridge.dtype.str,
                     failure=bridge.failure)
    if bridge.failure and raise_on_failure:
        raise SUTFailure(f"{bridge.failure}; LoadGen logs kept in {log_dir}")
    return run
