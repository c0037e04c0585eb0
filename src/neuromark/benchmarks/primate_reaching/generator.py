"""Offline surrogate of the primate-reaching sessions (Zenodo 583331), in the exact MATLAB
v7.3 layout that :mod:`neuromark.benchmarks.primate_reaching.reader` reads.

Model, per session (seeded):

- **Reaches.** Centre-out sessions alternate between the centre and one of 8 targets at
  80 mm; random-target sessions draw targets uniformly in a 200 x 200 mm workspace, at least
  30 mm from the cursor. After a target appears the cursor rests for a reaction time
  (150-300 ms), moves along a minimum-jerk path ``x0 + (x1 - x0)(10s^3 - 15s^4 + 6s^5)``
  (Flash & Hogan 1985) lasting ``0.3 s + 4 ms/mm`` (+-10 %), then holds 100-300 ms before
  the next target. Sampled at 250 Hz; ``t`` starts between 0.5 and 2 s.
- **Units.** 96 (``indy_*``) or 192 (``loco_*``) channels with 1-5 units each, unit 0 the
  "hash" unit (higher baseline, weaker tuning). Rate of a unit (Hz), rectified at 0::

      rate(t) = b + a (v(t + lag) . d) / v_ref + s |v(t + lag)| / v_ref + g (p(t) . e) / p_ref

  with cosine tuning to velocity v (preferred direction d, Georgopoulos et al. 1982), speed
  and position p (preferred direction e) terms, a lead ``lag`` of 50-150 ms,
  ``v_ref = 200 mm/s``, ``p_ref = 100 mm``, plus ``c . z(t)``, a coupling (about 4 Hz)
  to a shared slow drive z unrelated to movement (two Ornstein-Uhlenbeck processes, 1 s,
  :func:`latent_drive`). Spike counts are Poisson per 4-ms sample with
  times uniform inside it.

Alongside the six ``.mat`` files, ``surrogate.json`` records the recipe and every unit's
parameters, so the generating rates can be recomputed (:func:`unit_rates`); the reader
never opens it.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.benchmarks.primate_reaching.reader import SESSIONS, STEP_S
from neuromark.errors import DataError
from neuromark.io_atomic import atomic_path, write_json_atomic

#: Version of the surrogate recipe; bump it whenever the generated files would change.
SURROGATE_VERSION = "1"
V_REF, P_REF = 200.0, 100.0  # mm/s, mm


@dataclass(frozen=True)
class SurrogateSettings:
    """duration_s: length of each session; seed: session i of :data:`SESSIONS` uses seed + i;
    sessions: which to write."""

    duration_s: float = 480.0
    seed: int = 0
    sessions: tuple[str, ...] = SESSIONS


def min_jerk(x0: np.ndarray, x1: np.ndarray, n: int) -> np.ndarray:
    """(n, 2) minimum-jerk positions from x0 to x1 over n samples (both ends included)."""
    s = np.linspace(0.0, 1.0, n)[:, None]
    return x0 + (x1 - x0) * (10 * s**3 - 15 * s**4 + 6 * s**5)


def reaches(duration_s: float, rng: np.random.Generator, centre_out: bool
            ) -> tuple[np.ndarray, np.ndarray]:
    """(cursor (K, 2), target (K, 2)) in mm at 250 Hz for ``duration_s`` seconds."""
    k_total = int(round(duration_s / STEP_S))
    cursor, target = [], []
    pos = np.zeros(2)
    n, i = 0, 0
    while n < k_total:
        if centre_out:
            goal = (np.zeros(2) if i % 2 else
                    80.0 * np.array([np.cos(a := rng.integers(8) * np.pi / 4), np.sin(a)]))
        else:
            goal = pos
            while np.linalg.norm(goal - pos) < 30.0:
                goal = rng.uniform(-100, 100, 2)
        dist = float(np.linalg.norm(goal - pos))
        rt = int(rng.uniform(0.15, 0.3) / STEP_S)
        move = max(2, int((0.3 + 0.004 * dist) * rng.uniform(0.9, 1.1) / STEP_S))
        hold = int(rng.uniform(0.1, 0.3) / STEP_S)
        path = np.concatenate([np.repeat(pos[None], rt, 0), min_jerk(pos, goal, move),
                               np.repeat(goal[None], hold, 0)])
        cursor.append(path)
        target.append(np.repeat(goal[None], len(path), 0))
        n += len(path)
        pos, i = goal, i + 1
    return np.concatenate(cursor)[:k_total], np.concatenate(target)[:k_total]


def draw_units(channels: int, rng: np.random.Generator) -> list[list[dict[str, float]]]:
    """Per channel, 1-5 units' tuning parameters (unit 0: the hash unit)."""
    out = []
    for _ in range(channels):
        units = []
        for u in range(1 + min(4, rng.poisson(1.2))):
            hash_unit = u == 0
            theta, phi = rng.uniform(0, 2 * np.pi, 2)
            units.append({
                "b": rng.uniform(20, 50) if hash_unit else rng.uniform(2, 20),
                "a": rng.uniform(1, 6) if hash_unit else rng.uniform(2, 16),
                "c": rng.normal(0, 4.0, 2).tolist(),  # coupling to the shared latent drive
                "s": rng.uniform(0, 5) if hash_unit else rng.uniform(0, 10),
                "g": rng.uniform(0, 3) if hash_unit else rng.uniform(0, 8),
                "d": [float(np.cos(theta)), float(np.sin(theta))],
                "e": [float(np.cos(phi)), float(np.sin(phi))],
                "lag_steps": int(rng.integers(12, 38)),  # 48-148 ms
            })
        out.append(units)
    return out


def latent_drive(k: int, seed: int, tau_s: float = 1.0) -> np.ndarray:
    """(K, 2) shared slow drive unrelated to movement: unit-variance Ornstein-Uhlenbeck
    processes with time constant ``tau_s``, seeded (``seed`` + 1000)."""
    rng = np.random.default_rng(seed + 1000)
    a = math.exp(-STEP_S / tau_s)
    noise = rng.normal(0, math.sqrt(1 - a * a), (k, 2))
    z = np.empty((k, 2))
    z[0] = rng.normal(0, 1, 2)
    for i in range(1, k):
        z[i] = a * z[i - 1] + noise[i]
    return z


def unit_rates(unit: dict[str, Any], cursor: np.ndarray, v: np.ndarray | None = None,
               drive: np.ndarray | None = None) -> np.ndarray:
    """(K,) rate in Hz of one unit given the cursor (K, 2) in mm at 250 Hz (``v``: its
    velocity in mm/s, computed when not given; ``drive``: the session's latent drive
    (K, 2), left out when None)."""
    if v is None:
        v = np.gradient(cursor, axis=0) / STEP_S
    lag = int(unit["lag_steps"])
    v_lead = np.concatenate([v[lag:], np.repeat(v[-1:], lag, 0)])
    speed = np.sqrt(v_lead[:, 0] ** 2 + v_lead[:, 1] ** 2)
    rate = (unit["b"] + unit["a"] * (v_lead @ np.asarray(unit["d"])) / V_REF
            + unit["s"] * speed / V_REF + unit["g"] * (cursor @ np.asarray(unit["e"])) / P_REF)
    if drive is not None:
        rate = rate + drive @ np.asarray(unit["c"])
    return np.maximum(rate, 0.0)


def occupancy_probability(units: list[dict[str, Any]], cursor: np.ndarray,
                          drive: np.ndarray | None = None) -> np.ndarray:
    """(K,) probability that a channel's 4-ms sample holds a spike of any of its units."""
    v = np.gradient(cursor, axis=0) / STEP_S
    total = sum(unit_rates(u, cursor, v, drive) for u in units)
    return 1.0 - np.exp(-total * STEP_S)


def write_mat73(path: Path, t: np.ndarray, cursor: np.ndarray, target: np.ndarray,
                spikes: list[list[np.ndarray]]) -> None:
    """Write a session as MATLAB v7.3 writes it (512-byte text header, (1, K) vectors,
    cells as object references into ``#refs#``, empty cells with ``MATLAB_empty``)."""
    import h5py

    units = max(len(c) for c in spikes)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w", userblock_size=512) as f:
            refs = f.create_group("#refs#")

            def double(name: str, data: np.ndarray, where: Any = f) -> Any:
                ds = where.create_dataset(name, data=data)
                ds.attrs["MATLAB_class"] = np.bytes_("double")
                return ds

            empty = refs.create_dataset("empty", data=np.zeros(2, dtype=np.uint64))
            empty.attrs["MATLAB_class"] = np.bytes_("double")
            empty.attrs["MATLAB_empty"] = np.uint8(1)  # one empty cell, shared by reference

            double("t", t[None, :])
            double("cursor_pos", cursor.T)
            double("target_pos", target.T)
            double("finger_pos", np.stack([np.full(len(t), 5.0), -cursor[:, 0] / 10,
                                           -cursor[:, 1] / 10]))
            for field in ("spikes", "wf"):
                cells = f.create_dataset(field, shape=(units, len(spikes)), dtype=h5py.ref_dtype)
                cells.attrs["MATLAB_class"] = np.bytes_("cell")
                for c, channel in enumerate(spikes):
                    for u in range(units):
                        times = channel[u] if u < len(channel) else None
                        if field == "spikes" and times is not None and times.size:
                            ds = double(f"s{c}_{u}", times[None, :], refs)
                        else:
                            ds = empty
                        cells[u, c] = ds.ref
            names = f.create_dataset("chan_names", shape=(1, len(spikes)), dtype=h5py.ref_dtype)
            names.attrs["MATLAB_class"] = np.bytes_("cell")
            for c in range(len(spikes)):
                text = np.frombuffer(f"elec{c + 1}".encode(), dtype=np.uint8).astype(np.uint16)
                ds = refs.create_dataset(f"n{c}", data=text[:, None])
                ds.attrs["MATLAB_class"] = np.bytes_("char")
                names[0, c] = ds.ref
        header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: neuromark surrogate HDF5 schema 1.00 ."
        with open(tmp, "r+b") as handle:
            handle.write(header.ljust(116, b" ") + b"\0" * 8 + b"\x00\x02IM")


def generate_session(name: str, duration_s: float, seed: int) -> tuple[dict[str, Any], tuple]:
    """One session's (recipe record, (t, cursor, target, spikes))."""
    rng = np.random.default_rng(seed)
    channels = 96 if name.startswith("indy") else 192
    centre_out = SESSIONS.index(name) % 3 == 0 if name in SESSIONS else False
    cursor, target = reaches(duration_s, rng, centre_out)
    t = rng.uniform(0.5, 2.0) + STEP_S * np.arange(len(cursor))
    units = draw_units(channels, rng)
    drive = latent_drive(len(t), seed)
    spikes = []
    v = np.gradient(cursor, axis=0) / STEP_S
    for channel in units:
        cell = []
        for unit in channel:
            counts = rng.poisson(unit_rates(unit, cursor, v, drive) * STEP_S)
            times = np.repeat(t, counts) + rng.uniform(0, STEP_S, int(counts.sum()))
            cell.append(np.sort(times))
        spikes.append(cell)
    record = {"name": name, "seed": seed, "channels": channels, "centre_out": centre_out,
              "samples": len(t), "units": units}
    return record, (t, cursor, target, spikes)


def write_surrogate(out_dir: str | os.PathLike[str], settings: SurrogateSettings = SurrogateSettings(),
                    *, force: bool = False) -> Path:
    """Write the sessions and ``surrogate.json`` to ``out_dir``. Sessions already there
    with the same recipe (version, duration, seed) are kept unless ``force``; the manifest
    lists every session of that recipe in the folder. Returns ``out_dir``."""
    out = Path(out_dir)
    manifest = out / "surrogate.json"
    recipe = {"version": SURROGATE_VERSION, "duration_s": settings.duration_s, "seed": settings.seed}
    records: dict[str, Any] = {}
    saved: Any = None
    if manifest.exists():
        try:
            saved = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = None
        if not (isinstance(saved, dict) and isinstance(saved.get("recipe"), dict)
                and isinstance(saved.get("sessions"), list)):
            raise DataError(f"{manifest}: not a surrogate manifest written by neuromark; it is "
                            f"not replaced (not even with --force): choose an empty or new "
                            f"folder (nothing was changed)")
    if not force and saved is not None \
            and {k: saved["recipe"].get(k) for k in recipe} == recipe:
        records = {r["name"]: r for r in saved["sessions"]
                   if isinstance(r, dict) and (out / f"{r.get('name')}.mat").is_file()}
    missing = [name for name in settings.sessions if name not in records]
    if not missing:
        return out
    ours = {r.get("name") for r in (saved or {}).get("sessions", []) if isinstance(r, dict)}
    foreign = [f"{name}.mat" for name in missing
               if (out / f"{name}.mat").exists() and name not in ours]
    if foreign:
        raise DataError(f"{out}: holds {', '.join(foreign)}, not written by this generator (its "
                        f"surrogate.json does not list them); they are not replaced (not even "
                        f"with --force): choose an empty or new folder (nothing was changed)")
    out.mkdir(parents=True, exist_ok=True)
    for name in missing:
        index = SESSIONS.index(name) if name in SESSIONS else 100 + zlib.crc32(name.encode()) % 10_000
        record, (t, cursor, target, spikes) = generate_session(  # a session's seed never
            name, settings.duration_s, settings.seed + index)    # depends on the others
        write_mat73(out / f"{name}.mat", t, cursor, target, spikes)
        records[name] = record
    write_json_atomic(manifest, {"recipe": {**recipe, "sessions": sorted(records)},
                                 "sessions": [records[k] for k in sorted(records)]})
    return out


def load_truth(root: str | os.PathLike[str], session: str) -> dict[str, Any]:
    """The recorded unit parameters of one surrogate session (from ``surrogate.json``)."""
    manifest = Path(root) / "surrogate.json"
    if not manifest.is_file():
        raise DataError(f"{manifest}: no such file (not a surrogate folder?)")
    for record in json.loads(manifest.read_text(encoding="utf-8"))["sessions"]:
        if record["name"] == session:
            return record
    raise DataError(f"{manifest}: no session {session!r}")
