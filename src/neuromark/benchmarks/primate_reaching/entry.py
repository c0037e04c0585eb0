"""The ``primate_reaching`` data set entry: the recorded sessions (Zenodo record 583331,
``<session>.mat``, md5 as NeuroBench publishes them) or the offline surrogate written in the
same layout by :mod:`neuromark.benchmarks.primate_reaching.generator` (cosine-tuned Poisson units
on minimum-jerk
reaches) when a config says so (``data.surrogate`` of the primate tasks, ``synthesize`` of
the data set options).

Readers: :mod:`neuromark.benchmarks.primate_reaching.reader` (the reader cannot tell the two apart).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuromark.benchmarks.primate_reaching.reader import (
    CITATION,
    FILES,
    SESSIONS,
    STEP_S,
    URL,
    PrimateReaching,
    primate_reaching,
)
from neuromark.data.entry import MARK, Entry, synthesize_into
from neuromark.errors import DataError
from neuromark.registry import generators

#: The surrogate's record of its recipe and generating units (written by the generator).
TRUTH_FILE = "surrogate.json"
#: Datasets every session file must hold (h5py's names of MATLAB's variables).
_KEYS = ("t", "cursor_pos", "target_pos", "spikes")


class PrimateReachingEntry(Entry):
    """Entry ``primate_reaching``: ``root/<session>.mat`` (MATLAB v7.3 / HDF5)."""

    name = "primate_reaching"
    citation = CITATION
    urls = tuple(URL.format(name=s) for s in SESSIONS)
    manifest = {f"{s}.mat": f"md5:{md5}" for s, md5 in FILES.items()}

    def layout(self, root: Path) -> list[Path]:
        present = [root / f"{s}.mat" for s in SESSIONS if (root / f"{s}.mat").is_file()]
        return present or [root / f"{SESSIONS[0]}.mat"]

    def published(self, root: Path) -> Mapping[str, str]:
        synthetic = (root / MARK).is_file() or (root / TRUTH_FILE).is_file()
        return {} if synthetic else self.manifest

    def check_file(self, path: Path) -> None:
        import h5py

        try:
            with h5py.File(path, "r") as handle:
                missing = [k for k in _KEYS if k not in handle]
        except OSError as exc:
            raise DataError(f"{path}: not a readable MATLAB v7.3 (HDF5) file (corrupt or "
                            f"truncated?): {exc}") from None
        if missing:
            raise DataError(f"{path}: no {', '.join(missing)}; not a primate-reaching session file")

    def download(self, root: str | os.PathLike[str], *, sessions: Sequence[str] = SESSIONS) -> Path:
        for session in sessions:
            PrimateReaching(root, session, "train").download()
        self.verify(root)
        return Path(root)

    def synthesize(self, root: str | os.PathLike[str], *, duration_s: float = 480.0, seed: int = 0,
                   sessions: Sequence[str] = SESSIONS) -> Path:
        """Write the surrogate sessions (session i of :data:`SESSIONS` seeded ``seed + i``)."""
        gen = generators.get("primate")
        SURROGATE_VERSION, SurrogateSettings = gen.SURROGATE_VERSION, gen.SurrogateSettings  # noqa: N806
        write_surrogate = gen.write_surrogate

        chosen = tuple(sessions)
        recipe = {"version": SURROGATE_VERSION, "duration_s": float(duration_s), "seed": seed}

        def complete(folder: Path) -> bool:  # any folder of this recipe holding these sessions
            saved = _truth(folder)
            if saved is None or {k: saved.get("recipe", {}).get(k) for k in recipe} != recipe:
                return False
            names = {r.get("name") for r in saved.get("sessions", [])}
            return all(s in names and (folder / f"{s}.mat").is_file() for s in chosen)

        return synthesize_into(root, {**recipe, "sessions": sorted(chosen)},
                               lambda tmp: write_surrogate(tmp, SurrogateSettings(duration_s, seed, chosen)),
                               what="primate-reaching surrogate", complete=complete, legacy=_legacy)

    def generating_occupancy(self, root: str | os.PathLike[str], session: str, cursor: np.ndarray,
                             samples: int) -> np.ndarray:
        """(samples, units) probability that each generating unit of a surrogate session
        fires in a 4-ms step, given the cursor track (the ground truth a reader's data came
        from; :class:`DataError` for recorded data)."""
        gen = generators.get("primate")
        latent_drive, load_truth = gen.latent_drive, gen.load_truth
        occupancy_probability = gen.occupancy_probability

        truth = load_truth(root, session)
        drive = latent_drive(samples, truth["seed"])
        return np.stack([occupancy_probability(u, cursor, drive) for u in truth["units"]], 1)

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> PrimateReaching:
        return self(split, root=str(root), **options)

    def __call__(self, split: str = "test", *, root: str = "data/primate_reaching",
                 session: str = SESSIONS[0], bin_width: float = STEP_S, num_steps: int = 1,
                 train_ratio: float = 0.5, on_invalid: Literal["error", "drop"] = "error") -> PrimateReaching:
        """One session's split (see
        :class:`~neuromark.benchmarks.primate_reaching.reader.PrimateReaching`)."""
        return primate_reaching(split, root=root, session=session, bin_width=bin_width,
                                num_steps=num_steps, train_ratio=train_ratio, on_invalid=on_invalid)


def _truth(folder: Path) -> dict[str, Any] | None:
    try:
        saved = json.loads((folder / TRUTH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def _legacy(folder: Path) -> set[str]:
    """A surrogate folder written in place before marks: its manifest and session files."""
    saved = _truth(folder)
    if saved is None:
        return set()
    names = {str(r.get("name")) for r in saved.get("sessions", [])}
    return {TRUTH_FILE} | {f"{n}.mat" for n in names if re.fullmatch(r"[\w.-]+", n)}


PRIMATE_REACHING = PrimateReachingEntry()
