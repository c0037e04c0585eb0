"""Offline event-camera data: a per-pixel log-intensity threshold simulator, Gen4-style
driving scenes (``.dat`` + ``_bbox.npy``) and an 11-class DVS-Gesture surrogate (tonic's
preprocessed ``.npy`` layout).

Sensor model (as DVS pixels work; Lichtsteiner et al. 2008, Gallego et al. 2022 §2): each
pixel keeps the log intensity ``L_ref`` at its last event; when the rendered log intensity
moves by ``n`` contrast thresholds ``C`` (per pixel, ``C ~ N(threshold, threshold_sigma)``)
it fires ``n`` events of that sign, spread linearly in time over the frame interval, and
``L_ref`` moves by ``n C``. Background activity noise fires at ``noise_hz`` per pixel
(Poisson, random polarity). Scenes are rendered every ``frame_us``.

Detection scenes: a static textured background with moving unlabelled clutter blobs, and
objects of 3 labelled classes with distinct shapes, sizes and speeds (pedestrian: tall,
slow, swinging legs; two wheeler: two wheels and a rider, medium speed; car: wide body,
cabin and wheels, fast) plus unlabelled-for-evaluation trucks (Gen4 class 3), drawn far to
near so that nearer objects occlude farther ones. Labels (Gen4 class ids 0-3) every
1/60 s, as Gen4's 60 Hz labels. All randomness comes from the seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE
from neuromark.data.prophesee import BOX_DTYPE, write_boxes, write_dat

Render = Callable[[float], np.ndarray]  # time (s) -> intensity (H, W) in (0, 1]


@dataclass(frozen=True)
class SensorModel:
    """Contrast threshold (log units), its per-pixel spread, noise rate (Hz/pixel), frame step."""

    threshold: float = 0.25
    threshold_sigma: float = 0.03
    noise_hz: float = 0.05
    frame_us: int = 4000
    max_events_per_frame: int = 4


def simulate(render: Render, height: int, width: int, duration_us: int, rng: np.random.Generator,
             sensor: SensorModel = SensorModel()) -> np.ndarray:
    """Events (:data:`CAMERA_EVENT_DTYPE`, time-ordered) of a pixel array watching ``render``."""
    thresholds = np.clip(rng.normal(sensor.threshold, sensor.threshold_sigma, (height, width)), 0.05, None)
    ref = np.log(render(0.0) + 1e-2)
    chunks = []
    for start in range(0, duration_us, sensor.frame_us):
        end = min(start + sensor.frame_us, duration_us)
        level = np.log(render(end / 1e6) + 1e-2)
        diff = level - ref
        n = np.minimum(np.floor(np.abs(diff) / thresholds), sensor.max_events_per_frame).astype(np.int64)
        ys, xs = np.nonzero(n)
        if len(ys):
            counts = n[ys, xs]
            sign = diff[ys, xs] > 0
            ref[ys, xs] += np.where(sign, 1, -1) * counts * thresholds[ys, xs]
            rep = np.repeat(np.arange(len(ys)), counts)
            k = np.arange(len(rep)) - np.repeat(np.cumsum(counts) - counts, counts) + 1
            frac = k * thresholds[ys, xs][rep] / np.abs(diff[ys, xs])[rep]
            t = start + np.minimum(frac, 1.0) * (end - start)
            chunks.append((t.astype(np.int64), xs[rep], ys[rep], sign[rep].astype(np.int8)))
        noise = rng.poisson(sensor.noise_hz * height * width * (end - start) / 1e6)
        if noise:
            chunks.append((rng.integers(start, end, noise), rng.integers(0, width, noise),
                           rng.integers(0, height, noise), rng.integers(0, 2, noise).astype(np.int8)))
    if not chunks:
        return np.zeros(0, CAMERA_EVENT_DTYPE)
    t, x, y, p = (np.concatenate(c) for c in zip(*chunks))
    order = np.argsort(t, kind="stable")
    out = np.empty(len(t), CAMERA_EVENT_DTYPE)
    out["t"], out["x"], out["y"], out["p"] = t[order], x[order], y[order], p[order]
    return out


def _smooth_texture(rng: np.random.Generator, height: int, width: int, scale: int = 8) -> np.ndarray:
    coarse = rng.random((height // scale + 2, width // scale + 2))
    yi = np.linspace(0, coarse.shape[0] - 1.001, height)
    xi = np.linspace(0, coarse.shape[1] - 1.001, width)
    y0, x0 = yi.astype(int), xi.astype(int)
    fy, fx = (yi - y0)[:, None], (xi - x0)[None]
    c = coarse
    return ((1 - fy) * (1 - fx) * c[y0][:, x0] + (1 - fy) * fx * c[y0][:, x0 + 1]
            + fy * (1 - fx) * c[y0 + 1][:, x0] + fy * fx * c[y0 + 1][:, x0 + 1])


#: Per class (Gen4 ids): (width/height aspect, height range as a fraction of the frame
#: height, speed range in frame widths per second).
CLASS_SHAPES = {0: (0.4, (0.16, 0.30), (0.06, 0.15)),   # pedestrian
                1: (1.3, (0.14, 0.22), (0.20, 0.40)),   # two wheeler
                2: (2.2, (0.14, 0.24), (0.30, 0.60)),   # car
                3: (2.8, (0.26, 0.34), (0.20, 0.35))}   # truck (removed by the 3-class mapping)


@dataclass
class SceneObject:
    """One moving object; position of its box centre in pixels at ``t0`` (s), velocity px/s."""

    cls: int
    track: int
    cx: float
    cy: float
    vx: float
    vy: float
    w: float
    h: float
    t0: float
    t1: float
    shade: float
    depth: float
    phase: float = 0.0

    def box(self, t: float) -> tuple[float, float, float, float]:
        dt = t - self.t0
        return self.cx + self.vx * dt - self.w / 2, self.cy + self.vy * dt - self.h / 2, self.w, self.h

    def mask(self, u: np.ndarray, v: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(inside, shade) on box-relative coordinates u, v in [0, 1)."""
        s = self.shade
        if self.cls == 0:  # head, torso, two swinging legs
            head = (u - 0.5) ** 2 / 0.04 + (v - 0.1) ** 2 / 0.01 < 1
            torso = (np.abs(u - 0.5) < 0.3) & (v > 0.18) & (v < 0.55)
            swing = 0.2 * np.sin(2 * np.pi * 1.8 * t + self.phase)
            leg1 = (np.abs(u - 0.5 - swing * (v - 0.55)) < 0.12) & (v >= 0.55)
            leg2 = (np.abs(u - 0.5 + swing * (v - 0.55)) < 0.12) & (v >= 0.55)
            inside = head | torso | leg1 | leg2
            return inside, np.where(head, s * 0.7, s)
        if self.cls == 1:  # two wheels and a rider
            spin = np.sin(2 * np.pi * (u * 3 + self.vx / max(self.w, 1) * t))
            wheel1 = (u - 0.2) ** 2 + (v - 0.78) ** 2 * 1.7 < 0.04
            wheel2 = (u - 0.8) ** 2 + (v - 0.78) ** 2 * 1.7 < 0.04
            rider = (np.abs(u - 0.5) < 0.15) & (v < 0.6)
            frame = (np.abs(v - 0.62) < 0.06) & (u > 0.2) & (u < 0.8)
            inside = wheel1 | wheel2 | rider | frame
            return inside, np.where(wheel1 | wheel2, s * (0.6 + 0.2 * spin), s)
        # car / truck: body, cabin with windows, wheels
        body = (v > 0.4) & (v < 0.85)
        cabin = (v >= 0.05) & (v <= 0.4) & (np.abs(u - 0.5) < 0.32 - 0.3 * (0.4 - v)) if self.cls == 2 \
            else (v >= 0.0) & (u < 0.7)
        window = cabin & (np.abs(u - 0.5) < 0.25) & (v > 0.12) & (v < 0.34) & (np.abs(u - 0.5) > 0.02)
        wheels = ((((u - 0.2) ** 2 + (v - 0.85) ** 2 * 3) < 0.012)
                  | (((u - 0.8) ** 2 + (v - 0.85) ** 2 * 3) < 0.012))
        inside = body | cabin | wheels
        shade = np.where(window, s * 0.35, np.where(wheels, 0.08, s))
        return inside, shade


@dataclass
class DrivingScene:
    """A seeded scene: background, clutter and objects; ``render(t)`` gives intensity."""

    height: int
    width: int
    duration_s: float
    rng: np.random.Generator
    objects_per_s: float = 1.2
    clutter: int = 4
    objects: list[SceneObject] = field(default_factory=list)

    def __post_init__(self) -> None:
        rng, h, w = self.rng, self.height, self.width
        self.background = 0.25 + 0.5 * _smooth_texture(rng, h, w, max(4, w // 16))
        self.background[int(h * 0.55):] *= 0.6  # road
        self.blobs = [(rng.uniform(0, w), rng.uniform(0, h * 0.5), rng.uniform(-0.05, 0.05) * w,
                       rng.uniform(1.5, 4) * w / 128, rng.uniform(0.1, 0.9)) for _ in range(self.clutter)]
        n = max(2, rng.poisson(self.objects_per_s * self.duration_s))
        for track in range(n):
            cls = int(rng.choice([0, 1, 2, 3], p=[0.3, 0.25, 0.35, 0.1]))
            aspect, (h0, h1), (s0, s1) = CLASS_SHAPES[cls]
            bh = rng.uniform(h0, h1) * h
            bw = aspect * bh
            speed = rng.uniform(s0, s1) * w * rng.choice([-1, 1])
            t0 = rng.uniform(-0.5, self.duration_s * 0.8)
            span = (w + bw) / abs(speed)
            cx = -bw / 2 if speed > 0 else w + bw / 2
            cy = rng.uniform(0.45, 0.85) * h
            self.objects.append(SceneObject(cls, track + 1, cx, cy, speed, rng.uniform(-0.02, 0.02) * h,
                                            bw, bh, t0, t0 + span, rng.uniform(0.05, 0.95), cy + bh / 2,
                                            rng.uniform(0, 2 * np.pi)))
        self.objects.sort(key=lambda o: o.depth)  # far (high on screen) first

    def render(self, t: float) -> np.ndarray:
        img = self.background.copy()
        for bx, by, vx, radius, shade in self.blobs:
            x = (bx + vx * t + 2 * np.sin(3 * t + by)) % self.width
            x0, x1 = max(int(x - radius), 0), min(int(x + radius) + 2, self.width)
            y0, y1 = max(int(by - radius), 0), min(int(by + radius) + 2, self.height)
            yy, xx = np.ogrid[y0:y1, x0:x1]
            near = (xx - x) ** 2 + (yy - by) ** 2 < radius ** 2
            img[y0:y1, x0:x1][near] = shade
        for o in self.objects:
            if not o.t0 <= t <= o.t1:
                continue
            x, y, bw, bh = o.box(t)
            x0, y0 = max(int(np.floor(x)), 0), max(int(np.floor(y)), 0)
            x1, y1 = min(int(np.ceil(x + bw)), self.width), min(int(np.ceil(y + bh)), self.height)
            if x1 <= x0 or y1 <= y0:
                continue
            u = (np.arange(x0, x1)[None] + 0.5 - x) / bw
            v = (np.arange(y0, y1)[:, None] + 0.5 - y) / bh
            u, v = np.broadcast_arrays(u, v)
            inside, shade = o.mask(u, v, t)
            region = img[y0:y1, x0:x1]
            region[inside] = np.broadcast_to(shade, inside.shape)[inside]
        return img

    def labels(self, label_hz: float = 60.0) -> np.ndarray:
        """Boxes of the objects in view every ``1/label_hz`` s (Gen4 ids, pixels)."""
        rows = []
        for k in range(1, int(self.duration_s * label_hz) + 1):
            t = k / label_hz
            for o in self.objects:
                if o.t0 <= t <= o.t1:
                    x, y, bw, bh = o.box(t)
                    if x + bw > 0 and x < self.width and y + bh > 0 and y < self.height:
                        rows.append((round(t * 1e6), x, y, bw, bh, o.cls, o.track, 1.0))
        out = np.zeros(len(rows), BOX_DTYPE)
        for i, name in enumerate(("t", "x", "y", "w", "h", "class_id", "track_id", "class_confidence")):
            out[name] = [r[i] for r in rows]
        return out


def write_detection_files(root: str | Path, *, files: dict[str, int], duration_s: float = 3.0,
                          height: int = 72, width: int = 128, seed: int = 0,
                          sensor: SensorModel = SensorModel()) -> list[Path]:
    """Write ``root/<split>/scene_<seed>_<i>_td.dat`` and ``..._bbox.npy`` for each split
    (``files={"train": 8, "test": 3}``); returns the ``.dat`` paths. Deterministic per seed."""
    written = []
    for si, (split, count) in enumerate(sorted(files.items())):
        folder = Path(root) / split
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(count):
            rng = np.random.default_rng([seed, si, i])
            scene = DrivingScene(height, width, duration_s, rng)
            events = simulate(scene.render, height, width, int(duration_s * 1e6), rng, sensor)
            stem = f"scene_{seed}_{split}_{i:03d}"
            written.append(write_dat(folder / f"{stem}_td.dat", events, width=width, height=height))
            write_boxes(folder / f"{stem}_bbox.npy", scene.labels())
    return written
