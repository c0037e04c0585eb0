"""The NeuroBench power protocol over measurement windows (ASC system-track rules).

1. An idle window (system configured and ready, not asleep) gives idle power.
2. Active windows (pre-processing, inference) give active power for each.
3. Dynamic power = active − idle.
4. Energy per inference = power × mean latency, for total and dynamic power.

In amortised mode the active window covers a long stream of ``inferences`` samples (e.g.
10 s, as the NeuroBench paper measured Xylo) and energy per inference = window energy /
``inferences``; the results say this mode was used.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from neuromark.errors import MetricError
from neuromark.system.power.protocol import PowerMeter

#: Windows with fewer meter samples than this get a warning.
MIN_SAMPLES = 10


@dataclass(frozen=True)
class Window:
    """A measurement window ``[t0, t1]`` on the host monotonic clock (s)."""

    name: str
    t0: float
    t1: float

    def __post_init__(self) -> None:
        if not self.t1 > self.t0:
            raise MetricError(f"window {self.name!r}: end {self.t1} must be after start {self.t0}")

    @property
    def duration_s(self) -> float:
        return self.t1 - self.t0


def window_power(meter: PowerMeter, window: Window) -> dict[str, Any]:
    """Energy (J), mean power (W), duration (s) and meter sample count of one window;
    warns (and flags) below :data:`MIN_SAMPLES` samples."""
    energy = meter.energy(window.t0, window.t1)
    n = meter.samples_in(window.t0, window.t1)
    out: dict[str, Any] = {"t0_s": window.t0, "t1_s": window.t1, "duration_s": window.duration_s,
                           "energy_j": energy, "mean_power_w": energy / window.duration_s,
                           "meter_samples": n}
    if n < MIN_SAMPLES:
        msg = (f"power window {window.name!r} holds only {n} meter samples (< {MIN_SAMPLES}); "
               "lengthen the window or raise the meter's sample rate")
        warnings.warn(msg, stacklevel=2)
        out["warning"] = msg
    return out


def analyse(meter: PowerMeter, idle: Window, active: list[Window],
            latency_s: dict[str, float] | None = None,
            inferences: dict[str, int] | None = None) -> dict[str, Any]:
    """Idle, active and dynamic power, and energy per inference for each active window.

    ``latency_s[name]`` (mean latency of that stage) gives energy per inference =
    power × latency; ``inferences[name]`` (amortised mode) gives energy / count instead.
    """
    out: dict[str, Any] = {"idle": window_power(meter, idle), "active": {}}
    idle_w = out["idle"]["mean_power_w"]
    for win in active:
        stats = window_power(meter, win)
        stats["dynamic_power_w"] = stats["mean_power_w"] - idle_w
        if inferences and win.name in inferences:
            n = inferences[win.name]
            if n < 1:
                raise MetricError(f"window {win.name!r}: inference count must be >= 1, got {n}")
            stats["inferences"] = n
            stats["energy_per_inference_j"] = stats["energy_j"] / n
            stats["dynamic_energy_per_inference_j"] = stats["dynamic_power_w"] * win.duration_s / n
            stats["mode"] = "amortised"
        elif latency_s and win.name in latency_s:
            lat = latency_s[win.name]
            stats["latency_s"] = lat
            stats["energy_per_inference_j"] = stats["mean_power_w"] * lat
            stats["dynamic_energy_per_inference_j"] = stats["dynamic_power_w"] * lat
            stats["mode"] = "power x mean latency"
        out["active"][win.name] = stats
    return out
