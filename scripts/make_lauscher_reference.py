"""Run lauscher 1.0.1 once on an audio file and save its spikes as a small reference file.

Usage (takes ~4 minutes and up to ~5.6 GB of memory on a 2-core machine)::

    python scripts/make_lauscher_reference.py tests/data/reference/spoken_seven_espeak_48k.flac \
        tests/data/lauscher_spoken_seven_espeak_48k.npz

The output ``.npz`` holds ``sample`` (int32, spike time as a sample index of the
cochlea output rate), ``channel`` (uint16, 0-699), ``sample_rate`` (Hz of the cochlea
output: half the audio rate, as lauscher computes it), ``seconds`` (wall-clock time of
the lauscher run) and ``lauscher_version``. lauscher's stochastic stage draws from
numpy's global generator, which is seeded with ``--seed`` (default 0) here.
"""

from __future__ import annotations

import argparse
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("audio", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--channels", type=int, default=700)
    args = parser.parse_args()

    from lauscher.audiowaves import FileMonoAudioWave
    from lauscher.transformations.wave2spike import Wave2Spike

    np.random.seed(args.seed)
    t0 = time.perf_counter()
    wave = FileMonoAudioWave(str(args.audio))
    spikes = wave.transform(Wave2Spike(num_channels=args.channels))
    seconds = time.perf_counter() - t0
    rate = wave.sample_rate // 2
    sample = np.rint(np.asarray(spikes.spike_times) * rate).astype(np.int32)
    channel = np.asarray(spikes.spike_labels).astype(np.uint16)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        sample=sample,
        channel=channel,
        sample_rate=np.int64(rate),
        seconds=np.float64(seconds),
        lauscher_version=np.str_(version("lauscher")),
    )
    print(f"{len(sample)} spikes in {seconds:.1f} s -> {args.out}")


if __name__ == "__main__":
    main()
