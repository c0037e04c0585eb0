"""The ``PowerMeter`` protocol and the shared integration helpers.

Every meter timestamps on :func:`neuromark.system.timing.now_s` (``perf_counter``,
CLOCK_MONOTONIC), the clock of the latency timings, so energy over a timed window is
``meter.energy(t0, t1)`` with the same ``t0``/``t1``.

Two kinds of traces exist:

- power samples ``(t_s, power_w)`` (instruments, CSV logs): energy is the trapezoid integral,
  with linear interpolation of the power at the window edges;
- cumulative energy counters ``(t_s, energy_j)`` (RAPL, NVML): energy is the difference of
  the counter, linearly interpolated at the window edges.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from neuromark.errors import DataError, MetricError


@runtime_checkable
class PowerMeter(Protocol):
    """A power meter (see DESIGN.md). ``measured`` is False only for the null meter.
    ``metadata()`` has at least ``name``, ``measured`` (bool), ``reason`` (why not measured,
    else ""), ``sample_rate_hz`` and ``components``."""

    measured: bool

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def mark(self, label: str) -> float: ...

    def energy(self, t0: float, t1: float) -> float: ...

    def samples_in(self, t0: float, t1: float) -> int: ...

    def timeline(self) -> dict[str, Any]: ...

    def metadata(self) -> dict[str, Any]: ...


def check_window(t0: float, t1: float, t: np.ndarray, source: str) -> None:
    """Raise :class:`DataError` unless ``t[0] <= t0 < t1 <= t[-1]``."""
    if not t1 > t0:
        raise MetricError(f"{source}: empty or reversed window [{t0}, {t1}] s")
    if t.size < 2 or t0 < t[0] or t1 > t[-1]:
        span = f"[{t[0]:.6f}, {t[-1]:.6f}] s" if t.size else "no samples"
        raise DataError(f"{source}: the trace ({span}) does not cover the measured window "
                        f"[{t0:.6f}, {t1:.6f}] s")


def integrate_power(t: np.ndarray, p: np.ndarray, t0: float, t1: float, source: str = "trace") -> float:
    """Energy (J) of power samples ``p`` (W) at times ``t`` (s) over ``[t0, t1]``: trapezoid
    rule with the power linearly interpolated at ``t0`` and ``t1``."""
    check_window(t0, t1, t, source)
    inside = (t > t0) & (t < t1)
    ts = np.concatenate(([t0], t[inside], [t1]))
    ps = np.concatenate(([np.interp(t0, t, p)], p[inside], [np.interp(t1, t, p)]))
    return float(np.sum(0.5 * (ps[1:] + ps[:-1]) * np.diff(ts)))


def counter_energy(t: np.ndarray, e: np.ndarray, t0: float, t1: float, source: str = "counter") -> float:
    """Energy (J) between ``t0`` and ``t1`` from a cumulative counter ``e`` (J, unwrapped)."""
    check_window(t0, t1, t, source)
    return float(np.interp(t1, t, e) - np.interp(t0, t, e))


def peak_power(timeline: dict[str, Any], t0: float, t1: float) -> float | None:
    """The highest power (W) of a meter's ``timeline`` in ``[t0, t1]``: its points inside
    and the power linearly interpolated at ``t0`` and ``t1``; None for an empty trace."""
    t = np.asarray(timeline.get("t_s", []), dtype=np.float64)
    p = np.asarray(timeline.get("power_w", []), dtype=np.float64)
    if t.size == 0:
        return None
    inside = p[(t >= t0) & (t <= t1)]
    edges = np.interp([t0, t1], t, p)
    return float(max(inside.max(initial=-np.inf), edges.max()))


def count_samples(t: np.ndarray, t0: float, t1: float) -> int:
    """Number of meter samples with ``t0 <= t <= t1``."""
    return int(np.count_nonzero((t >= t0) & (t <= t1)))


class PowerSamples:
    """``energy``, ``samples_in`` and ``timeline`` of a meter whose trace is power samples.

    A subclass gives :meth:`_arrays`: the samples so far as times ``t`` (s, host clock,
    ascending) and power ``p`` (W), both of shape (N,); :meth:`_source` names the trace in
    errors and :meth:`_marks` lists the host marks ``(label, t_s)`` the timeline carries.
    """

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _source(self) -> str:
        return "trace"

    def _marks(self) -> list[tuple[str, float]]:
        return []

    def energy(self, t0: float, t1: float) -> float:
        """Energy (J) over ``[t0, t1]`` (host-clock s): :func:`integrate_power`."""
        t, p = self._arrays()
        return integrate_power(t, p, t0, t1, self._source())

    def samples_in(self, t0: float, t1: float) -> int:
        """Samples with ``t0 <= t <= t1``."""
        return count_samples(self._arrays()[0], t0, t1)

    def timeline(self) -> dict[str, Any]:
        """``{"t_s": [...], "power_w": [...], "marks": [(label, t_s), ...]}``."""
        t, p = self._arrays()
        return {"t_s": t.tolist(), "power_w": p.tolist(), "marks": self._marks()}
