"""The small cases neuromark's central tests run for the dvs_gesture family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_gestures(root: Path) -> None:
    """Two recordings per split (tonic's layout: ``user<NN>_<lighting>/<label>.npy``), 400
    random events each on the 128 x 128 sensor over 0.2 s."""
    import numpy as np

    from neuromark.benchmarks.dvs_gesture.reader import write_sample
    from neuromark.data.event_dtypes import make_camera_events

    rng = np.random.default_rng(5)
    for folder, labels in (("ibmGestureTrain/user01_natural", (0, 1)),
                           ("ibmGestureTest/user03_led", (0, 2))):
        for label in labels:
            t = np.sort(rng.integers(0, 200, 400)) * 1000
            ev = make_camera_events(t, rng.integers(0, 128, 400), rng.integers(0, 128, 400),
                                    rng.integers(0, 2, 400))
            write_sample(root / folder / f"{label}.npy", ev)


TASK_CASES: dict[str, Any] = {}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "dvs_gesture": {"write": write_gestures, "options": {"n_time_bins": 5}, "shape": (5, 2, 32, 32),
                    "num_classes": 11, "damage": "ibmGestureTest/user03_led/2.npy",
                    "synth": {"train_users": 1, "test_users": 1, "duration_s": 0.1, "seed": 0}},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
