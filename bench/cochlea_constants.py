"""The cochlea's two constant sets against lauscher 1.0.1's saved spikes.

Converts ``tests/data/reference/spoken_seven_espeak_48k.flac`` (our recording, 0.580 s,
48 kHz) with ``constants("lauscher")`` (the default) and ``constants("paper")`` (Table II
of Cramer et al. 2022, see ``neuromark/processors/cochlea/params.py``), seeds 0 and 1, and
prints, per set and seed, the spike count and the agreement with lauscher's spikes saved in
``tests/data/lauscher_spoken_seven_espeak_48k.npz`` (lauscher seeded with 0): total ratio,
per-channel count correlation, 20-ms spike-time histogram correlation. Also Table II's
bushy weight as printed (0.54 / N_HC per fibre: 0.54 in all), to show it gives no spike.

Run: ``python bench/cochlea_constants.py`` (about 30 s).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from neuromark.processors.cochlea.model import Cochlea, read_audio
from neuromark.processors.cochlea.params import constants

ROOT = Path(__file__).resolve().parents[1]
AUDIO = ROOT / "tests/data/reference/spoken_seven_espeak_48k.flac"
SAVED = ROOT / "tests/data/lauscher_spoken_seven_espeak_48k.npz"


def agreement(times: np.ndarray, units: np.ndarray, ref_times: np.ndarray,
              ref_units: np.ndarray) -> dict[str, float]:
    """Total ratio, per-channel count and 20-ms time-histogram correlations (700 channels)."""
    ours, ref = np.bincount(units, minlength=700), np.bincount(ref_units, minlength=700)
    bins = np.arange(0.0, 0.81, 0.02)
    return {"total_ratio": float(ours.sum() / ref.sum()),
            "channel_corr": float(np.corrcoef(ours, ref)[0, 1]),
            "time_hist_corr": float(np.corrcoef(np.histogram(times, bins)[0],
                                                np.histogram(ref_times, bins)[0])[0, 1])}


def main() -> None:
    saved = np.load(SAVED)
    ref_times, ref_units = saved["sample"] / float(saved["sample_rate"]), saved["channel"]
    audio, rate = read_audio(AUDIO)
    print(f"lauscher 1.0.1 (seed 0): {ref_units.size} spikes")
    paper = constants("paper")
    sets = {"lauscher": constants("lauscher"), "paper": paper,
            "paper, bushy weight 0.54 as printed": replace(
                paper, bushy_cell=replace(paper.bushy_cell, weight=0.54))}
    for name, params in sets.items():
        for seed in (0, 1):
            spikes = Cochlea(params=params)(audio, rate, seed=seed)
            if spikes.units.size < 2:
                print(f"{name:38s} seed {seed}: {spikes.units.size} spikes")
                continue
            m = agreement(spikes.times, spikes.units, ref_times, ref_units)
            print(f"{name:38s} seed {seed}: {spikes.units.size} spikes, total ratio "
                  f"{m['total_ratio']:.3f}, channel corr {m['channel_corr']:.3f}, "
                  f"time-histogram corr {m['time_hist_corr']:.3f}")


if __name__ == "__main__":
    main()
