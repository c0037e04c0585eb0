"""``neuromark data info`` for camera event files: what a file is and what it holds.

:func:`describe_event_file` reads a Prophesee ``.raw`` (EVT 2.0 / 3.0), a Prophesee /
ATIS ``.dat`` (v2 CD events, the N-CARS and Gen1/Gen4 layout) or a ``.npy`` structured
array of events (fields ``t`` in µs, ``x``, ``y``, ``p``, as expelliarmus and tonic save
them), each through its checked reader, and returns the format, the sensor and where its
size came from, the event count, the time span (µs) and the mean event rate (events/s).
SHD ``.h5`` spike files keep their own description (:mod:`neuromark.commands.data`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.data import prophesee
from neuromark.data.event_contract import check_events
from neuromark.errors import DataError

#: File endings :func:`describe_event_file` reads.
EVENT_SUFFIXES = (".raw", ".dat", ".npy")


def _load_npy(path: Path) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"{path}: not a readable .npy file: {exc}") from None
    missing = [k for k in ("t", "x", "y", "p") if k not in (arr.dtype.names or ())]
    if arr.ndim != 1 or missing:
        raise DataError(f"{path}: an event .npy is a 1-D structured array with fields t (µs), "
                        f"x, y, p; got shape {arr.shape}, dtype {arr.dtype}")
    check_events(path, arr["t"], arr["x"], arr["y"], width=None, height=None, p=arr["p"])
    return arr


def describe_event_file(path: str | os.PathLike[str], *, width: int | None = None,
                        height: int | None = None) -> dict[str, Any]:
    """Format, sensor, events, time span and rate of an event file (see the module);
    a file its reader refuses raises that reader's :class:`DataError`."""
    path = Path(path)
    suffix = path.suffix.lower()
    info: dict[str, Any] = {"file": str(path)}
    if suffix == ".raw":
        got = prophesee.read_raw_file(path, width=width, height=height)
        header, (w, h, source), events = got.header, got.sensor, got.events
        info.update(format=f"Prophesee .raw {got.encoding.upper()}", sensor=f"{w}x{h}",
                    sensor_from=source, plugin=header.keys.get("plugin_name"),
                    recorded=header.keys.get("date"),
                    time_high_range_us=(list(got.decoded.time_high_range)
                                        if got.decoded.time_high_range else None),
                    triggers=int(len(got.decoded.triggers)), notes=got.notes)
    elif suffix == ".dat":
        dat = prophesee.read_dat_header(path)
        events = prophesee.read_dat(path)
        stated = dat.width is not None and dat.height is not None
        info.update(format=f"Prophesee .dat v{dat.version} (CD events, type {dat.event_type})",
                    sensor=f"{dat.width}x{dat.height}" if stated else None,
                    sensor_from="header" if stated else "not stated",
                    recorded=next((ln[len("% Date "):] for ln in dat.lines
                                   if ln.startswith("% Date ")), None))
    elif suffix == ".npy":
        events = _load_npy(path)
        info.update(format="events .npy (t µs, x, y, p)", sensor=None, sensor_from="not stated")
    else:
        raise DataError(f"{path}: not an event file neuromark reads (endings "
                        f"{', '.join(EVENT_SUFFIXES)}, or an SHD .h5)")
    n = int(len(events))
    t = np.asarray(events["t"], dtype=np.int64)
    span = int(t[-1] - t[0]) if n else 0
    info.update(events=n, t_first_us=int(t[0]) if n else None, t_last_us=int(t[-1]) if n else None,
                span_us=span, rate_ev_per_s=(n / (span * 1e-6)) if span > 0 else None)
    if n:
        info.update(x_range=[int(events["x"].min()), int(events["x"].max())],
                    y_range=[int(events["y"].min()), int(events["y"].max())],
                    polarity_counts={str(k): int(c) for k, c in
                                     zip(*np.unique(np.asarray(events["p"]), return_counts=True))})
    return info


def format_event_info(info: dict[str, Any]) -> str:
    """The ``data info`` text of :func:`describe_event_file`'s answer."""
    lines = [f"file: {info['file']}", f"format: {info['format']}"]
    sensor = info.get("sensor")
    lines.append(f"sensor: {sensor} ({info['sensor_from']})" if sensor
                 else f"sensor: {info['sensor_from']}")
    for key in ("plugin", "recorded"):
        if info.get(key):
            lines.append(f"{key}: {info[key]}")
    if info.get("time_high_range_us"):
        lo, hi = info["time_high_range_us"]
        lines.append(f"time words: {lo} .. {hi - 1} µs (the range the TIME_HIGH words state)")
    if info.get("triggers"):
        lines.append(f"external triggers: {info['triggers']}")
    lines.extend(f"note: {note}" for note in info.get("notes", ()))
    lines.append(f"events: {info['events']}")
    if info["events"]:
        lines.append(f"time span: {info['t_first_us']} .. {info['t_last_us']} µs "
                     f"({info['span_us'] * 1e-6:.6f} s)")
        rate = info.get("rate_ev_per_s")
        lines.append(f"rate: {rate:.6g} events/s" if rate else "rate: (one time stamp)")
        lines.append(f"x range: {info['x_range'][0]} .. {info['x_range'][1]}, "
                     f"y range: {info['y_range'][0]} .. {info['y_range'][1]}")
        lines.append("polarities: " + ", ".join(f"{k}: {v}" for k, v in
                                                 info["polarity_counts"].items()))
    return "\n".join(lines)
