"""Event tensors for detection: histograms and the 6-channel multi-channel time surface.

Both follow Prophesee's ``metavision_ml`` preprocessings as restated in NeuroBench's Gen4
task (``research/wave2-tasks.md`` §3), over ``num_tbins`` bins of ``delta_t_us`` from
``start_us``; pixel ``(x >> downsample, y >> downsample)``; events outside the window or the
frame are ignored. Output ``(num_tbins, C, height, width)`` float32.

- ``histo`` (C = 2, polarity): each event adds ``1 / (max_incr * 4**downsample)`` to its
  (bin, polarity, pixel) cell; cells are clipped to 1 (computed as count / (max_incr *
  4**downsample), one rounding, instead of a float sum of increments).
- ``multi_channel_timesurface`` (C = 6): each bin is split into 3 micro-bins; plane
  ``2 * micro_bin + p`` holds the normalised time ``(t - micro_bin_start) / (delta_t / 3)``
  in [0, 1) of the latest event of that pixel, micro-bin and polarity (0 where none).

Compiled with numba: one pass over the events, no Python loop per event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numba
import numpy as np

from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE

#: Channels of each preprocessing.
CHANNELS = {"histo": 2, "multi_channel_timesurface": 6}


@numba.njit(cache=True, nogil=True, inline="always")
def _cell(t, x, y, i, start, dt, bins, height, width, ds):  # pragma: no cover - compiled
    """(time since the window start, bin, x, y) of event ``i``; bin -1 when the event falls
    outside the window or the frame."""
    rel = t[i] - start
    b = rel // dt
    xi, yi = x[i] >> ds, y[i] >> ds
    if rel < 0 or b >= bins or xi < 0 or yi < 0 or xi >= width or yi >= height:
        return rel, -1, xi, yi
    return rel, b, xi, yi


@numba.njit(cache=True, nogil=True)
def _histo(t, x, y, p, start, dt, bins, height, width, ds, out):  # pragma: no cover - compiled
    for i in range(t.shape[0]):
        _, b, xi, yi = _cell(t, x, y, i, start, dt, bins, height, width, ds)
        if b >= 0:
            out[b, p[i] & 1, yi, xi] += 1
    return out


@numba.njit(cache=True, nogil=True)
def _timesurface(t, x, y, p, start, dt, bins, height, width, ds, out):  # pragma: no cover - compiled
    for i in range(t.shape[0]):
        rel, b, xi, yi = _cell(t, x, y, i, start, dt, bins, height, width, ds)
        if b < 0:
            continue
        within = (rel - b * dt) * 3.0 / dt  # micro-bins of dt/3, in micro-bin units
        ub = min(int(within), 2)
        value = within - ub
        c = 2 * ub + (p[i] & 1)
        if value > out[b, c, yi, xi]:
            out[b, c, yi, xi] = value
    return out


@dataclass(frozen=True)
class EventTensor:
    """Events -> ``(num_tbins, C, height, width)``; see the module docstring.

    Example:
        >>> from neuromark.data.event_dtypes import make_camera_events
        >>> ev = make_camera_events([0, 10_000, 30_000], [0, 2, 2], [0, 0, 0], [1, 1, 0])
        >>> tensor = EventTensor("multi_channel_timesurface", delta_t_us=50_000, num_tbins=1,
        ...                      height=1, width=2, downsample=1)
        >>> [round(float(v), 2) for v in tensor(ev, start_us=0)[0, :, 0, 1]]
        [0.0, 0.6, 0.8, 0.0, 0.0, 0.0]
    """

    kind: Literal["histo", "multi_channel_timesurface"] = "multi_channel_timesurface"
    delta_t_us: int = 50_000
    num_tbins: int = 1
    height: int = 360
    width: int = 640
    downsample: int = 1
    max_incr: float = 5.0

    def __post_init__(self) -> None:
        if self.kind not in CHANNELS:
            raise ValueError(f"kind must be one of {sorted(CHANNELS)}, got {self.kind!r}")
        if min(self.delta_t_us, self.num_tbins, self.height, self.width) <= 0 or self.downsample < 0:
            raise ValueError("delta_t_us, num_tbins, height, width must be positive, downsample >= 0")

    @property
    def channels(self) -> int:
        return CHANNELS[self.kind]

    def __call__(self, events: np.ndarray, *, start_us: int) -> np.ndarray:
        """One window's events (``CAMERA_EVENT_DTYPE`` fields) -> float32 tensor."""
        out = np.zeros((self.num_tbins, self.channels, self.height, self.width), np.float32)
        t = np.ascontiguousarray(events["t"], np.int64)
        x, y = (np.ascontiguousarray(events[k], np.int64) for k in ("x", "y"))
        p = np.ascontiguousarray(events["p"], np.int64)
        args = (t, x, y, p, np.int64(start_us), np.int64(self.delta_t_us), self.num_tbins, self.height,
                self.width, self.downsample)
        if self.kind == "histo":
            counts = _histo(*args, np.zeros(out.shape, np.int32))
            np.minimum(counts / (self.max_incr * 4 ** self.downsample), 1.0, out=out, casting="unsafe")
        else:
            _timesurface(*args, out)
        return out


__all__ = ["CAMERA_EVENT_DTYPE", "CHANNELS", "EventTensor"]
