"""The null meter: energy is "not measured", with the reason, never 0 W."""

from __future__ import annotations

from typing import Any

from neuromark.errors import MetricError
from neuromark.system.timing import now_s


class NullMeter:
    """No power instrument. ``energy`` raises; results report "not measured" and ``reason``."""

    name = "null"
    measured = False
    point: str | None = None

    def __init__(self, reason: str = "no power meter configured") -> None:
        self.reason = reason
        self.marks: list[tuple[str, float]] = []

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def mark(self, label: str) -> float:
        t = now_s()
        self.marks.append((label, t))
        return t

    def energy(self, t0: float, t1: float) -> float:
        raise MetricError(f"energy not measured: {self.reason}")

    def samples_in(self, t0: float, t1: float) -> int:
        return 0

    def timeline(self) -> dict[str, Any]:
        return {"t_s": [], "power_w": [], "marks": self.marks}

    def metadata(self) -> dict[str, Any]:
        return {"name": self.name, "measured": False, "reason": self.reason,
                "sample_rate_hz": None, "components": [], "point": self.point}
