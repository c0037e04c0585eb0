"""Reach-direction PSTHs from a primate-reaching session (research notes §6 proposal).

- Reaches: NeuroBench's target-change segments, the first dropped and any longer than
  ``max_reach_s`` (4 s); onset = the first sample showing the new target.
- Condition: direction of (new target - previous target) in 8 sectors of 45° centred on
  0°, 45°, ..., 315°.
- Alignment: ``bins`` bins of ``bin_steps`` 4-ms samples from onset (default 30 x 5 =
  0-600 ms); a reach whose window runs past the recording is dropped.
- Repetitions: the smallest count over the sectors, a seeded random subset of each
  sector's reaches (counts and the subset recorded).

Activity arrays are per 4-ms sample (K, U): the binned occupancy of the reader (whose
sample k covers ``[t[k-2], t[k-1])``, so its window starts two samples later: ``offset=2``),
or any model's units (``offset=0``). The aligned result is (repetitions, 8 * bins, U), conditions ordered
sector-major.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SECTORS = 8


@dataclass(frozen=True)
class ReachConditions:
    """Selected reaches: ``onsets`` (8, m) sample indices, per sector, and bookkeeping."""

    onsets: np.ndarray
    counts: list[int]          # reaches per sector before subsetting
    dropped: dict[str, int] = field(default_factory=dict)
    seed: int = 0

    @property
    def repetitions(self) -> int:
        return int(self.onsets.shape[1])


def sector_of(dx: float, dy: float) -> int:
    """Sector 0-7 of a direction (sector s is centred on s * 45°)."""
    angle = np.arctan2(dy, dx) % (2 * np.pi)
    return int(((angle + np.pi / SECTORS) // (2 * np.pi / SECTORS)) % SECTORS)


def select_reaches(target: np.ndarray, segments: list[tuple[int, int]], *, bins: int = 30,
                   bin_steps: int = 5, max_reach_s: float = 4.0, seed: int = 0,
                   min_repetitions: int = 2) -> ReachConditions:
    """The reaches of each sector, equalised to the smallest count with a seeded subset."""
    k = len(target)
    window = bins * bin_steps
    per_sector: list[list[int]] = [[] for _ in range(SECTORS)]
    dropped = {"first": 1, "too_long": 0, "past_end": 0, "no_move": 0}
    for a, b in segments[1:]:  # a: the last sample of the previous target (NeuroBench's cut)
        onset = min(a + 1, k - 1)
        if (b - a) * 0.004 > max_reach_s:
            dropped["too_long"] += 1
            continue
        if onset + 1 + window > k:
            dropped["past_end"] += 1
            continue
        move = target[onset] - target[a]
        if not np.any(move):
            dropped["no_move"] += 1
            continue
        per_sector[sector_of(*move)].append(onset)
    counts = [len(s) for s in per_sector]
    m = min(counts)
    if m < min_repetitions:
        raise ValueError(f"a direction sector has only {m} reaches (counts per sector {counts}); "
                         f"at least {min_repetitions} are needed")
    rng = np.random.default_rng(seed)
    onsets = np.stack([np.sort(rng.choice(np.asarray(s), m, replace=False)) for s in per_sector])
    return ReachConditions(onsets, counts, dropped, seed)


def align(activity: np.ndarray, reaches: ReachConditions, *, bins: int = 30, bin_steps: int = 5,
          offset: int = 0) -> np.ndarray:
    """(repetitions, 8 * bins, U) mean activity per bin after each onset (+ ``offset``
    samples: 2 for the reader's occupancy, 0 for model units computed at the sample)."""
    act = np.asarray(activity, dtype=np.float64)
    m = reaches.repetitions
    steps = np.arange(bins * bin_steps)
    out = np.empty((m, SECTORS * bins, act.shape[1]))
    for s in range(SECTORS):
        for r, onset in enumerate(reaches.onsets[s]):
            window = act[onset + offset + steps]
            out[r, s * bins:(s + 1) * bins] = window.reshape(bins, bin_steps, -1).mean(1)
    return out
