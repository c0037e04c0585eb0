"""Prophesee ``.dat`` reading: expelliarmus vs the numpy memory-map reader, same file.

Writes a seeded file of ``--events`` events (1280x720, 60 s), reads it whole with both
backends (interleaved rounds, median seconds), checks the arrays are equal, and times a
windowed read (50 ms at 30 s) on the memory map.

Run: ``python bench/prophesee_read.py [--events 10000000] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from neuromark.data.event_dtypes import make_camera_events
from neuromark.data.prophesee import read_dat, write_dat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = args.events
    ev = make_camera_events(np.sort(rng.integers(0, 60_000_000, n)), rng.integers(0, 1280, n),
                            rng.integers(0, 720, n), rng.integers(0, 2, n))
    with tempfile.TemporaryDirectory() as tmp:
        path = write_dat(Path(tmp) / "bench_td.dat", ev, width=1280, height=720)
        times: dict[str, list[float]] = {"numpy": [], "expelliarmus": [], "window_50ms": []}
        for _ in range(args.rounds):
            for backend in ("numpy", "expelliarmus"):
                start = time.perf_counter()
                got = read_dat(path, backend=backend)
                times[backend].append(time.perf_counter() - start)
                assert np.array_equal(got, ev), backend
            start = time.perf_counter()
            read_dat(path, start_us=30_000_000, end_us=30_050_000, backend="numpy")
            times["window_50ms"].append(time.perf_counter() - start)
    for name, values in times.items():
        print(f"{name:14s} median {statistics.median(values):.4f} s over {len(values)} rounds ({n} events)")
    ratio = statistics.median(times["numpy"]) / statistics.median(times["expelliarmus"])
    print(f"numpy / expelliarmus: {ratio:.2f}")


if __name__ == "__main__":
    main()
