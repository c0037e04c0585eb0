"""Each scenario's paper metric by search (Reddi et al., "MLPerf Inference Benchmark",
ISCA 2020, Table 2).

- **Server**: the highest Poisson rate (``target_qps``) whose LoadGen run is VALID under
  the latency bound. :func:`search_rate` brackets it (doubling up or halving down from a
  start rate until one VALID and one INVALID rate are known), then bisects until the
  bracket is narrower than ``tolerance`` (relative) or ``max_probes`` runs were made. The
  reported figure is then the minimum over ``final_runs`` (five) runs at that rate.
- **MultiStream**: the largest number of samples per query (streams) whose p99 per-query
  latency meets the bound; :func:`search_streams` doubles then bisects over integers.

Both take the probe as a function (``rate -> Probe``), so the logic is tested on a stub;
:mod:`neuromark.system.track.perf` gives them LoadGen runs. Every probe is kept.

**Bounded work.** Besides ``max_probes``, two callbacks end a search early: ``give_up``
after a failed probe (it shows that no value can pass: e.g. a Server probe failed although
the SUT was nearly idle, so a lower rate cannot help) and ``affordable`` before each probe
(its estimated length would take the search past ``max_search_s``). Either way the best
value passed so far is kept (None: the result is INVALID) and ``stopped`` says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from neuromark.config import StrictModel


class SearchSettings(StrictModel):
    """``loadgen.search: {...}`` (``search: true`` takes these defaults)."""

    final_runs: int = Field(5, ge=1, description="runs at the found rate; the minimum is reported")
    tolerance: float = Field(0.05, gt=0, lt=1, description="relative bracket width that ends the bisection")
    max_probes: int = Field(12, ge=2, description="most LoadGen runs the search makes")
    probe_duration_s: float | None = Field(
        None, gt=0, description="min_duration_s of each probe (default: 1 s under the test "
                                "profile, 10 s under submission; never above min_duration_s)")
    max_search_s: float = Field(
        3600.0, gt=0, le=10 ** 6, description="estimated seconds of LoadGen runs the search may "
        "spend: a probe that would take the total beyond it is not run (the search stops, "
        "keeping the best value so far)")


@dataclass
class Probe:
    """One probe: the value tried, whether it passed, and what the run showed."""

    value: float
    passed: bool
    info: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {"value": self.value, "passed": self.passed, **self.info}


@dataclass
class SearchResult:
    """The best passing value (None: none passed), the probes in order, why it stopped."""

    best: float | None
    probes: list[Probe]
    stopped: str

    def record(self) -> dict[str, Any]:
        return {"best": self.best, "stopped": self.stopped,
                "probes": [p.record() for p in self.probes]}


class _Stop(Exception):
    """Ends a search early; the message is the reason."""


#: ``give_up(failed_probe)`` / ``affordable(next_value)``: a reason to stop, or None.
Verdict = Callable[[Probe], "str | None"]
Budget = Callable[[float], "str | None"]


def _runner(probe: Callable, probes: list[Probe], give_up: Verdict | None,
            affordable: Budget | None) -> Callable[[float], bool]:
    def run(value: float) -> bool:
        reason = affordable(value) if affordable is not None else None
        if reason:
            raise _Stop(reason)
        result = probe(value)
        probes.append(result)
        reason = give_up(result) if give_up is not None and not result.passed else None
        if reason:
            raise _Stop(reason)
        return result.passed
    return run


def search_rate(probe: Callable[[float], Probe], start: float, *, tolerance: float = 0.05,
                max_probes: int = 12, floor: float | None = None, give_up: Verdict | None = None,
                affordable: Budget | None = None) -> SearchResult:
    """The highest rate for which ``probe(rate).passed``, assuming passing is monotone
    (every rate below a passing one passes).

    From ``start``: a pass doubles the rate until one fails, a fail halves it until one
    passes (not below ``floor``, default ``start / 1024``); then the bracket
    ``[passed, failed]`` is bisected at its midpoint until ``(failed - passed) / failed <=
    tolerance``. Example: passing below 731, start 500: probes 500, 1000, 750, 625, 687.5,
    718.75 -> best 718.75 (bracket 718.75..750 is within 5 %). ``give_up`` and
    ``affordable``: see the module docstring.
    """
    if start <= 0:
        raise ValueError(f"search_rate: start rate must be > 0, got {start}")
    floor = start / 1024 if floor is None else floor
    probes: list[Probe] = []
    run = _runner(probe, probes, give_up, affordable)
    state: dict[str, float | None] = {"low": None}
    try:
        return _bracket_rate(run, probes, start, tolerance, max_probes, floor, state)
    except _Stop as stop:
        return SearchResult(state["low"], probes, str(stop))


def _bracket_rate(run: Callable[[float], bool], probes: list[Probe], start: float,
                  tolerance: float, max_probes: int, floor: float,
                  state: dict[str, float | None]) -> SearchResult:
    low: float | None = None
    high: float | None = None
    rate = start
    while len(probes) < max_probes:
        if run(rate):
            low = state["low"] = rate
            if high is not None:
                break
            rate *= 2
        else:
            high = rate
            if low is not None:
                break
            if rate / 2 < floor:
                return SearchResult(None, probes, f"no rate down to {rate:g} passed")
            rate /= 2
    else:
        return SearchResult(low, probes, "max_probes reached while bracketing")
    assert low is not None and high is not None
    while (high - low) / high > tolerance:
        if len(probes) >= max_probes:
            return SearchResult(low, probes, f"max_probes reached; bracket {low:g}..{high:g}")
        middle = (low + high) / 2
        if run(middle):
            low = state["low"] = middle
        else:
            high = middle
    return SearchResult(low, probes, f"bracket {low:g}..{high:g} within {tolerance:g}")


def search_streams(probe: Callable[[int], Probe], *, start: int = 1, max_streams: int = 4096,
                   max_probes: int = 12, give_up: Verdict | None = None,
                   affordable: Budget | None = None) -> SearchResult:
    """The largest integer ``k`` (samples per query) for which ``probe(k).passed``, passing
    assumed monotone (fewer streams pass when more do): doubling from ``start`` until a
    fail (or ``max_streams``), then integer bisection. Example: passing up to 11, start 1:
    probes 1, 2, 4, 8, 16, 12, 10, 11 -> best 11. ``give_up`` and ``affordable``: see the
    module docstring."""
    if start < 1:
        raise ValueError(f"search_streams: start must be >= 1, got {start}")
    probes: list[Probe] = []
    run = _runner(probe, probes, give_up, affordable)
    state = {"low": 0}
    try:
        return _bracket_streams(run, probes, start, max_streams, max_probes, state)
    except _Stop as stop:
        return SearchResult(float(state["low"]) if state["low"] else None, probes, str(stop))


def _bracket_streams(run: Callable[[float], bool], probes: list[Probe], start: int,
                     max_streams: int, max_probes: int, state: dict[str, int]) -> SearchResult:
    low, high, k = 0, None, start
    while len(probes) < max_probes:
        if not run(k):
            high = k
            break
        low = state["low"] = k
        if k >= max_streams:
            return SearchResult(float(low), probes, f"max_streams {max_streams} passed")
        k = min(2 * k, max_streams)
    if high is None:
        return SearchResult(float(low) if low else None, probes, "max_probes reached while bracketing")
    while high - low > 1:  # low == 0 when the start failed: search below it
        if len(probes) >= max_probes:
            return SearchResult(float(low) if low else None, probes,
                                f"max_probes reached; bracket {low}..{high}")
        middle = (low + high) // 2
        if run(middle):
            low = state["low"] = middle
        else:
            high = middle
    return SearchResult(float(low) if low else None, probes,
                        f"{low} passed, {high} failed" if low else f"{high} failed")
