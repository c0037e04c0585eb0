"""Primate reaching's ``on_invalid: drop``
(:func:`~neuromark.benchmarks.primate_reaching.reader.read_session`):
which samples go, and how reaches and counts follow. A dropped sample's rule is an index
into :data:`SAMPLE_RULES` (plus one; 0 = kept)."""

from __future__ import annotations

import numpy as np

#: Rules of a dropped sample, in the order of their codes 1, 2, 3.
SAMPLE_RULES = ("finite cursor", "finite target", "finite velocity")


def carried(target: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """(2, K) ``target`` with the ``bad`` samples' values carried from the sample before
    (the first valid one at the start), so dropped targets cut no reach."""
    good = np.flatnonzero(~bad)
    if not good.size:
        return target
    src = good[np.clip(np.searchsorted(good, np.arange(target.shape[1]), "right") - 1, 0, None)]
    return target[:, src]


def cut_segments(segments: list[tuple[int, int]], dropped: np.ndarray | None) -> list[tuple[int, int]]:
    """``segments`` without the samples where ``dropped`` is non-zero (each cut into its
    runs of kept samples)."""
    if dropped is None:
        return segments
    out = []
    for a, b in segments:
        keep = np.concatenate([[False], dropped[a:b] == 0, [False]])
        edges = np.flatnonzero(np.diff(keep.astype(np.int8)))
        out += [(a + int(lo), a + int(hi)) for lo, hi in zip(edges[::2], edges[1::2])]
    return out


def split_counts(reaches: list[tuple[int, int]], dropped: np.ndarray | None,
                 dropped_spikes: int = 0) -> dict[str, int]:
    """Dropped samples per rule within ``reaches`` (a split's), and the session's dropped
    spike times."""
    counts = {"finite spike times": dropped_spikes} if dropped_spikes else {}
    if dropped is not None and reaches:
        why = np.concatenate([dropped[a:b] for a, b in reaches])
        found = np.bincount(why, minlength=len(SAMPLE_RULES) + 1)[1:]
        counts.update({rule: int(n) for rule, n in zip(SAMPLE_RULES, found) if n})
    return counts
