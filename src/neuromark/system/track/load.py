"""What else ran on the machine during a system run (issue 57.6).

The same SUT gave a p90 of 4.1 ms alone and 13.7 ms on a loaded machine, and nothing in
the results said so. :class:`LoadMonitor` records, around the timed runs, the load average
(``os.getloadavg``: runnable processes averaged over 1, 5 and 15 min) before, sampled
during (every ``interval_s``) and after, and this process's CPU time (user + system,
``resource.getrusage``, all threads) against the wall time. The load the run did not
cause is estimated as the 1-min load average minus this process's mean CPU share
(``cpu_time / wall``); latency figures taken while that exceeds :data:`BUSY_SHARE` of the
logical cores are flagged "taken on a busy machine". The 1-min average lags (an
exponential average with a 1-min constant), so the larger of the value before and the
mean during the run is used.
"""

from __future__ import annotations

import os
import resource
import threading
import time
from typing import Any

#: Other load, as a share of the logical cores, above which latencies are flagged.
BUSY_SHARE = 0.5


def _cpu_s() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 3) for x in os.getloadavg()]
    except OSError:  # not available on this platform
        return None


class LoadMonitor:
    """Context manager: ``with LoadMonitor() as load: ...`` then ``load.record()``."""

    def __init__(self, interval_s: float = 0.5) -> None:
        self.interval_s = interval_s
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LoadMonitor:
        self.before = _loadavg()
        self.cpu0, self.wall0 = _cpu_s(), time.perf_counter()
        self._thread = threading.Thread(target=self._sample, daemon=True, name="load-monitor")
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            now = _loadavg()
            if now is not None:
                self.samples.append(now[0])

    def __exit__(self, *exc: Any) -> None:
        self.cpu_s, self.wall_s = _cpu_s() - self.cpu0, time.perf_counter() - self.wall0
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.after = _loadavg()

    def record(self) -> dict[str, Any]:
        """``details.load``: the load averages, CPU time and wall time, the estimated other
        load and whether the machine was busy (``busy``; None where the platform gives no
        load average)."""
        cores = os.cpu_count() or 1
        share = self.cpu_s / self.wall_s if self.wall_s > 0 else 0.0
        during = {"samples": len(self.samples),
                  "mean_1min": round(sum(self.samples) / len(self.samples), 3) if self.samples else None,
                  "max_1min": max(self.samples) if self.samples else None}
        seen = [x for x in (self.before[0] if self.before else None, during["mean_1min"])
                if x is not None]
        other = round(max(0.0, max(seen) - share), 3) if seen else None
        busy = None if other is None else other > BUSY_SHARE * cores
        return {"load_average_before": self.before, "load_average_during": during,
                "load_average_after": self.after, "cpu_time_s": round(self.cpu_s, 4),
                "wall_s": round(self.wall_s, 4), "cpu_share": round(share, 4),
                "logical_cores": cores, "other_load": other, "busy": busy,
                "rule": f"busy when the 1-min load average (the larger of before and the mean "
                        f"during) minus this process's CPU share exceeds {BUSY_SHARE:g} x "
                        f"{cores} logical cores"}

    def flag(self) -> str | None:
        """The results' flag for latencies taken on a busy machine (None when not busy)."""
        rec = self.record()
        if not rec["busy"]:
            return None
        during = rec["load_average_during"]["mean_1min"]
        return (f"latency taken on a busy machine: load average {rec['load_average_before']} "
                f"before" + (f", mean 1-min {during} during" if during is not None else "")
                + ", on "
                f"{rec['logical_cores']} logical cores; other processes ~{rec['other_load']:g} "
                f"runnable (this run used {rec['cpu_share']:.2f} CPU); latencies may be inflated")
