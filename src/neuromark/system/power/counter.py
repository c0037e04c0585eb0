"""A meter that polls cumulative energy counters in a background thread (RAPL, NVML)."""

from __future__ import annotations

from typing import Any

import numpy as np

from neuromark.system.power.polling import PollingMeter
from neuromark.system.power.protocol import count_samples, counter_energy
from neuromark.system.timing import now_s


class CounterMeter(PollingMeter):
    """Base class: subclasses implement ``read_j() -> {domain: cumulative J}`` (unwrapped)
    and set ``name``, ``domains`` and ``components``. Samples at ``interval_s`` plus at
    ``start``, ``stop`` and every ``mark``."""

    name = "counter"
    measured = True
    #: Where the meter measures (``neuromark.system.power.spec.POINTS``); a config's
    #: ``meter.point`` overrides it.
    point: str | None = None
    domains: list[str]
    components: list[str]

    def __init__(self, interval_s: float = 0.01) -> None:
        super().__init__(interval_s)
        self.t: list[float] = []
        self.e: list[dict[str, float]] = []

    def read_j(self) -> dict[str, float]:
        raise NotImplementedError

    def _poll_once(self) -> float:
        with self._lock:
            values = self.read_j()
            t = now_s()
            self.t.append(t)
            self.e.append(values)
        return t

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            t = np.asarray(self.t)
            e = np.asarray([sum(v.values()) for v in self.e])
        return t, e

    def energy(self, t0: float, t1: float) -> float:
        """Energy (J) summed over domains in ``[t0, t1]`` (monotonic-clock seconds)."""
        t, e = self._arrays()
        return counter_energy(t, e, t0, t1, f"{self.name} meter")

    def samples_in(self, t0: float, t1: float) -> int:
        return count_samples(np.asarray(self.t), t0, t1)

    def timeline(self) -> dict[str, Any]:
        """Times (s) and mean power (W) between consecutive samples (at interval midpoints)."""
        t, e = self._arrays()
        if t.size < 2:
            return {"t_s": [], "power_w": [], "marks": self.marks}
        dt = np.diff(t)
        ok = dt > 0
        mid = (0.5 * (t[1:] + t[:-1]))[ok]
        return {"t_s": mid.tolist(), "power_w": (np.diff(e)[ok] / dt[ok]).tolist(), "marks": self.marks}

    def metadata(self) -> dict[str, Any]:
        return {"name": self.name, "measured": True, "reason": "", "domains": self.domains,
                "point": self.point,
                "components": self.components, "sample_rate_hz": 1.0 / self.interval_s}
