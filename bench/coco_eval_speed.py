"""COCO box AP on the same boxes: neuromark's numpy ``coco_map`` vs pycocotools' ``COCOeval``
vs faster-coco-eval's ``COCOeval_faster`` (when installed), side by side.

Builds seeded streams like a detection run (``--streams`` files of ``--frames`` labelled
frames, ~8 ground-truth boxes and ~40 scored detections per frame, 3 classes, per-bin
join), times each evaluator over ``--rounds`` interleaved rounds (median seconds; the COCO
objects are built inside the timing, as a run must build them), checks that mAP, AP50 and
AP75 agree, and prints the ratios to ``coco_map``.

Run: ``python bench/coco_eval_speed.py [--streams 4] [--frames 200] [--rounds 3]``
(faster-coco-eval: ``pip install faster-coco-eval``; it is not a neuromark dependency).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from neuromark.data.prophesee import make_boxes
from neuromark.metrics.functional.coco import coco_map

CLASSES = ("pedestrian", "two wheeler", "car")


def scene(seed: int, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """(ground truth, detections) of one stream, stamped every 50 ms."""
    rng = np.random.default_rng(seed)
    times = (np.arange(frames) + 11) * 50_000
    n_gt = frames * 8
    t = rng.choice(times, n_gt)
    xy, wh = rng.uniform(0, 560, (n_gt, 2)), rng.uniform(12, 120, (n_gt, 2))
    cls = rng.integers(0, 3, n_gt)
    gt = make_boxes(t, xy[:, 0], xy[:, 1], wh[:, 0], wh[:, 1], cls)
    n_dt = frames * 40
    src = rng.integers(0, n_gt, n_dt)
    jit = rng.normal(0, 6, (n_dt, 4)) * rng.choice([0.3, 1, 5], (n_dt, 1))
    dcls = np.where(rng.random(n_dt) < 0.85, cls[src], rng.integers(0, 3, n_dt))
    dt = make_boxes(t[src], xy[src, 0] + jit[:, 0], xy[src, 1] + jit[:, 1], np.abs(wh[src, 0] + jit[:, 2]),
                    np.abs(wh[src, 1] + jit[:, 3]), dcls, rng.random(n_dt))
    return gt, dt


def coco_dicts(gts: list[np.ndarray], dts: list[np.ndarray]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The COCO ground-truth dataset and result list (one image per ground-truth time)."""
    images, anns, res = [], [], []
    for gt, dt in zip(gts, dts):
        for ts in np.unique(gt["t"]):
            images.append({"id": len(images) + 1, "height": 360, "width": 640})
            for b in gt[gt["t"] == ts]:
                anns.append({"id": len(anns) + 1, "image_id": len(images),
                             "category_id": int(b["class_id"]) + 1, "bbox": [float(b[k]) for k in "xywh"],
                             "area": float(b["w"] * b["h"]),
                             "iscrowd": 0})
            for b in dt[dt["t"] == ts]:
                res.append({"image_id": len(images), "category_id": int(b["class_id"]) + 1,
                            "bbox": [float(b[k]) for k in "xywh"], "score": float(b["class_confidence"])})
    categories = [{"id": i + 1, "name": n} for i, n in enumerate(CLASSES)]
    return {"images": images, "annotations": anns, "categories": categories}, res


def run_cocoeval(coco_cls: Any, eval_cls: Any, gts: list[np.ndarray], dts: list[np.ndarray]) -> list[float]:
    dataset, res = coco_dicts(gts, dts)
    with contextlib.redirect_stdout(io.StringIO()):
        gt_coco = coco_cls()
        gt_coco.dataset = dataset
        gt_coco.createIndex()
        ev = eval_cls(gt_coco, gt_coco.loadRes(res), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return [float(v) for v in ev.stats[:3]]


def evaluators() -> dict[str, Callable[[list[np.ndarray], list[np.ndarray]], list[float]]]:
    def ours(gts: list[np.ndarray], dts: list[np.ndarray]) -> list[float]:
        r = coco_map(gts, dts, height=360, width=640, classes=CLASSES)
        return [r["mAP"], r["AP50"], r["AP75"]]

    out: dict[str, Callable[[list[np.ndarray], list[np.ndarray]], list[float]]] = {"neuromark": ours}
    try:
        from pycocotools.coco import COCO
        from pycocotools.cocoeval import COCOeval

        out["pycocotools"] = lambda g, d: run_cocoeval(COCO, COCOeval, g, d)
    except ImportError:
        print("pycocotools not installed: skipped")
    try:
        from faster_coco_eval import COCO as FCOCO
        from faster_coco_eval import COCOeval_faster

        out["faster-coco-eval"] = lambda g, d: run_cocoeval(FCOCO, COCOeval_faster, g, d)
    except ImportError:
        print("faster-coco-eval not installed: skipped (pip install faster-coco-eval)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pairs = [scene(s, args.frames) for s in range(args.streams)]
    gts, dts = [g for g, _ in pairs], [d for _, d in pairs]
    funcs = evaluators()
    times: dict[str, list[float]] = {k: [] for k in funcs}
    values: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for name, fn in funcs.items():
            start = time.perf_counter()
            values[name] = fn(gts, dts)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["neuromark"])
    print(f"{args.streams} streams x {args.frames} frames: {sum(map(len, gts))} GT boxes, "
          f"{sum(map(len, dts))} detections; median of {args.rounds} rounds")
    for name in funcs:
        med = statistics.median(times[name])
        diff = max(abs(a - b) for a, b in zip(values[name], values["neuromark"]))
        print(f"  {name:17s} {med:8.3f} s  x{med / base:5.2f} of neuromark  "
              f"mAP {values[name][0]:.6f}  max |diff| to neuromark {diff:.1e}")


if __name__ == "__main__":
    main()
