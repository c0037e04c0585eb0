"""The N-MNIST recording format: 40-bit (5-byte) event words, read and written.

Layout, as published with the data set (Orchard et al. 2015, "Converting static image
datasets to spiking neuromorphic datasets using saccades", Front. Neurosci. 9:437,
https://doi.org/10.3389/fnins.2015.00437, and the data set's page
https://www.garrickorchard.com/datasets/n-mnist): a recording is a sequence of 5-byte
words, one event each, big-endian bit numbering over the 40 bits:

=========  ===========  ==========================================
byte       bits         field
=========  ===========  ==========================================
0          39..32       x address (pixels; 0..33 on the 34 x 34 sensor)
1          31..24       y address (pixels; 0..33)
2, bit 7   23           polarity (0 = OFF, 1 = ON)
2, bits    22..16       timestamp bits 22..16
6..0
3          15..8        timestamp bits 15..8
4          7..0         timestamp bits 7..0
=========  ===========  ==========================================

The timestamp is in microseconds from the start of the recording (23 bits: at most
8,388,607 µs; a recording lasts about 0.3 s). Events are written in time order; this reader
refuses a decreasing timestamp. SLAYER's ``NMNISTsmall`` subset (``<N>.bs2``) repackages the
same recordings in the same layout.

Decoded events are :data:`~neuromark.data.event_dtypes.CAMERA_EVENT_DTYPE` (``t`` µs,
``x``, ``y``, ``p``), in file order. Every refusal is a :class:`~neuromark.errors.DataError`
naming the file and the byte offset of the first word that breaks the rule, before any
event is returned. :func:`encode_events` writes the layout (fixtures and tests).

Not part of the published layout: event-Python's reader (and tonic's, after it) treats a
word with y = 240 as a timestamp-overflow marker; no N-MNIST recording holds one (the
timestamps fit 23 bits), so here it is an out-of-range y like any other.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE
from neuromark.errors import DataError

#: Bytes per event word.
WORD_BYTES = 5
#: Sensor (width, height, polarities) of the ATIS recordings of N-MNIST.
SENSOR_SIZE = (34, 34, 2)
#: Timestamp width in bits (the largest timestamp is ``2**TIME_BITS - 1`` µs).
TIME_BITS = 23
MAX_TIME_US = (1 << TIME_BITS) - 1


def decode_words(data: bytes | bytearray | memoryview | np.ndarray, *,
                 name: str | os.PathLike[str] = "<memory>",
                 width: int = SENSOR_SIZE[0], height: int = SENSOR_SIZE[1]) -> np.ndarray:
    """Events of one recording's bytes.

    Args:
        data: the recording's bytes (length a multiple of :data:`WORD_BYTES`).
        name: the file named in error messages.
        width, height: the sensor; ``x < width`` and ``y < height`` are required.

    Returns:
        (N,) :data:`CAMERA_EVENT_DTYPE` events, N = ``len(data) // 5``, in file order.

    Raises:
        DataError: a length that is not a whole number of words, an x or y outside the
            sensor, or a timestamp before the previous event's, naming ``name`` and the
            byte offset of the first offending word.
    """
    raw = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data.astype(np.uint8)
    if raw.size % WORD_BYTES:
        whole = raw.size - raw.size % WORD_BYTES
        raise DataError(f"{name}: byte {whole}: {raw.size} bytes is not a whole number of "
                        f"{WORD_BYTES}-byte N-MNIST event words ({raw.size % WORD_BYTES} byte(s) "
                        "left over at the end; truncated or not an N-MNIST recording)")
    words = raw.reshape(-1, WORD_BYTES)
    x, y = words[:, 0], words[:, 1]
    for axis, values, limit in (("x", x, width), ("y", y, height)):
        bad = values >= limit
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise DataError(f"{name}: byte {first * WORD_BYTES}: event {first}: "
                            f"{axis} = {int(values[first])} "
                            f"is outside the {width} x {height} sensor ({axis} must be 0..{limit - 1}; "
                            f"{int(bad.sum())} event(s) out of range)")
    t = (words[:, 2].astype(np.int64) & 0x7F) << 16
    t |= words[:, 3].astype(np.int64) << 8
    t |= words[:, 4].astype(np.int64)
    if t.size > 1:
        back = np.diff(t) < 0
        if back.any():
            first = int(np.flatnonzero(back)[0]) + 1
            raise DataError(f"{name}: byte {first * WORD_BYTES}: event {first}: timestamp {int(t[first])} us "
                            f"is before the previous event's {int(t[first - 1])} us (N-MNIST events are "
                            f"in time order; {int(back.sum())} such step(s) back)")
    events = np.empty(len(words), CAMERA_EVENT_DTYPE)
    events["t"], events["x"], events["y"] = t, x, y
    events["p"] = words[:, 2] >> 7
    return events


def read_recording(path: str | os.PathLike[str]) -> np.ndarray:
    """Events of one recording file (``.bin`` as distributed, ``.bs2`` as SLAYER ships
    them); see :func:`decode_words`. A file that cannot be read is a :class:`DataError`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read the N-MNIST recording: {exc.strerror or exc}") from None
    return decode_words(data, name=path)


def encode_events(events: np.ndarray) -> bytes:
    """The 5-byte words of ``events`` (fields ``t`` µs, ``x``, ``y``, ``p``), the inverse
    of :func:`decode_words`; raises ``ValueError`` for a field that does not fit its bits
    (x, y 0..255, p 0/1, t 0..2^23-1)."""
    t = np.asarray(events["t"], np.int64)
    x, y, p = (np.asarray(events[k], np.int64) for k in ("x", "y", "p"))
    for field, values, top in (("x", x, 255), ("y", y, 255), ("p", p, 1), ("t", t, MAX_TIME_US)):
        if values.size and (values.min() < 0 or values.max() > top):
            raise ValueError(f"{field} must be 0..{top} to fit the N-MNIST word")
    words = np.empty((len(t), WORD_BYTES), np.uint8)
    words[:, 0], words[:, 1] = x, y
    words[:, 2] = (p << 7) | (t >> 16)
    words[:, 3] = (t >> 8) & 0xFF
    words[:, 4] = t & 0xFF
    return words.tobytes()


def write_recording(path: str | os.PathLike[str], events: np.ndarray) -> Path:
    """Write ``events`` as one recording (:func:`encode_events`); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(encode_events(events))
    return target
