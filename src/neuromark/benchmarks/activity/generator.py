"""Offline WISDM generator: wrist (and pocket) motion per activity, in the raw UCI 507 layout.

Writes ``wisdm-dataset/raw/{watch,phone}/{accel,gyro}/data_<subject>_<sensor>_<device>.txt``
(lines ``subject,activity,timestamp,x,y,z;``, timestamps in ns at a nominal 20 Hz) and,
with ``arrays``, NeuroBench's released-array layout ``watch_subset2_40.npz`` made from those
files by the reader's window-level split (seed 42, one-hot ``uint8`` labels, as the
neurobench generator saved them).

What it models, per activity (:data:`ACTIVITY_MODELS`):
- a wrist posture: the direction of gravity in the sensor frame (9.81 m/s²);
- a periodic movement: fundamental frequency, harmonic weights, accelerometer amplitude
  (m/s²) along an activity-specific axis, gyroscope amplitude (rad/s) about another axis;
- irregularity: a slow random (AR(1)) modulation of amplitude, e.g. catching and folding;
per subject (seeded): a posture rotation (up to ``posture_deg``), a tempo factor (gait and
movement rate), an amplitude factor, a physiological tremor (8-12 Hz, subject-specific
amplitude), sensor noise; per file: clock jitter, dropped and duplicated samples, a random
start time, and separate accelerometer and gyroscope clocks (so the join has work to do).

What it does not model: real biomechanics or sensor physics (no integration of a limb
model, gyroscope and accelerometer are not kinematically consistent), transitions between
activities, device differences (Nexus/Galaxy phones, LG watch), the release's known timing
defects beyond jitter/drops/duplicates, or the arff feature files. Its figures say nothing
about real WISDM accuracy; they test that the pipeline and models work.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import Field

from neuromark.benchmarks.activity.wisdm import WisdmWindows
from neuromark.config import Seed, StrictModel

VERSION = 1
G = 9.81
#: code -> (gravity direction, frequency Hz, harmonics, accel amp m/s2, accel axis,
#: gyro amp rad/s, gyro axis, irregularity 0..1)
ACTIVITY_MODELS: dict[str, tuple[tuple[float, float, float], float, tuple[float, ...], float,
                                  tuple[float, float, float], float, tuple[float, float, float], float]] = {
    "A": ((0.2, -0.9, 0.3), 1.8, (1.0, 0.4), 3.0, (0.3, 1.0, 0.2), 1.2, (1.0, 0.2, 0.1), 0.1),
    "B": ((0.3, -0.8, 0.4), 2.7, (1.0, 0.6, 0.3), 9.0, (0.2, 1.0, 0.3), 3.5, (1.0, 0.3, 0.2), 0.1),
    "C": ((0.2, -0.9, 0.4), 1.6, (1.0, 0.5), 3.5, (0.4, 1.0, 0.3), 1.4, (1.0, 0.3, 0.3), 0.3),
    "D": ((0.1, -0.3, 0.9), 0.3, (1.0,), 0.2, (0.5, 0.5, 0.5), 0.05, (0.5, 0.5, 0.5), 0.5),
    "E": ((0.1, -0.95, 0.1), 0.3, (1.0,), 0.3, (0.5, 0.5, 0.5), 0.06, (0.5, 0.5, 0.5), 0.5),
    "F": ((0.0, 0.1, 0.99), 5.0, (1.0, 0.3), 0.6, (0.1, 0.2, 1.0), 0.25, (1.0, 0.1, 0.1), 0.4),
    "G": ((-0.8, 0.3, 0.4), 3.5, (1.0, 0.5), 2.5, (1.0, 0.2, 0.1), 2.0, (0.1, 0.2, 1.0), 0.2),
    "H": ((-0.3, 0.5, 0.7), 0.8, (1.0, 0.3), 1.5, (0.3, 1.0, 0.4), 0.9, (1.0, 0.3, 0.1), 0.4),
    "I": ((-0.4, 0.4, 0.7), 0.7, (1.0, 0.3), 1.3, (0.4, 1.0, 0.3), 0.8, (0.8, 0.5, 0.1), 0.5),
    "J": ((-0.3, 0.4, 0.8), 0.7, (1.0, 0.3), 1.4, (0.3, 1.0, 0.5), 0.9, (1.0, 0.4, 0.2), 0.4),
    "K": ((-0.5, 0.6, 0.5), 0.4, (1.0,), 1.2, (0.2, 1.0, 0.2), 0.7, (1.0, 0.1, 0.3), 0.5),
    "L": ((-0.4, 0.5, 0.6), 0.6, (1.0, 0.2), 1.2, (0.3, 1.0, 0.3), 0.8, (0.9, 0.4, 0.2), 0.5),
    "M": ((0.3, -0.9, 0.2), 1.2, (1.0, 0.7, 0.4), 5.0, (0.5, 1.0, 0.3), 2.0, (1.0, 0.4, 0.3), 0.6),
    "O": ((0.2, -0.5, 0.8), 0.5, (1.0, 0.8, 0.5), 4.0, (0.4, 0.6, 1.0), 2.2, (0.3, 1.0, 0.4), 0.8),
    "P": ((0.1, -0.6, 0.8), 1.9, (1.0, 0.8, 0.4), 8.0, (0.1, 0.3, 1.0), 3.0, (1.0, 0.2, 0.2), 0.2),
    "Q": ((0.1, 0.3, 0.95), 3.0, (1.0, 0.6), 0.9, (1.0, 0.4, 0.1), 0.5, (0.1, 0.2, 1.0), 0.4),
    "R": ((0.9, 0.1, 0.4), 2.4, (1.0, 0.9, 0.7, 0.5), 7.0, (1.0, 0.1, 0.2), 2.5, (0.2, 1.0, 0.2), 0.2),
    "S": ((0.2, 0.2, 0.95), 0.35, (1.0, 0.5), 2.5, (0.7, 0.7, 0.3), 1.2, (0.5, 0.5, 0.7), 0.8),
}


class WisdmSurrogate(StrictModel):
    """Options of the ``synthesize:`` data set option of ``wisdm``."""

    subjects: int = Field(51, ge=1, le=51, description="subjects 1600.. (the release: 51)")
    seconds: float = Field(180.0, gt=2, description="seconds per activity (the release: 180)")
    activities: str = Field("".join(ACTIVITY_MODELS), description="activity codes written")
    phone: bool = Field(True, description="write the phone's files too")
    arrays: bool = Field(False, description="also write watch_subset2_40.npz (NeuroBench's layout)")
    posture_deg: float = Field(25.0, ge=0, le=90)
    seed: Seed = 0


def _rotation(rng: np.random.Generator, max_deg: float) -> np.ndarray:
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = np.deg2rad(rng.uniform(-max_deg, max_deg))
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _unit(v: tuple[float, float, float]) -> np.ndarray:
    a = np.asarray(v, float)
    return a / np.linalg.norm(a)


def _ar1(rng: np.random.Generator, n: int, rho: float) -> np.ndarray:
    out = np.empty(n)
    noise = rng.normal(size=n) * np.sqrt(1 - rho ** 2)
    out[0] = rng.normal()
    for i in range(1, n):
        out[i] = rho * out[i - 1] + noise[i]
    return out


def activity_signals(code: str, t: np.ndarray, subject: dict[str, float | np.ndarray],
                     rng: np.random.Generator, device: str) -> tuple[np.ndarray, np.ndarray]:
    """(accel (n, 3) m/s², gyro (n, 3) rad/s) of one activity at times ``t`` (s)."""
    gdir, freq, harmonics, a_amp, a_axis, g_amp, g_axis, irregular = ACTIVITY_MODELS[code]
    if device == "phone":  # in the pocket: the legs' rhythm, hand movements damped
        a_amp, g_amp = (a_amp, g_amp) if code in "ABCM" else (0.15 * a_amp, 0.15 * g_amp)
        gdir = (0.0, -0.95, 0.3)
    rot = subject["rotation"]
    f = freq * float(subject["tempo"]) * (1 + 0.03 * rng.normal())
    phase = 2 * np.pi * f * t
    wave = sum(w * np.sin(h * phase + rng.uniform(0, 2 * np.pi)) for h, w in enumerate(harmonics, 1))
    dwave = sum(w * h * np.cos(h * phase) for h, w in enumerate(harmonics, 1))
    envelope = 1 + irregular * 0.8 * _ar1(rng, len(t), 0.97)
    gain = float(subject["gain"])
    accel = G * (rot @ _unit(gdir)) + np.outer(gain * a_amp * envelope * wave, rot @ _unit(a_axis))
    gyro = np.outer(gain * g_amp * envelope * dwave / max(1.0, len(harmonics)), rot @ _unit(g_axis))
    tremor_f = float(subject["tremor_hz"])
    tremor = float(subject["tremor"]) * np.sin(2 * np.pi * tremor_f * t)[:, None] * rng.normal(size=3)
    accel += tremor + 0.08 * rng.normal(size=accel.shape)
    gyro += 0.3 * tremor + 0.02 * rng.normal(size=gyro.shape)
    return accel, gyro


def _clock(rng: np.random.Generator, seconds: float, start_ns: int) -> np.ndarray:
    """Sample times (ns): 20 Hz with jitter, ~1 % drops and ~0.5 % duplicates."""
    n = int(seconds * 20)
    t = start_ns + (np.arange(n) * 50e6 + rng.normal(0, 3e6, n)).astype(np.int64)
    t = np.sort(t[rng.random(n) > 0.01])
    dup = rng.random(len(t)) < 0.005
    return np.sort(np.concatenate([t, t[dup] + rng.integers(1, 5_000_000, int(dup.sum()))]))


def write_wisdm(root: Path, settings: WisdmSurrogate) -> None:
    """Write the surrogate (see the module docstring) into ``root``."""
    rng = np.random.default_rng(settings.seed)
    raw = root / "wisdm-dataset" / "raw"
    devices = ("watch", "phone") if settings.phone else ("watch",)
    for index in range(settings.subjects):
        sid = 1600 + index
        srng = np.random.default_rng([settings.seed, sid])
        subject = {"rotation": _rotation(srng, settings.posture_deg), "tempo": srng.uniform(0.85, 1.15),
                   "gain": srng.uniform(0.7, 1.3), "tremor_hz": srng.uniform(8, 12),
                   "tremor": srng.uniform(0.02, 0.4)}
        for device in devices:
            lines: dict[str, list[str]] = {"accel": [], "gyro": []}
            start = int(rng.integers(10 ** 13, 10 ** 14))
            for code in settings.activities:
                clocks = {s: _clock(srng, settings.seconds, start + int(srng.integers(0, 40_000_000)))
                          for s in lines}
                span = max(c[-1] for c in clocks.values()) - start
                for sensor, clock in clocks.items():
                    t = (clock - start) / 1e9
                    accel, gyro = activity_signals(code, t, subject, srng, device)
                    values = accel if sensor == "accel" else gyro
                    lines[sensor] += [f"{sid},{code},{ts},{x:.7g},{y:.7g},{z:.7g};"
                                      for ts, (x, y, z) in zip(clock.tolist(), values.tolist())]
                start += span + int(srng.integers(10 ** 9, 10 ** 10))  # a pause between activities
            for sensor, text in lines.items():
                path = raw / device / sensor / f"data_{sid}_{sensor}_{device}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(text) + "\n", encoding="ascii")
    if settings.arrays:
        write_arrays(root)


def write_arrays(root: Path, name: str = "watch_subset2_40.npz") -> Path:
    """NeuroBench's array layout from the raw files at ``root`` (window split, seed 42)."""
    parts = [WisdmWindows(root, split, split_by="window", seed=42).arrays()
             for split in ("train", "valid", "test")]
    eye = np.eye(7, dtype=np.uint8)
    target = root / name
    np.savez(target, *[x for x, _ in parts], *[eye[y] for _, y in parts])
    return target
