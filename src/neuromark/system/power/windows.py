"""The NeuroBench power protocol over measurement windows, in the ASC system-track spec's words.

- **Floor power**: the mean power with the chip configured and prepared to begin
  processing (explicitly *not* idle power: the device must not sleep). A ``floor`` window.
- **Total power**: the mean power during processing. One active window per stage
  (``preprocess``, ``inference``) or one ``stream`` window.
- **Floor / total energy per inference** = floor / total power × the averaged inference
  latency; with the real-time rule (``latency: data_time``, e.g. analog pre-processing)
  the latency is the data time of one sample (1 s for ASC).
- **Dynamic power** = total − floor, and dynamic energy per inference, a derived extra.
- **Idle power**: a separate, optional window with the device asleep (true idle), only
  reported when the meter and SUT have one; it never stands in for the floor.

In amortised mode the active window is a separate long run of ``inferences`` continuous
samples (e.g. 5-10 s, as the NeuroBench paper measured Xylo), apart from the accuracy and
latency runs: energy per inference = window energy / ``inferences`` (floor: floor power ×
window duration / ``inferences``); the results and the report say this mode was used.

Definitions recorded with every window (format 3): ``duration_s`` (window length),
``meter_samples`` (meter readings with ``t0 <= t <= t1``), ``sample_rate_hz`` (= readings /
window length), ``peak_power_w`` (the highest power of the meter's trace inside the window,
the values interpolated at its edges included) beside ``mean_power_w``, and ``flags``: a
window shorter than :data:`MIN_WINDOW_S` (the NeuroBench system rules review,
NeuroBench/system_benchmarks PR #3: board capacitance smooths and biases short windows) or
with fewer than :data:`MIN_SAMPLES` readings.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from neuromark.errors import MetricError
from neuromark.system.power.protocol import PowerMeter, peak_power

#: Windows with fewer meter samples than this get a warning (the checker fails them).
MIN_SAMPLES = 10
#: Windows shorter than this (s) are flagged (the checker fails them in submissions).
MIN_WINDOW_S = 10.0
#: The definitions a results file states beside its power windows.
DEFINITIONS = {
    "duration_s": "window length t1 - t0 on the host monotonic clock",
    "meter_samples": "meter readings with t0 <= t <= t1",
    "sample_rate_hz": "meter_samples / duration_s",
    "peak_power_w": "highest power of the meter trace inside the window (edges interpolated)",
    "min_window_s": MIN_WINDOW_S, "min_samples": MIN_SAMPLES,
}


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


def window_power(meter: PowerMeter, window: Window, timeline: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    """Energy (J), mean and peak power (W), duration (s), meter sample count and rate of one
    window (``timeline``: the meter's, read once by the caller); warns below
    :data:`MIN_SAMPLES` samples and flags that and windows shorter than :data:`MIN_WINDOW_S`."""
    energy = meter.energy(window.t0, window.t1)
    n = meter.samples_in(window.t0, window.t1)
    timeline = meter.timeline() if timeline is None else timeline
    out: dict[str, Any] = {"t0_s": window.t0, "t1_s": window.t1, "duration_s": window.duration_s,
                           "energy_j": energy, "mean_power_w": energy / window.duration_s,
                           "peak_power_w": peak_power(timeline, window.t0, window.t1),
                           "meter_samples": n, "sample_rate_hz": n / window.duration_s,
                           "flags": []}
    if n < MIN_SAMPLES:
        msg = (f"power window {window.name!r} holds only {n} meter samples (< {MIN_SAMPLES}); "
               "lengthen the window or raise the meter's sample rate")
        warnings.warn(msg, stacklevel=2)
        out["warning"] = msg
        out["flags"].append(msg)
    if window.duration_s < MIN_WINDOW_S:
        out["flags"].append(f"power window {window.name!r} lasts {window.duration_s:.3g} s "
                            f"(< {MIN_WINDOW_S:g} s): board capacitance biases short windows "
                            "(NeuroBench system rules)")
    return out


def analyse(meter: PowerMeter, floor: Window, active: list[Window],
            latency_s: dict[str, float] | None = None,
            inferences: dict[str, int] | None = None, *, idle: Window | None = None,
            latency_rule: str = "measured") -> dict[str, Any]:
    """Floor, total and dynamic power and energy per inference for each active window.

    ``latency_s[name]`` (the mean latency of that stage, or the data time under
    ``latency_rule="data_time"``) gives energy per inference = power × latency;
    ``inferences[name]`` (amortised mode) gives window energy / count instead. ``idle`` is
    the optional true idle (sleep) window. Returns ``{"floor", "active", "idle"?}`` with
    ``floor_power_w``, ``total_power_w``, ``dynamic_power_w``, ``floor_energy_per_inference_j``,
    ``total_energy_per_inference_j`` and ``dynamic_energy_per_inference_j`` per active window.
    """
    timeline = meter.timeline()
    out: dict[str, Any] = {"floor": window_power(meter, floor, timeline), "active": {},
                           "format": 3, "latency_rule": latency_rule, "definitions": DEFINITIONS}
    floor_w = out["floor"]["mean_power_w"]
    out["floor"]["floor_power_w"] = floor_w
    if idle is not None:
        out["idle"] = window_power(meter, idle, timeline)
    for win in active:
        stats = window_power(meter, win, timeline)
        total_w = stats["mean_power_w"]
        stats.update(total_power_w=total_w, floor_power_w=floor_w, dynamic_power_w=total_w - floor_w)
        if inferences and win.name in inferences:
            n = inferences[win.name]
            if n < 1:
                raise MetricError(f"window {win.name!r}: inference count must be >= 1, got {n}")
            per = win.duration_s / n  # seconds of the window per inference
            stats.update(inferences=n, mode="amortised", seconds_per_inference=per)
        elif latency_s and win.name in latency_s:
            per = latency_s[win.name]
            stats.update(latency_s=per, mode=("power x data time" if latency_rule == "data_time"
                                              else "power x mean latency"))
        else:
            out["active"][win.name] = stats
            continue
        stats["total_energy_per_inference_j"] = total_w * per
        stats["floor_energy_per_inference_j"] = floor_w * per
        stats["dynamic_energy_per_inference_j"] = (total_w - floor_w) * per
        out["active"][win.name] = stats
    return out
