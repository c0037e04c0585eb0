"""The small cases neuromark's central tests run for the event_detection family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def detection_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """Two generated Gen4-layout files (1.2 s, 64 x 36 pixels), a width-4 detector trained
    one epoch, COCO mAP with a 50-ms time tolerance."""
    return {"config": {"task": "detection", "benchmark": {"id": "det-tiny", "version": "1.0"},
                       "data": {"root": "cache:det_tiny",
                                "synthesize": {"files": {"train": 1, "test": 1}, "duration_s": 1.2,
                                               "height": 36, "width": 64, "seed": 3},
                                "network": [32, 18], "box_filter": {"resolution": [640, 360]}},
                       "model": {"name": "event_detector", "options": {"width": 4},
                                 "checkpoint": "cache:checkpoints/det_tiny.pt"},
                       "train": {"epochs": 1, "batch_size": 1},
                       "eval": {"metrics": ["coco_map", "synaptic_operations"], "time_tol_us": 50000}},
            "repeat": True,
            "flags": {"coverage": True, "caches": ["det_tiny/test", "checkpoints/det_tiny.pt"]}}


def write_gen4(root: Path) -> None:
    """``train/a`` and ``test/b``: 500 events each on a 64 x 48 sensor over 0.1 s, with one
    labelled box at 50 ms."""
    import numpy as np

    from neuromark.data.event_dtypes import make_camera_events
    from neuromark.data.prophesee import make_boxes, write_boxes, write_dat

    rng = np.random.default_rng(7)
    for split, stem in (("train", "a"), ("test", "b")):
        (root / split).mkdir()
        t = np.sort(rng.integers(0, 100_000, 500))
        write_dat(root / split / f"{stem}_td.dat", make_camera_events(
            t, rng.integers(0, 64, 500), rng.integers(0, 48, 500), rng.integers(0, 2, 500)),
            width=64, height=48)
        write_boxes(root / split / f"{stem}_bbox.npy", make_boxes([50_000], [3], [4], [20], [10], [2]))


def gen4_entry() -> Any:
    """The Gen4 entry: the detection task reads it without registering it."""
    from neuromark.benchmarks.event_detection.gen4 import GEN4

    return GEN4


def gen4_sample(entry: Any, root: Path) -> tuple[Any, Any]:
    """A Gen4 sample is (events, boxes): checked here, then a stand-in (x (1,), label 0)."""
    import numpy as np

    events, boxes = entry.load(root, "test")[0]
    assert len(events) > 0 and set(boxes["class_id"]) <= {0, 1, 2, 3}
    return np.zeros(1, np.float32), 0


TASK_CASES = {"detection": detection_case}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "gen4": {"entry": gen4_entry, "write": write_gen4, "damage": "test/b_td.dat", "sample": gen4_sample,
             "synth": {"files": {"train": 1, "test": 1}, "duration_s": 0.7, "height": 16, "width": 24,
                       "seed": 0}},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
