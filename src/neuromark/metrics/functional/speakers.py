"""Accuracy per speaker, and held-out vs seen speakers: the speaker analysis of Cramer et al.
(2020), Sec. V-B (SHD's test split holds two speakers absent from its training split).

Pure numpy over per-sample results; sufficient statistics are (correct, total) counts per
speaker, so batches can be added in any order. "Held out" means absent from the training
file (``seen`` = the speaker ids of the training file).

Example:
    >>> r = speaker_accuracy([1, 0, 1, 1], [7, 7, 8, 9], seen=[9])
    >>> r.per_speaker
    {7: (1, 2), 8: (1, 1), 9: (1, 1)}
    >>> r.held_out, r.seen
    ((2, 3), (1, 1))
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class SpeakerAccuracy:
    """Counts of one speaker analysis.

    Attributes:
        per_speaker: speaker id -> (correct, total), ids in increasing order.
        held_out: (correct, total) over speakers not in ``seen``; None when ``seen`` is unknown.
        seen: (correct, total) over speakers in ``seen``; None when ``seen`` is unknown.
    """

    per_speaker: dict[int, tuple[int, int]]
    held_out: tuple[int, int] | None
    seen: tuple[int, int] | None

    def accuracies(self) -> dict[int, float]:
        """Speaker id -> accuracy (fraction)."""
        return {k: c / n for k, (c, n) in self.per_speaker.items()}

    def spread(self) -> dict[str, float]:
        """Across speakers (each speaker one value): mean, sample std (ddof 1; 0 for one
        speaker), min, max of the per-speaker accuracies, and their number."""
        acc = np.array(list(self.accuracies().values()), dtype=np.float64)
        return {"mean": float(acc.mean()), "std": float(acc.std(ddof=1)) if acc.size > 1 else 0.0,
                "min": float(acc.min()), "max": float(acc.max()), "speakers": int(acc.size)}


def count_correct(correct: Any, speakers: Any) -> dict[int, tuple[int, int]]:
    """Speaker id -> (correct, total) from per-sample 0/1 results and speaker ids, (N,) each."""
    hits = np.asarray(correct).reshape(-1)
    ids = np.asarray(speakers).reshape(-1)
    if hits.shape != ids.shape:
        raise ValueError(f"{hits.size} per-sample results but {ids.size} speaker ids")
    if hits.size and not np.isin(hits, (0, 1)).all():
        raise ValueError("per-sample results must be 0/1 (or bool)")
    if ids.size and not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"speaker ids must be integers, got {ids.dtype}")
    out = {}
    for speaker in np.unique(ids):
        mask = ids == speaker
        out[int(speaker)] = (int(hits[mask].sum()), int(mask.sum()))
    return out


def speaker_accuracy(correct: Any, speakers: Any, seen: Iterable[int] | None = None
                     ) -> SpeakerAccuracy:
    """Per-speaker accuracy and, when the training speakers ``seen`` are known, the
    accuracy over held-out vs seen speakers (each pooled over its samples).

    Args:
        correct: (N,) 1 where the prediction equals the target, else 0.
        speakers: (N,) integer speaker id of each sample.
        seen: speaker ids of the training file, or None (unknown).
    """
    per = count_correct(correct, speakers)
    if not per:
        raise ValueError("no samples")
    if seen is None:
        return SpeakerAccuracy(per, None, None)
    known = {int(s) for s in seen}

    def pool(keep: bool) -> tuple[int, int]:
        parts = [v for k, v in per.items() if (k in known) == keep]
        return sum(c for c, _ in parts), sum(n for _, n in parts)

    return SpeakerAccuracy(per, pool(False), pool(True))


def binomial_error(correct: int, total: int) -> float | None:
    """Standard error over samples of an accuracy c/n: sqrt(p (1 - p) / (n - 1)) (the
    sample-std convention of :func:`~neuromark.metrics.functional.stats.standard_error`);
    None for fewer than two samples."""
    if total < 2:
        return None
    p = correct / total
    return math.sqrt(p * (1.0 - p) / (total - 1))
