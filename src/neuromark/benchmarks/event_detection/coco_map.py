"""``coco_map``: COCO AP@[.5:.95] of timed detections, accumulated per stream (file).

A workload metric: ``update(step)`` takes ``step.targets`` = a list of ``(stream, gt_boxes)``
and ``step.predictions`` = the list of detection box arrays for the same entries (the
:func:`~neuromark.data.prophesee.read_boxes` layout, detections with ``class_confidence``);
``compute()`` evaluates every stream at once with
:func:`neuromark.metrics.functional.coco.coco_map`. Unlike neurobench 2.3.0 (whose
``CocoMap.compute()`` is never called, so it reports 0.0), the detection task always calls it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from neuromark.metrics.base import Step, WorkloadMetric
from neuromark.metrics.functional.coco import coco_map
from neuromark.results import Score


class CocoMap(WorkloadMetric):
    """COCO mAP with AP50, AP75 and per-class AP in ``raw``; ``time_tol_us`` as in
    :func:`~neuromark.metrics.functional.coco.coco_map` (0: per-bin join)."""

    name = "coco_map"
    higher_is_better = True
    uses_predictions = True
    gt: dict[Any, list[np.ndarray]]
    dt: dict[Any, list[np.ndarray]]

    def __init__(self, classes: Sequence[str] = ("pedestrian", "two wheeler", "car"), *,
                 height: int = 360, width: int = 640, time_tol_us: int = 0) -> None:
        self.classes, self.height, self.width, self.time_tol_us = tuple(classes), height, width, time_tol_us
        super().__init__()
        self.add_state("gt", {}, merge="cat")  # stream -> its frames' box arrays, in order
        self.add_state("dt", {}, merge="cat")

    def update(self, step: Step) -> None:
        if len(step.targets) != len(step.predictions):
            raise ValueError(f"coco_map: {len(step.targets)} target entries but "
                             f"{len(step.predictions)} prediction entries")
        for (stream, gt), dt in zip(step.targets, step.predictions):
            if stream is None:  # a padding slot
                continue
            self.gt.setdefault(stream, []).append(gt)
            self.dt.setdefault(stream, []).append(dt)

    def compute(self) -> Score:
        keys = list(self.gt)
        if not keys:
            raise ValueError("coco_map: no frames were scored (update was never called)")
        out = coco_map([np.concatenate(self.gt[k]) for k in keys], [np.concatenate(self.dt[k]) for k in keys],
                       height=self.height, width=self.width, classes=self.classes,
                       time_tol_us=self.time_tol_us)
        if out["gt_boxes"] == 0:
            raise ValueError(f"coco_map: no ground-truth boxes in the {out['images']} scored frames "
                             "(all filtered out, skipped or unlabelled?); mAP is undefined")
        return Score(out["mAP"], None, higher_is_better=True,
                     raw={**out, "time_tol_us": self.time_tol_us})
