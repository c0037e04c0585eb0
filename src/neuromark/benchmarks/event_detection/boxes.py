"""Box-label preprocessing for Gen4 detection: clipping, class mapping, the box filter,
the 0.5-s skip, rescaling and per-bin ground truth.

Follows metavision's ``load_boxes`` as NeuroBench uses it (``research/wave2-tasks.md`` §3),
with two settings made explicit:

- :class:`BoxFilter` keeps boxes with diagonal >= 60, both sides >= 20 and width <= 0.8 W,
  measured at ``resolution``. NeuroBench applies it at the network resolution 640x360
  (default here); Perot et al.'s toolbox applies the same numbers at the label resolution
  1280x720 (``resolution: [1280, 720]``), which keeps smaller objects.
- Ground truth of a 50-ms bin ``[s, s + dt)`` is the last label timestamp in ``(s, s + dt]``,
  stamped ``s + dt`` (the time when the detector has seen the bin's events); detections of
  that bin carry the same stamp, so ``coco_map(time_tol_us=0)`` joins them exactly.
  The temporal NMS of metavision is not applied (labels here come one timestamp per bin).

Boxes are :data:`~neuromark.data.prophesee.BOX_DTYPE` arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The 3 classes NeuroBench evaluates, and the raw ids that map to them (others removed).
DETECTION_CLASSES = ("pedestrian", "two wheeler", "car")
GEN4_TO_DETECTION = {0: 0, 1: 1, 2: 2}


def clip_boxes(boxes: np.ndarray, width: int, height: int, min_side: float = 2.0) -> np.ndarray:
    """Boxes clipped to the ``width`` x ``height`` frame; boxes with a side <= ``min_side``
    after clipping are removed."""
    out = boxes.copy()
    x0, y0 = np.clip(out["x"], 0, width), np.clip(out["y"], 0, height)
    x1, y1 = np.clip(out["x"] + out["w"], 0, width), np.clip(out["y"] + out["h"], 0, height)
    out["x"], out["y"], out["w"], out["h"] = x0, y0, x1 - x0, y1 - y0
    return out[(out["w"] > min_side) & (out["h"] > min_side)]


def map_classes(boxes: np.ndarray, mapping: dict[int, int] | None = None) -> np.ndarray:
    """Boxes whose ``class_id`` is a key of ``mapping`` (default Gen4 -> 3 classes), renumbered."""
    mapping = GEN4_TO_DETECTION if mapping is None else mapping
    lut = np.full(max(max(mapping) + 1, int(boxes["class_id"].max(initial=0)) + 1), -1, np.int64)
    for src, dst in mapping.items():
        lut[src] = dst
    new = lut[boxes["class_id"].astype(np.int64)]
    out = boxes[new >= 0].copy()
    out["class_id"] = new[new >= 0]
    return out


def rescale(boxes: np.ndarray, sx: float, sy: float) -> np.ndarray:
    """Boxes scaled by ``sx`` horizontally and ``sy`` vertically (label -> network pixels)."""
    out = boxes.copy()
    out["x"] *= sx
    out["w"] *= sx
    out["y"] *= sy
    out["h"] *= sy
    return out


@dataclass(frozen=True)
class BoxFilter:
    """Keep boxes with diagonal >= ``min_diag``, sides >= ``min_side`` and width <=
    ``max_width_frac * resolution[0]``, measured at ``resolution`` = (W, H); the boxes come
    at ``frame`` = (W, H) and are scaled to ``resolution`` for the test only."""

    resolution: tuple[int, int] = (640, 360)
    min_diag: float = 60.0
    min_side: float = 20.0
    max_width_frac: float = 0.8

    def __call__(self, boxes: np.ndarray, frame: tuple[int, int]) -> np.ndarray:
        sx, sy = self.resolution[0] / frame[0], self.resolution[1] / frame[1]
        w, h = boxes["w"].astype(np.float64) * sx, boxes["h"].astype(np.float64) * sy
        keep = ((w * w + h * h >= self.min_diag ** 2) & (w >= self.min_side) & (h >= self.min_side)
                & (w <= self.max_width_frac * self.resolution[0]))
        return boxes[keep]


def skip_start(boxes: np.ndarray, skip_us: int = 500_000) -> np.ndarray:
    """Boxes at ``t >= skip_us`` (NeuroBench scores no frame of a file's first 0.5 s)."""
    return boxes[boxes["t"] >= skip_us]


def bin_labels(boxes: np.ndarray, start_us: int, delta_t_us: int, num_tbins: int) -> list[np.ndarray]:
    """Per-bin ground truth: for bin ``k`` (events ``[s_k, s_k + dt)``), the boxes of the last
    label timestamp in ``(s_k, s_k + dt]``, stamped ``s_k + dt``; empty where there is none."""
    out = []
    t = boxes["t"]
    for k in range(num_tbins):
        lo, hi = start_us + k * delta_t_us, start_us + (k + 1) * delta_t_us
        inside = (t > lo) & (t <= hi)
        if not inside.any():
            out.append(boxes[:0].copy())
            continue
        last = t[inside].max()
        frame = boxes[t == last].copy()
        frame["t"] = hi
        out.append(frame)
    return out


@dataclass(frozen=True)
class LabelPipeline:
    """Raw Gen4 labels (at ``sensor`` size) -> 3-class boxes at ``network`` size: clip,
    map classes, rescale, box filter (at its own resolution), skip the first ``skip_us``."""

    sensor: tuple[int, int] = (1280, 720)
    network: tuple[int, int] = (640, 360)
    box_filter: BoxFilter = BoxFilter()
    skip_us: int = 500_000
    mapping: tuple[tuple[int, int], ...] = tuple(GEN4_TO_DETECTION.items())

    def __call__(self, boxes: np.ndarray) -> np.ndarray:
        out = map_classes(clip_boxes(boxes, *self.sensor), dict(self.mapping))
        out = rescale(out, self.network[0] / self.sensor[0], self.network[1] / self.sensor[1])
        return skip_start(self.box_filter(out, self.network), self.skip_us)
