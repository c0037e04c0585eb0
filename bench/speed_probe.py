"""How fast is this machine right now? A fixed CPU workload timed over and over on a CPU
the measured process does not use, to read latency comparisons against.

On a shared VM the host's other tenants change the speed of our virtual CPUs: a fixed
numpy workload (50 rounds of a 64 x 64 float32 product and tanh, ~1 ms) has shown 4-s
medians from 0.98 to 1.75 ms here. When two LoadGen runs are compared with a 5-10 %
tolerance (MLPerf's compliance tests), the probe's median over each run's window says how
much of the difference the machine itself made -- where the slow-downs hit every CPU
alike. On the 2-vCPU development VM they do not: run on both vCPUs at once, one vCPU's
4-s medians went to 1.6-1.75 ms for 16 s while the other's stayed at 1.0 ms (2026-11-23),
so a probe on another CPU cannot see the SUT's CPU slow down; run it alone on the SUT's
CPU, before or after, to see how steady that CPU is.

    probe = SpeedProbe(cpu=0, path=Path("probe.txt")); probe.start()
    ...  # runs pinned to other CPUs
    probe.stop(); median_us(probe.timings(), t_begin, t_end)   # epoch seconds

Run alone (``python bench/speed_probe.py [--seconds 32] [--cpu 1]``) it prints the median
of each 4-s window.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np

WINDOW_S = 4.0


def workload(a: np.ndarray) -> np.ndarray:
    """The fixed work: 50 rounds of ``tanh(x @ a)`` on a 64 x 64 float32 matrix."""
    x = a
    for _ in range(50):
        x = np.tanh(x @ a)
    return x


def warmed(cpu: int | None) -> np.ndarray:
    """Pin this process to ``cpu`` (when given) and return the workload's matrix after 100
    untimed rounds."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    a = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    for _ in range(100):
        workload(a)
    return a


def probe_loop(path: Path, cpu: int | None) -> None:
    """Time :func:`workload` forever; append ``epoch_s duration_ns`` lines to ``path``."""
    a = warmed(cpu)
    with open(path, "a", buffering=1 << 16) as out:
        last_flush = time.time()
        while True:
            t0 = time.perf_counter_ns()
            workload(a)
            now = time.time()
            out.write(f"{now:.6f} {time.perf_counter_ns() - t0}\n")
            if now - last_flush > 1.0:
                out.flush()
                last_flush = now


class SpeedProbe:
    """:func:`probe_loop` in a subprocess pinned to ``cpu``, writing to ``path``."""

    def __init__(self, cpu: int, path: Path) -> None:
        self.cpu, self.path = cpu, path
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.path.unlink(missing_ok=True)
        self.proc = subprocess.Popen([sys.executable, __file__, "--loop", str(self.path),
                                      "--cpu", str(self.cpu)])
        time.sleep(1.0)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def timings(self) -> np.ndarray:
        """(n, 2) rows written so far: epoch seconds, workload time (ns)."""
        return np.loadtxt(self.path, ndmin=2) if self.path.stat().st_size else np.zeros((0, 2))


def median_us(rows: np.ndarray, begin: float, end: float) -> float:
    """Median workload time (µs) of probe ``rows`` between two epoch times; NaN when none
    fell there."""
    inside = rows[(rows[:, 0] >= begin) & (rows[:, 0] <= end), 1]
    return float(np.median(inside) / 1e3) if len(inside) else float("nan")


def loadgen_window(detail_values: dict) -> tuple[float, float]:
    """Epoch seconds of a LoadGen run's ``power_begin`` and ``power_end`` (local time,
    ``MM-DD-YYYY HH:MM:SS.mmm``)."""
    fmt = "%m-%d-%Y %H:%M:%S.%f"
    return tuple(datetime.strptime(detail_values[k], fmt).timestamp()  # type: ignore[return-value]
                 for k in ("power_begin", "power_end"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=32.0)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--loop", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loop is not None:
        probe_loop(args.loop, args.cpu)
        return
    a = warmed(args.cpu)
    for window in range(int(args.seconds / WINDOW_S)):
        end, times = time.perf_counter() + WINDOW_S, []
        while time.perf_counter() < end:
            t0 = time.perf_counter_ns()
            workload(a)
            times.append(time.perf_counter_ns() - t0)
        print(f"window {window}: median {np.median(times) / 1e3:.0f} µs, "
              f"p90 {np.percentile(times, 90) / 1e3:.0f} µs ({len(times)} runs)", flush=True)


if __name__ == "__main__":
    main()
