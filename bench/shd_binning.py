"""Binning speed: neuromark's SHD reader + BinSpikes vs ``tonic.datasets.SHD`` + ``ToFrame``.

Writes 2,000 synthetic samples in the real SHD layout (float16 seconds, uint16 units,
700 channels, spike counts like SHD's), bins them into (T, 700) counts with both, checks
that every count is identical, and prints the times and the ratio side by side.

Run: ``python bench/shd_binning.py [--samples 2000] [--dt-us 10000] [--repeats 3]``
(needs the ``events`` extra: ``pip install 'neuromark[events]'``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from neuromark.data.hdf5_spikes import read_shd_file, write_shd_file
from neuromark.errors import require
from neuromark.processors.spike_transforms import BinSpikes
from neuromark.provenance import machine_info, package_versions


def make_dataset(folder: Path, n: int, seed: int = 0) -> Path:
    """``folder/SHD/shd_train.h5`` with ``n`` samples of 1,000-12,000 spikes in [0, 1) s."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1000, 12_000, n)
    times = [np.sort(rng.uniform(0.0, 0.999, c)) for c in counts]
    units = [rng.integers(0, 700, c) for c in counts]
    path = write_shd_file(folder / "SHD" / "shd_train.h5", times, units, rng.integers(0, 20, n),
                          rng.integers(0, 12, n), [f"class{i}" for i in range(20)])
    (folder / "SHD" / "shd_train.h5.zip").write_bytes(b"")  # tonic only checks that it exists
    return path


def ours(path: Path, dt_us: int, t_max_us: int) -> np.ndarray:
    return BinSpikes(dt_us, t_max_us, 700, np.int16).bin_samples(read_shd_file(path))


def tonic_frames(folder: Path, dt_us: int, t_max_us: int) -> list[np.ndarray]:
    tonic = require("tonic", "events")
    to_frame = tonic.transforms.ToFrame(sensor_size=(700, 1, 1), time_window=dt_us, start_time=0,
                                        end_time=t_max_us)
    dataset = tonic.datasets.SHD(str(folder), train=True, transform=to_frame)
    return [dataset[i][0][:, 0, :] for i in range(len(dataset))]


def timed(fn, repeats: int) -> tuple[list[float], object]:
    out = None
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return times, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--dt-us", type=int, default=10_000)
    parser.add_argument("--t-max-us", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = make_dataset(folder, args.samples)
        ours(path, args.dt_us, args.t_max_us)  # warm-up (page cache, imports)
        t_ours: list[float] = []
        t_tonic: list[float] = []
        for _ in range(args.repeats):  # interleaved, so that machine load hits both alike
            more, frames = timed(lambda: ours(path, args.dt_us, args.t_max_us), 1)
            t_ours += more
            more, theirs = timed(lambda: tonic_frames(folder, args.dt_us, args.t_max_us), 1)
            t_tonic += more
        assert isinstance(frames, np.ndarray) and isinstance(theirs, list)
        mismatched = [i for i, f in enumerate(theirs) if not np.array_equal(frames[i], f)]
        total = int(frames.sum(dtype=np.int64))
    versions = package_versions(("numpy", "h5py", "tonic"))
    print(f"machine: {machine_info()['cpu']} ({machine_info()['cores']} cores); {versions}")
    print(f"{args.samples} samples, {total} spikes, frames {frames.shape} int16, dt={args.dt_us} us")
    print(f"{'':10s} {'median s':>10s} {'min s':>10s}  runs")
    for name, t in (("neuromark", t_ours), ("tonic", t_tonic)):
        print(f"{name:10s} {statistics.median(t):10.3f} {min(t):10.3f}  {len(t)}")
    print(f"identical counts: {not mismatched} ({len(mismatched)} of {len(theirs)} samples differ)")
    ratio = statistics.median(t_tonic) / statistics.median(t_ours)
    best = min(t_tonic) / min(t_ours)
    print(f"speed-up (tonic / neuromark): {ratio:.1f}x on medians, {best:.1f}x on minima")


if __name__ == "__main__":
    main()
