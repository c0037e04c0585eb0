"""coco_map equals pycocotools' COCOeval on the same boxes (empty frames, absent classes,
unjoined detections, >100 detections per image, score ties, both time rules)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from neuromark.data.prophesee import make_boxes
from neuromark.errors import DataError
from neuromark.metrics.functional.coco import coco_map

CLASSES = ("pedestrian", "two wheeler", "car")


def _scene(seed: int, times: list[int], n_gt: int = 40, n_dt: int = 160):
    rng = np.random.default_rng(seed)
    t = rng.choice(times, n_gt)
    xy = rng.uniform(0, 500, (n_gt, 2))
    wh = rng.uniform(10, 120, (n_gt, 2))
    cls = rng.choice([0, 2], n_gt)  # class 1 never in the ground truth
    gt = make_boxes(t, xy[:, 0], xy[:, 1], wh[:, 0], wh[:, 1], cls)
    # detections: jittered copies of GT (some), random boxes, other timestamps
    src = rng.integers(0, n_gt, n_dt)
    jit = rng.normal(0, 8, (n_dt, 4)) * rng.choice([0.2, 1, 4], (n_dt, 1))
    shift = rng.choice([-60_000, -30_000, 10_000, 50_000], n_dt)
    dt_t = np.where(rng.random(n_dt) < 0.8, t[src], t[src] + shift)
    dcls = np.where(rng.random(n_dt) < 0.85, cls[src], rng.integers(0, 3, n_dt))
    score = np.round(rng.random(n_dt), 1)  # ties on purpose
    dt = make_boxes(dt_t, xy[src, 0] + jit[:, 0], xy[src, 1] + jit[:, 1], np.abs(wh[src, 0] + jit[:, 2]),
                    np.abs(wh[src, 1] + jit[:, 3]), dcls, score)
    return gt, dt


def _pycoco(gts, dts, tol):
    coco_mod = pytest.importorskip("pycocotools.coco")
    eval_mod = pytest.importorskip("pycocotools.cocoeval")
    images, anns, res = [], [], []
    for gt, dt in zip(gts, dts):
        for ts in np.unique(gt["t"]):
            images.append({"id": len(images) + 1, "height": 360, "width": 640})
            for b in gt[gt["t"] == ts]:
                anns.append({"id": len(anns) + 1, "image_id": len(images),
                             "category_id": int(b["class_id"]) + 1, "bbox": [float(b[k]) for k in "xywh"],
                             "area": float(b["w"] * b["h"]),
                             "iscrowd": 0})
            for b in dt[np.abs(dt["t"] - ts) <= tol]:
                res.append({"image_id": len(images), "category_id": int(b["class_id"]) + 1,
                            "bbox": [float(b[k]) for k in "xywh"], "score": float(b["class_confidence"])})
    with contextlib.redirect_stdout(io.StringIO()):
        gt_coco = coco_mod.COCO()
        gt_coco.dataset = {"images": images, "annotations": anns,
                           "categories": [{"id": i + 1, "name": n} for i, n in enumerate(CLASSES)]}
        gt_coco.createIndex()
        ev = eval_mod.COCOeval(gt_coco, gt_coco.loadRes(res), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    per_class = {}
    for k, name in enumerate(CLASSES):
        p = ev.eval["precision"][:, :, k, 0, 2]
        per_class[name] = float(p[p > -1].mean()) if (p > -1).any() else float("nan")
    return ev.stats, per_class


@pytest.mark.parametrize("tol", [0, 50_000])
def test_equals_cocoeval(tol):
    times = [100_000, 150_000, 200_000, 250_000, 300_000]
    gts, dts = zip(*(_scene(s, times) for s in (0, 1)))
    # a crowded image: 130 detections on one frame (only the best 100 count)
    extra_gt, extra_dt = _scene(5, [400_000], n_gt=20, n_dt=130)
    gts, dts = list(gts) + [extra_gt], list(dts) + [extra_dt]
    # a stream whose detections are all on frames without ground truth
    gts.append(make_boxes([50_000], [10], [10], [50], [50], [2]))
    dts.append(make_boxes([500_000], [10], [10], [50], [50], [2], [0.9]))
    got = coco_map(gts, dts, height=360, width=640, classes=CLASSES, time_tol_us=tol)
    stats, per_class = _pycoco(gts, dts, tol)
    assert got["mAP"] == pytest.approx(stats[0], abs=1e-12)
    assert got["AP50"] == pytest.approx(stats[1], abs=1e-12)
    assert got["AP75"] == pytest.approx(stats[2], abs=1e-12)
    assert 0.05 < got["mAP"] < 0.95  # a non-trivial case
    assert np.isnan(got["per_class"]["two wheeler"]) and np.isnan(per_class["two wheeler"])
    for name in ("pedestrian", "car"):
        assert got["per_class"][name] == pytest.approx(per_class[name], abs=1e-12)


def test_perfect_and_filtered():
    gt = make_boxes([0, 0, 50_000], [0, 100, 5], [0, 100, 5], [30, 40, 50], [30, 40, 50], [0, 2, 2])
    det = gt.copy()
    assert coco_map(gt, det, height=360, width=640, classes=CLASSES)["mAP"] == pytest.approx(1.0)
    # boxes filtered out of the detections lower recall: AP drops
    assert coco_map(gt, det[:2], height=360, width=640, classes=CLASSES)["mAP"] < 1.0
    # no detections at all: AP 0 for each class with ground truth
    empty = det[:0]
    assert coco_map(gt, empty, height=360, width=640, classes=CLASSES)["mAP"] == 0.0
    with pytest.raises(DataError, match="class_id 5 outside"):
        coco_map(gt, make_boxes([0], [0], [0], [1], [1], [5], [1.0]), height=360, width=640, classes=CLASSES)


def test_metric_class_accumulates_streams():
    from neuromark.benchmarks.event_detection.coco_map import CocoMap
    from neuromark.metrics.base import Step

    gts, dts = zip(*(_scene(s, [100_000, 150_000]) for s in (0, 1)))
    metric = CocoMap(CLASSES)
    for key, (gt, dt) in enumerate(zip(gts, dts)):  # two frames per stream, in two steps
        for ts in (100_000, 150_000):
            metric.update(Step(0, [dt[dt["t"] == ts]], [(key, gt[gt["t"] == ts])], 1))
    score = metric.compute()
    joined = [d[np.isin(d["t"], [100_000, 150_000])] for d in dts]
    ref = coco_map(list(gts), joined, height=360, width=640, classes=CLASSES)
    assert score.value == pytest.approx(ref["mAP"])
    metric.reset()
    with pytest.raises(ValueError, match="no frames"):
        metric.compute()


def test_metric_refuses_no_ground_truth():
    from neuromark.benchmarks.event_detection.coco_map import CocoMap
    from neuromark.metrics.base import Step

    metric = CocoMap(CLASSES)
    gt = make_boxes([0], [0], [0], [10], [10], [1])[:0]
    metric.update(Step(0, [gt], [("a", gt)], 1))
    with pytest.raises(ValueError, match="no ground-truth boxes"):
        metric.compute()


def test_filtered_ground_truth_and_empty_frames_equal_cocoeval():
    """Ground truth through the task's box filter (small boxes gone, one frame left with no
    box at all, so it is no image and its detections are unscored) and a frame whose
    ground truth has no detection: still equal to COCOeval on the same boxes."""
    from neuromark.benchmarks.event_detection.boxes import BoxFilter

    times = [100_000, 150_000, 200_000, 250_000]
    gt, dt = _scene(3, times, n_gt=40, n_dt=120)
    gt = np.concatenate([gt, make_boxes([300_000, 350_000], [20, 30], [20, 30], [8, 90], [8, 80], [0, 2])])
    kept = BoxFilter((640, 360), min_diag=40, min_side=15)(gt, (640, 360))
    assert 0 < len(kept) < len(gt) and 300_000 not in kept["t"]  # that frame lost its only box
    dt = np.concatenate([dt[dt["t"] != 250_000], make_boxes([300_000], [20], [20], [8], [8], [0], [0.9])])
    assert 250_000 in kept["t"] and 250_000 not in dt["t"]  # an empty frame: GT, no detection
    got = coco_map(kept, dt, height=360, width=640, classes=CLASSES)
    stats, per_class = _pycoco([kept], [dt], 0)
    assert got["images"] == len(np.unique(kept["t"]))
    for key, k in (("mAP", 0), ("AP50", 1), ("AP75", 2)):
        assert got[key] == pytest.approx(stats[k], abs=1e-12)
    for name in ("pedestrian", "car"):
        assert got["per_class"][name] == pytest.approx(per_class[name], abs=1e-12)
