"""COCO box AP (AP@[.5:.95], AP50, AP75, per class) for timed box arrays, in numpy.

A re-implementation of the COCO ``bbox`` evaluation (Lin et al. 2014; the evaluation as
documented at cocodataset.org/#detection-eval and in pycocotools' ``cocoeval.py``
docstrings): per image and class, detections sorted by score (stable), at most 100 kept,
greedily matched to the unmatched ground truth of highest IoU >= threshold; precision
made monotone and sampled at 101 recall points; AP is the mean over thresholds 0.50:0.05:0.95
and classes with ground truth. Area range "all", no crowd boxes (Prophesee labels have none).

Images, as in Prophesee's toolbox (``coco_eval.py``): one COCO image per distinct
ground-truth timestamp of each stream (file); a detection joins every image whose timestamp
is within ``time_tol_us`` of its own. ``time_tol_us=0`` (default) is NeuroBench's per-bin rule
(detections stamped with their bin's time); ``50_000`` is the toolbox's ±50 ms rule.
Timestamps without ground truth are no image, so their detections are not scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from neuromark.errors import DataError

IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
RECALL_POINTS = np.linspace(0.0, 1.0, 101)
MAX_DETECTIONS = 100


def box_iou(dt: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """IoU (D, G) of boxes given as (N, 4) ``x, y, w, h`` (COCO's rule: no +1 on sides)."""
    dx2, dy2 = dt[:, 0] + dt[:, 2], dt[:, 1] + dt[:, 3]
    gx2, gy2 = gt[:, 0] + gt[:, 2], gt[:, 1] + gt[:, 3]
    iw = np.minimum(dx2[:, None], gx2[None]) - np.maximum(dt[:, 0:1], gt[None, :, 0])
    ih = np.minimum(dy2[:, None], gy2[None]) - np.maximum(dt[:, 1:2], gt[None, :, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    union = (dt[:, 2] * dt[:, 3])[:, None] + (gt[:, 2] * gt[:, 3])[None] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def match_image(dt_boxes: np.ndarray, dt_scores: np.ndarray, gt_boxes: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """(scores of the kept detections (K,), matched flags (T, K)) for one image and class."""
    order = np.argsort(-dt_scores, kind="mergesort")[:MAX_DETECTIONS]
    scores = dt_scores[order]
    matched = np.zeros((len(IOU_THRESHOLDS), len(order)), bool)
    if len(order) == 0 or len(gt_boxes) == 0:
        return scores, matched
    ious = box_iou(dt_boxes[order], gt_boxes)
    for ti, threshold in enumerate(IOU_THRESHOLDS):
        taken = np.zeros(len(gt_boxes), bool)
        for d in range(len(order)):
            best, best_iou = -1, min(threshold, 1 - 1e-10)
            for g in range(len(gt_boxes)):
                if taken[g] or ious[d, g] < best_iou:
                    continue
                best, best_iou = g, ious[d, g]
            if best >= 0:
                taken[best] = True
                matched[ti, d] = True
    return scores, matched


def average_precision(scores: np.ndarray, matched: np.ndarray, n_gt: int) -> np.ndarray:
    """AP per IoU threshold (T,) from all images' kept detections of one class (COCO's
    101-point interpolated precision); NaN when the class has no ground truth."""
    if n_gt == 0:
        return np.full(matched.shape[0], np.nan)
    order = np.argsort(-scores, kind="mergesort")
    tps = matched[:, order]
    tp = np.cumsum(tps, axis=1, dtype=float)
    fp = np.cumsum(~tps, axis=1, dtype=float)
    out = np.zeros(matched.shape[0])
    for ti in range(matched.shape[0]):
        recall = tp[ti] / n_gt
        precision = tp[ti] / (fp[ti] + tp[ti] + np.spacing(1))
        precision = np.maximum.accumulate(precision[::-1])[::-1] if len(precision) else precision
        idx = np.searchsorted(recall, RECALL_POINTS, side="left")
        q = np.zeros(len(RECALL_POINTS))
        ok = idx < len(precision)
        q[ok] = precision[idx[ok]]
        out[ti] = q.mean()
    return out


def _as_streams(boxes: Any, what: str) -> list[np.ndarray]:
    streams = [boxes] if isinstance(boxes, np.ndarray) else list(boxes)
    for i, s in enumerate(streams):
        names = getattr(getattr(s, "dtype", None), "names", None) or ()
        need = ("t", "x", "y", "w", "h", "class_id") + (("class_confidence",) if what == "detections" else ())
        missing = [n for n in need if n not in names]
        if missing:
            raise DataError(f"coco_map: {what} stream {i}: box fields {missing} missing (got {list(names)})")
    return streams


def coco_map(ground_truth: np.ndarray | Sequence[np.ndarray], detections: np.ndarray | Sequence[np.ndarray],
             *, height: int, width: int, classes: Sequence[str], time_tol_us: int = 0) -> dict[str, Any]:
    """COCO AP of ``detections`` against ``ground_truth``: box arrays in the
    :func:`neuromark.data.prophesee.read_boxes` layout (``t`` µs, ``x, y, w, h`` pixels,
    ``class_id`` in ``0..len(classes)-1``; detections with ``class_confidence``), one array
    per stream (file) or a list of them, paired by position.

    Returns ``{"mAP", "AP50", "AP75", "per_class": {name: AP@[.5:.95]}, "images", "gt_boxes",
    "detections"}``; an AP is NaN when no class has ground truth (COCO prints -1).
    ``height``/``width`` are the frame size of the COCO images (bbox AP does not use them).
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"coco_map: height and width must be positive, got {height}x{width}")
    if time_tol_us < 0:
        raise ValueError(f"coco_map: time_tol_us must be >= 0, got {time_tol_us}")
    gts, dts = _as_streams(ground_truth, "ground_truth"), _as_streams(detections, "detections")
    if len(gts) != len(dts):
        raise DataError(f"coco_map: {len(gts)} ground-truth streams but {len(dts)} detection streams")
    k = len(classes)
    scores_c: list[list[np.ndarray]] = [[] for _ in range(k)]
    matched_c: list[list[np.ndarray]] = [[] for _ in range(k)]
    n_gt = np.zeros(k, np.int64)
    images = n_det = 0
    for si, (gt, dt) in enumerate(zip(gts, dts)):
        for arr, what in ((gt, "ground_truth"), (dt, "detections")):
            bad = np.flatnonzero(np.asarray(arr["class_id"]).astype(np.int64) >= k)
            if bad.size:
                raise DataError(f"coco_map: {what} stream {si}, box {bad[0]}: class_id "
                                f"{int(arr['class_id'][bad[0]])} outside 0..{k - 1} ({list(classes)})")
        dt_order = np.argsort(dt["t"], kind="stable")
        dt_t = np.asarray(dt["t"], np.int64)[dt_order]
        for ts in np.unique(gt["t"]):
            images += 1
            g = gt[gt["t"] == ts]
            lo = np.searchsorted(dt_t, int(ts) - time_tol_us, side="left")
            hi = np.searchsorted(dt_t, int(ts) + time_tol_us, side="right")
            d = dt[np.sort(dt_order[lo:hi])]  # input order: score ties break as in COCOeval
            n_det += len(d)
            for c in range(k):
                gc, dc = g[g["class_id"] == c], d[d["class_id"] == c]
                if len(gc) == 0 and len(dc) == 0:
                    continue
                n_gt[c] += len(gc)
                s, m = match_image(_xywh(dc), np.asarray(dc["class_confidence"], np.float64), _xywh(gc))
                scores_c[c].append(s)
                matched_c[c].append(m)
    ap = np.full((k, len(IOU_THRESHOLDS)), np.nan)
    for c in range(k):
        if n_gt[c] == 0:
            continue
        s = np.concatenate(scores_c[c]) if scores_c[c] else np.zeros(0)
        m = (np.concatenate(matched_c[c], axis=1) if matched_c[c]
             else np.zeros((len(IOU_THRESHOLDS), 0), bool))
        ap[c] = average_precision(s, m, int(n_gt[c]))
    valid = ~np.isnan(ap[:, 0])

    def _mean(values: np.ndarray) -> float:
        return float(values[valid].mean()) if valid.any() else float("nan")

    return {"mAP": _mean(ap.mean(axis=1)), "AP50": _mean(ap[:, 0]), "AP75": _mean(ap[:, 5]),
            "per_class": {name: float(ap[c].mean()) for c, name in enumerate(classes)},
            "images": images, "gt_boxes": int(n_gt.sum()), "detections": n_det}


def _xywh(boxes: np.ndarray) -> np.ndarray:
    return np.stack([np.asarray(boxes[f], np.float64) for f in ("x", "y", "w", "h")], axis=1).reshape(-1, 4)
