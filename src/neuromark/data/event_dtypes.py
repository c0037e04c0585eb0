"""The event dtype for 1-D spike events (cochlea channels, neurons).

One structured dtype, as in tonic: ``t`` is the spike time in **microseconds** (int64,
the floor of ``seconds * 1e6``), ``unit`` the channel index (uint16, 0..channels-1).

Example:
    >>> ev = make_spike_events([0.0015, 0.25], [3, 699])
    >>> ev["t"].tolist(), ev["unit"].tolist()
    ([1500, 250000], [3, 699])
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

#: Structured dtype of one spike event: time in microseconds, channel index.
SPIKE_EVENT_DTYPE = np.dtype([("t", "<i8"), ("unit", "<u2")])

#: Time unit of the ``t`` field, as a factor from seconds.
US_PER_S = 1_000_000


def seconds_to_us(times_s: ArrayLike) -> np.ndarray:
    """Times in seconds (any float dtype, e.g. float16 from SHD) to int64 microseconds.

    Rounds down, as ``tonic`` does, after widening to float64 so that float16 values are
    converted exactly (every float16 value times 1e6 is exact in float64).
    """
    scaled = np.array(times_s, dtype=np.float64)  # a copy, scaled in place
    scaled *= US_PER_S
    np.floor(scaled, out=scaled)
    return scaled.astype(np.int64)


def make_spike_events(times_s: ArrayLike, units: ArrayLike) -> np.ndarray:
    """Structured array of :data:`SPIKE_EVENT_DTYPE` from times in seconds and channel indices."""
    times = np.asarray(times_s)
    unit_arr = np.asarray(units)
    if times.shape != unit_arr.shape or times.ndim != 1:
        raise ValueError(f"times and units must be 1-D of equal length, got shapes "
                         f"{times.shape} and {unit_arr.shape}")
    events = np.empty(times.shape[0], dtype=SPIKE_EVENT_DTYPE)
    events["t"] = seconds_to_us(times)
    events["unit"] = unit_arr
    return events


#: Structured dtype of one camera event (DAT/EVT readers, DVS Gesture): time in
#: microseconds, pixel column ``x`` and row ``y``, polarity ``p`` (0 = OFF, 1 = ON).
#: Aligned (itemsize 16), the layout expelliarmus returns, so its arrays are viewed
#: without a copy.
CAMERA_EVENT_DTYPE = np.dtype([("t", "<i8"), ("x", "<i2"), ("y", "<i2"), ("p", "i1")], align=True)


def make_camera_events(t_us: ArrayLike, x: ArrayLike, y: ArrayLike, p: ArrayLike) -> np.ndarray:
    """Structured array of :data:`CAMERA_EVENT_DTYPE` from equal-length 1-D columns."""
    cols = [np.asarray(c) for c in (t_us, x, y, p)]
    if len({c.shape for c in cols}) != 1 or cols[0].ndim != 1:
        raise ValueError(f"t, x, y, p must be 1-D of equal length, got shapes {[c.shape for c in cols]}")
    events = np.empty(cols[0].shape[0], dtype=CAMERA_EVENT_DTYPE)
    for name, col in zip(("t", "x", "y", "p"), cols):
        events[name] = col
    return events
