"""Cochlea speed, memory and agreement: neuromark's vectorised model vs lauscher 1.0.1.

Both convert ``tests/data/reference/spoken_seven_espeak_48k.flac`` (our generated recording,
0.580 s, 48 kHz, see that folder's README) to spikes on
700 channels, each in a fresh subprocess (so that peak memory, ``ru_maxrss``, is measured
per tool), one after the other in this run. Prints wall-clock times, peak memory, the speed
ratio and the agreement (total spike count, per-channel count correlation, spike-time
histogram correlation).

- ours "cold": the basilar-membrane transfer matrix is computed (a first clip of a length);
  numba's compiled code comes from its on-disk cache, after one untimed warm-up run
  (as pytest-benchmark's warm-up rounds).
- ours "warm": same-length clips reuse the cached transfer matrix (the corpus case).
- lauscher runs unchanged with its own process pool; it takes minutes and ~5.6 GB.

Run: ``python bench/cochlea.py [--seed 1]`` (with a seed other than 0 it also prints the
agreement of two lauscher runs with different seeds: the noise floor). Add
``--cached-lauscher`` to skip running lauscher and use the time recorded in
tests/data/lauscher_spoken_seven_espeak_48k.npz instead; the output then says so).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
AUDIO = ROOT / "tests/data/reference/spoken_seven_espeak_48k.flac"
SAVED = ROOT / "tests/data/lauscher_spoken_seven_espeak_48k.npz"


def _ours(audio_path: str, seed: int) -> dict[str, object]:
    from neuromark.processors.cochlea.model import Cochlea, clear_cache, read_audio

    audio, rate = read_audio(audio_path)
    cochlea = Cochlea()
    cochlea(audio[: rate // 10], rate, seed=seed)  # warm-up: loads numba's cached machine code
    clear_cache()
    start, cpu = time.perf_counter(), time.process_time()  # process_time: all threads
    spikes = cochlea(audio, rate, seed=seed)
    cold, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
    start = time.perf_counter()
    cochlea(audio, rate, seed=seed + 1)
    warm = time.perf_counter() - start
    return {"cold_s": cold, "cold_cpu_s": cold_cpu, "warm_s": warm, "times": spikes.times.tolist(),
            "units": spikes.units.astype(int).tolist()}


def _lauscher(audio_path: str, seed: int) -> dict[str, object]:
    from lauscher.audiowaves import FileMonoAudioWave
    from lauscher.transformations.wave2spike import Wave2Spike

    np.random.seed(seed)
    start = time.perf_counter()
    spikes = FileMonoAudioWave(audio_path).transform(Wave2Spike(num_channels=700))
    seconds = time.perf_counter() - start
    return {"cold_s": seconds, "times": np.asarray(spikes.spike_times).tolist(),
            "units": np.asarray(spikes.spike_labels).astype(int).tolist()}


def _run_child(tool: str, seed: int) -> dict[str, object]:
    """Run one tool in a fresh process; adds its peak resident memory (MB) and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, __file__, "--child", tool, "--seed", str(seed)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{tool} failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # ru_maxrss of the children waited for so far is the max over them; run ours first.
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["peak_mb"] = after.ru_maxrss / 1024
    result["cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result


def agreement(ours: dict[str, object], ref_times: np.ndarray, ref_units: np.ndarray) -> dict[str, float]:
    units = np.asarray(ours["units"])
    times = np.asarray(ours["times"])
    a, b = np.bincount(units, minlength=700), np.bincount(ref_units, minlength=700)
    bins = np.arange(0.0, 0.81, 0.02)
    ha, hb = np.histogram(times, bins)[0], np.histogram(ref_times, bins)[0]
    return {"total_ours": int(a.sum()), "total_ref": int(b.sum()), "total_ratio": a.sum() / b.sum(),
            "channel_corr": float(np.corrcoef(a, b)[0, 1]),
            "time_hist_corr": float(np.corrcoef(ha, hb)[0, 1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cached-lauscher", action="store_true",
                        help="do not run lauscher; use the time and spikes saved in tests/data")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", choices=["ours", "lauscher"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        fn = _ours if args.child == "ours" else _lauscher
        print(json.dumps(fn(str(AUDIO), args.seed)))
        return

    from neuromark.provenance import machine_info

    print(f"machine: {json.dumps(machine_info())}")
    print(f"audio: {AUDIO.name}")
    ours = _run_child("ours", args.seed)
    if args.cached_lauscher:
        saved = np.load(SAVED)
        ref_s, ref_mb, ref_cpu = float(saved["seconds"]), float("nan"), float("nan")
        ref_times, ref_units = saved["sample"] / float(saved["sample_rate"]), saved["channel"].astype(int)
        source = f"CACHED lauscher timing from {SAVED.name} (recorded when it was made, not this run)"
    else:
        ref = _run_child("lauscher", args.seed)
        ref_s, ref_mb, ref_cpu = float(ref["cold_s"]), float(ref["peak_mb"]), float(ref["cpu_s"])
        ref_times, ref_units = np.asarray(ref["times"]), np.asarray(ref["units"])
        source = "lauscher run in this process tree, same run"
    print(f"{'':22s}{'wall s':>10s}{'peak MB':>10s}{'CPU s':>10s}")
    print(f"{'lauscher 1.0.1':22s}{ref_s:10.2f}{ref_mb:10.0f}{ref_cpu:10.1f}   ({source})")
    print(f"{'neuromark cold':22s}{ours['cold_s']:10.2f}{ours['peak_mb']:10.0f}{ours['cpu_s']:10.1f}"
          "   (CPU s: whole process incl. imports, warm-up and the warm run)")
    print(f"{'neuromark warm':22s}{ours['warm_s']:10.2f}{'':10s}   (cached transfer matrix)")
    print(f"speed ratio lauscher/neuromark: cold {ref_s / ours['cold_s']:.1f}x, "
          f"warm {ref_s / ours['warm_s']:.1f}x (target >= 50x); peak memory target < 1024 MB")
    print(f"CPU-time ratio (robust to other load on the machine): lauscher whole process vs "
          f"neuromark cold conversion ({ours['cold_cpu_s']:.2f} CPU s) {ref_cpu / ours['cold_cpu_s']:.1f}x; "
          f"vs neuromark whole process {ref_cpu / ours['cpu_s']:.1f}x")
    metrics = agreement(ours, ref_times, ref_units)
    print("agreement neuromark vs lauscher: " + json.dumps({k: round(v, 4) for k, v in metrics.items()}))
    if not args.cached_lauscher:
        saved = np.load(SAVED)
        floor = agreement({"times": ref_times, "units": ref_units},
                          saved["sample"] / float(saved["sample_rate"]), saved["channel"].astype(int))
        print(f"noise floor, lauscher (seed {args.seed}) vs the saved lauscher run (seed 0): "
              + json.dumps({k: round(v, 4) for k, v in floor.items()}))


if __name__ == "__main__":
    main()
