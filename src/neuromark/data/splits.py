"""Subject-wise splits of windowed recordings or trials: no subject in two splits.

A split that draws windows (or trials) at random puts the neighbouring windows of every
test window (the same person, the same recording, seconds apart) into training, so its
accuracy measures recognising a seen recording, not a new wearer; a subject-wise split
measures the latter. Subjects are given as lists, or split 60/20/20 by a seeded
permutation of the subjects present.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from neuromark.errors import DataError

SPLITS = ("train", "valid", "test")


def subject_split(subjects: np.ndarray, seed: int = 0,
                  lists: Mapping[str, Sequence[int]] | None = None, *,
                  source: str = "") -> dict[str, np.ndarray]:
    """Window indices per split with no subject in two splits.

    Args:
        subjects: (n,) subject id of each window.
        seed: permutation of the subjects present (60/20/20 by subject) when no ``lists``.
        lists: ``{"train": [...], "valid": [...], "test": [...]}`` subject ids.
        source: the data, for error messages.
    Raises DataError for a subject in two lists, a listed subject without windows, or an
    empty split.
    """
    present = np.unique(subjects)
    if lists is None:
        order = np.random.default_rng(seed).permutation(present)
        n_test = n_valid = max(1, round(0.2 * len(order)))
        if len(order) < 3:
            raise DataError(f"{source}: {len(order)} subject(s) with windows; a subject-wise "
                            "split needs at least 3")
        lists = {"test": order[:n_test], "valid": order[n_test:n_test + n_valid],
                 "train": order[n_test + n_valid:]}
    seen: dict[int, str] = {}
    for name in SPLITS:
        for s in lists.get(name, ()):
            if int(s) in seen and seen[int(s)] != name:
                raise DataError(f"{source}: subject {int(s)} is in both the {seen[int(s)]} and the "
                                f"{name} split; a subject-wise split keeps each subject in one")
            seen[int(s)] = name
    missing = sorted(set(seen) - set(present.tolist()))
    if missing:
        raise DataError(f"{source}: subject(s) {missing} have no windows (subjects present: "
                        f"{present.tolist()})")
    out = {}
    for name in SPLITS:
        out[name] = np.flatnonzero(np.isin(subjects, np.asarray(list(lists.get(name, ())), np.int64)))
        if out[name].size == 0:
            raise DataError(f"{source}: the {name} split of the subject-wise split is empty")
    return out
