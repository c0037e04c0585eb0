"""The small cases neuromark's central tests run for the activity family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Time between two samples of the fixture (ns): exactly 20 Hz.
STEP_NS = 50_000_000


def write_raw(root: Path, subjects: tuple[int, ...] = (1600, 1601, 1602), codes: str = "POFQRGS",
              n: int = 100, extra: dict[tuple[int, str], list[str]] | None = None) -> Path:
    """The raw UCI 507 layout under ``root``: watch accelerometer and gyroscope files of
    ``subjects``, ``n`` samples per activity code at exactly 20 Hz (the gyroscope 1 ms
    later); ``extra`` appends lines to a (subject, sensor) file. Returns ``root``."""
    import math

    raw = root / "wisdm-dataset" / "raw" / "watch"
    for sid in subjects:
        for sensor, offset in (("accel", 0), ("gyro", 1_000_000)):
            lines = []
            for k, code in enumerate(codes):
                for i in range(n):
                    t = 10**12 + k * 10**11 + i * STEP_NS + offset
                    lines.append(f"{sid},{code},{t},{k + 0.5 * math.sin(i)},{i % 3},{-1.0 * k};")
            if extra and (sid, sensor) in extra:
                lines += extra[(sid, sensor)]
            path = raw / sensor / f"data_{sid}_{sensor}_watch.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines) + "\n")
    return root


def write_wisdm(root: Path) -> None:
    """Two subjects, every NeHAR activity, 45 samples each (:func:`write_raw`)."""
    write_raw(root, subjects=(1600, 1601), codes="POFQRGS", n=45)


TASK_CASES: dict[str, Any] = {}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "wisdm": {"write": write_wisdm, "options": {"split_by": "window"}, "shape": (40, 6), "num_classes": 7,
              "damage": "wisdm-dataset/raw/watch/gyro/data_1601_gyro_watch.txt",
              "synth": {"subjects": 3, "seconds": 6, "activities": "POF", "phone": False, "seed": 0}},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
