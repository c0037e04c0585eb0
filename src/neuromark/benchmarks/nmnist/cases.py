"""The small cases neuromark's central tests run for the nmnist family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

#: (shipped recording, split folder, label) of the tiny published-layout fixture: real
#: recordings of the shipped subset (labels from its lists: 1 -> 5, 2 -> 0, 60001 -> 7, 60002 -> 2).
_FIXTURE = (("1.bs2", "Train", 5), ("2.bs2", "Train", 0), ("60001.bs2", "Test", 7), ("60002.bs2", "Test", 2))


def write_published(root: Path) -> None:
    """Four real recordings in the published layout ``{Train,Test}/<digit>/<id>.bin``."""
    from neuromark.benchmarks.nmnist.dataset import SHIPPED_DIR

    for name, folder, label in _FIXTURE:
        target = root / folder / str(label) / f"{Path(name).stem.zfill(5)}.bin"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHIPPED_DIR / name, target)


TASK_CASES: dict[str, Any] = {}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "nmnist": {"write": write_published, "options": {"dt_us": 100_000, "t_max_us": 400_000},
               "shape": (4, 2, 34, 34), "num_classes": 10, "damage": "Test/7/60001.bin"},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
