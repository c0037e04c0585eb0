"""The system task's power windows (NeuroBench protocol), driven on a running meter.

:func:`measure_windows` runs the floor window (configured and ready, nothing processed),
optionally a true idle (sleep) window, then active windows for pre-processing and inference
(or one separate stream run in amortised mode, or for a SUT without stages);
:func:`crop_timeline` keeps the trace around the windows for the results file and plots.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from neuromark.system.sut import InMemoryLibrary, StagedSUT
from neuromark.system.timing import now_s


def measure_windows(meter: Any, sut: Any, library: InMemoryLibrary, *, floor_s: float,
                    active_s: float, amortised: bool, sleep_s: float | None = None
                    ) -> tuple[dict[str, tuple[float, float]], dict[str, int]]:
    """``(windows, counts)``: each window's ``(t0, t1)`` on the meter's clock and the
    inference count of stream windows. The meter is already running.

    The floor window runs with the samples loaded and the SUT built and warm (configured
    and prepared to begin processing). With ``sleep_s`` an ``idle`` window follows with the
    SUT asleep: its ``sleep()`` hook is called before and ``wake()`` after, when it has them
    (otherwise the host is only left idle; the caller flags that)."""
    indices = list(range(library.performance_count))
    library.load(indices)
    windows: dict[str, tuple[float, float]] = {}
    counts: dict[str, int] = {}
    a = meter.mark("floor_start")
    time.sleep(floor_s)
    windows["floor"] = (a, meter.mark("floor_end"))
    if sleep_s is not None:
        if hasattr(sut, "sleep"):
            sut.sleep()
        a = meter.mark("idle_start")
        time.sleep(sleep_s)
        windows["idle"] = (a, meter.mark("idle_end"))
        if hasattr(sut, "wake"):
            sut.wake()
    if amortised or not isinstance(sut, StagedSUT):
        a, n = meter.mark("stream_start"), 0
        while now_s() - a < active_s:
            sut.issue([indices[n % len(indices)]])
            n += 1
        windows["stream"] = (a, meter.mark("stream_end"))
        counts["stream"] = n
    else:
        a, n, feats = meter.mark("preprocess_start"), 0, []
        while now_s() - a < active_s:
            feats.append(sut.preprocess(library.get(indices[n % len(indices)])))
            n += 1
            if len(feats) > len(indices):
                feats.pop(0)
        windows["preprocess"] = (a, meter.mark("preprocess_end"))
        a, n = meter.mark("inference_start"), 0
        while now_s() - a < active_s:
            sut.infer(feats[n % len(feats)])
            n += 1
        windows["inference"] = (a, meter.mark("inference_end"))
    library.unload(indices)
    return windows, counts


def crop_timeline(timeline: dict[str, Any], t0: float, t1: float, max_points: int = 20000
                  ) -> dict[str, Any]:
    """The trace within ``[t0, t1]`` for the results file and plots, thinned by a stride to
    at most ``max_points`` (energies are computed on the full trace before this)."""
    t = np.asarray(timeline["t_s"], dtype=np.float64)
    p = np.asarray(timeline["power_w"], dtype=np.float64)
    keep = (t >= t0) & (t <= t1)
    t, p = t[keep], p[keep]
    stride = max(1, -(-t.size // max_points))
    return {"t_s": t[::stride].tolist(), "power_w": p[::stride].tolist(),
            "marks": timeline.get("marks", []), "stride": stride}
