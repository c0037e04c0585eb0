"""The small cases neuromark's central tests run for the acoustic_scenes family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_dcase(root: Path) -> None:
    """Three 2-s noise clips at 16 kHz (airport, bus, park) and the fold-1 lists (one
    training clip, one evaluation clip). Needs soundfile."""
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(4)
    names = ["airport-paris-1-1-a.wav", "bus-lyon-1001-40001-a.wav", "park-rome-7-2-a.wav"]
    (root / "audio").mkdir()
    for name in names:
        sf.write(str(root / "audio" / name), 0.1 * rng.standard_normal(16_000 * 2), 16_000,
                 subtype="PCM_16")
    (root / "evaluation_setup").mkdir()
    (root / "evaluation_setup" / "fold1_train.csv").write_text(
        f"filename\tscene_label\naudio/{names[0]}\tairport\n")
    (root / "evaluation_setup" / "fold1_evaluate.csv").write_text(
        f"filename\tscene_label\naudio/{names[1]}\tbus\n")


TASK_CASES: dict[str, Any] = {}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "dcase2020_asc": {"write": write_dcase, "options": {"check_counts": False}, "shape": (8000,),
                      "num_classes": 4, "damage": "audio/bus-lyon-1001-40001-a.wav", "needs": ("soundfile",)},
}
SUT_CASES: dict[str, dict[str, Any]] = {"asc_cnn": {"options": {"samples": 4, "threads": 1}}}
