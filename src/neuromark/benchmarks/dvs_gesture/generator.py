"""An offline 11-class DVS-Gesture surrogate: hands (bright discs on arms) tracing the
gestures' trajectories in front of a static body, rendered at 128x128 through the event
simulator of :mod:`neuromark.synth.camera_events` and written in tonic's preprocessed layout
(``ibmGesture{Train,Test}/user<NN>_<lighting>/<label>.npy``, (N, 4) x, y, p, t[ms]).

Classes (DVS Gesture's order): 0 clap (hands meet and part), 1/2 right/left hand wave,
3-6 right/left arm clockwise/counter-clockwise circles, 7 arm roll (hands circle each other),
8 air drums (alternating vertical beats), 9 air guitar (strum with one hand, the other
still), 10 other (a smooth random walk). Each user has their own hand size, speed,
amplitude, position, sensor threshold and noise; test users are absent from training.

The ``dvs_gesture`` data set entry (:data:`neuromark.benchmarks.dvs_gesture.reader.DVS_GESTURE`) runs
:func:`write_gesture_corpus` when its options say ``synthesize:`` (on first use, never at
validation).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neuromark.benchmarks.dvs_gesture.reader import (
    DVS_GESTURE,
    FOLDERS,
    DVSGesture,
    GestureSurrogate,
    write_sample,
)
from neuromark.synth.camera_events import SensorModel, simulate

SIZE = 128
LIGHTING = ("natural", "led", "fluorescent")


def _hands(label: int, t: float, user: dict[str, float], walk: np.ndarray) -> list[tuple[float, float]]:
    """Hand centres (x, y) at time ``t`` (s) for a gesture (y grows downwards)."""
    ph = 2 * np.pi * user["freq"] * t
    a, cx, cy = user["amp"], 64 + user["dx"], 64 + user["dy"]
    if label == 0:
        gap = 6 + a * (1 + np.cos(ph)) / 2
        return [(cx - gap, cy), (cx + gap, cy)]
    if label in (1, 2):
        side = 1 if label == 1 else -1
        return [(cx + side * 26 + 0.6 * a * np.sin(ph), cy - 24 + 3 * np.cos(2 * ph))]
    if 3 <= label <= 6:
        side = 1 if label in (3, 4) else -1
        turn = 1 if label in (3, 5) else -1
        return [(cx + side * 24 + 0.7 * a * np.cos(ph), cy - 4 + turn * 0.7 * a * np.sin(ph))]
    if label == 7:
        r = 0.35 * a
        return [(cx - 6 + r * np.cos(ph), cy + 6 + r * np.sin(ph)),
                (cx + 6 + r * np.cos(ph + np.pi), cy + 6 + r * np.sin(ph + np.pi))]
    if label == 8:
        return [(cx - 16, cy + 10 + 0.5 * a * np.sin(ph)), (cx + 16, cy + 10 - 0.5 * a * np.sin(ph))]
    if label == 9:
        return [(cx - 22, cy - 6 + 2 * np.sin(ph)),
                (cx + 14 + 4 * np.sin(ph), cy + 16 + 0.5 * a * np.sin(2 * ph))]
    k = int(t * 100) % len(walk)  # 10: other
    return [(cx + walk[k, 0], cy + walk[k, 1])]


def _user(rng: np.random.Generator) -> dict[str, float]:
    return {"freq": rng.uniform(1.2, 2.2), "amp": rng.uniform(16, 26), "dx": rng.uniform(-8, 8),
            "dy": rng.uniform(-6, 6), "radius": rng.uniform(4.5, 7.0), "shade": rng.uniform(0.6, 0.95),
            "threshold": rng.uniform(0.2, 0.3), "noise_hz": rng.uniform(0.05, 0.3)}


def render_gesture(label: int, user: dict[str, float], duration_s: float, rng: np.random.Generator
                   ) -> np.ndarray:
    """Events (t µs, quantised to ms as in the preprocessed copy) of one gesture sample."""
    steps = np.cumsum(rng.normal(0, 1.2, (int(duration_s * 100) + 1, 2)), axis=0)
    walk = np.clip(steps, -30, 30)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    background = np.full((SIZE, SIZE), 0.15)
    body = (np.abs(xx - 64 - user["dx"]) < 18) & (yy > 50 + user["dy"])
    background[body] = 0.3
    shoulders = [(64 + user["dx"] + s * 18, 54 + user["dy"]) for s in (-1, 1)]
    phase0 = rng.uniform(0, 1 / user["freq"])

    def render(t: float) -> np.ndarray:
        img = background.copy()
        for hx, hy in _hands(label, t + phase0, user, walk):
            sx, sy = shoulders[0] if hx < 64 + user["dx"] else shoulders[1]
            vx, vy = hx - sx, hy - sy
            along = np.clip(((xx - sx) * vx + (yy - sy) * vy) / max(vx * vx + vy * vy, 1e-6), 0, 1)
            arm = (xx - sx - along * vx) ** 2 + (yy - sy - along * vy) ** 2 < 4
            img[arm] = 0.45
            img[(xx - hx) ** 2 + (yy - hy) ** 2 < user["radius"] ** 2] = user["shade"]
        return img

    sensor = SensorModel(threshold=user["threshold"], noise_hz=user["noise_hz"], frame_us=5000)
    events = simulate(render, SIZE, SIZE, int(duration_s * 1e6), rng, sensor)
    events["t"] = events["t"] // 1000 * 1000
    return events


def write_gesture_corpus(root: str | Path, *, train_users: int = 8, test_users: int = 3,
                         duration_s: float = 1.2, seed: int = 0) -> list[Path]:
    """Write the surrogate (11 samples per user) under ``root``; returns the files."""
    written = []
    users = [("train", u) for u in range(1, train_users + 1)] + \
            [("test", u) for u in range(train_users + 1, train_users + test_users + 1)]
    for split, u in users:
        rng = np.random.default_rng([seed, u])
        user = _user(rng)
        folder = Path(root) / FOLDERS[split] / f"user{u:02d}_{LIGHTING[u % len(LIGHTING)]}"
        for label in range(11):
            events = render_gesture(label, user, duration_s, np.random.default_rng([seed, u, label]))
            written.append(write_sample(folder / f"{label}.npy", events))
    return written


def ensure_gesture_corpus(root: str | Path, settings: GestureSurrogate) -> Path:
    """The ``synthesize`` of the ``dvs_gesture`` entry
    (:meth:`neuromark.benchmarks.dvs_gesture.reader.DVSGestureEntry.synthesize`): written atomically into
    ``root`` unless it holds the same surrogate; a folder of other files is refused."""
    return DVS_GESTURE.synthesize(root, **settings.model_dump())


def dvs_gesture(split: str = "test", *, root: Path, n_time_bins: int = 150, train_time_bins: int = 25,
                denoise_us: float = 10_000, spatial_factor: float = 0.25,
                synthesize: GestureSurrogate | None = None) -> DVSGesture:
    """The ``dvs_gesture`` entry called (kept for old imports)."""
    return DVS_GESTURE(split, root=root, n_time_bins=n_time_bins, train_time_bins=train_time_bins,
                       denoise_us=denoise_us, spatial_factor=spatial_factor, synthesize=synthesize)


def main(argv: list[str] | None = None) -> None:
    """``python -m neuromark.benchmarks.dvs_gesture.generator ROOT [--train-users 8] [--test-users 3]``."""
    import argparse

    parser = argparse.ArgumentParser(description="Write the DVS-Gesture surrogate")
    parser.add_argument("root")
    parser.add_argument("--train-users", type=int, default=8)
    parser.add_argument("--test-users", type=int, default=3)
    parser.add_argument("--duration-s", type=float, default=1.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    files = write_gesture_corpus(args.root, train_users=args.train_users, test_users=args.test_users,
                                 duration_s=args.duration_s, seed=args.seed)
    print(f"wrote {len(files)} samples under {args.root}")


if __name__ == "__main__":
    main()
