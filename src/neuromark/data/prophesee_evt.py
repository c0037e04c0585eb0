"""neuromark's own decoders of Prophesee's EVT 2.0 and EVT 3.0 event words (numpy, vectorised).

Written from Prophesee's published layouts (Metavision SDK docs, "Data Encoding Formats":
"EVT 2.0 Format", https://docs.prophesee.ai/stable/data/encoding_formats/evt2.html, and
"EVT 3.0 Format", https://docs.prophesee.ai/stable/data/encoding_formats/evt3.html); no
other decoder's code was read or copied. The 4 most significant bits of each word are its
type; words are little-endian (the sensors' default).

**EVT 3.0** (16-bit words; bits ``[15:12]`` the type):

======== ============= =======================================================================
type     name          payload
======== ============= =======================================================================
``0000`` EVT_ADDR_Y    ``[11]`` system type (master/slave), ``[10:0]`` y; sets the row
``0010`` EVT_ADDR_X    ``[11]`` polarity, ``[10:0]`` x: one CD event at (x, row, time)
``0011`` VECT_BASE_X   ``[11]`` polarity, ``[10:0]`` x: the base of the vectors that follow
``0100`` VECT_12       ``[11:0]`` valid bits: bit k set = an event at base + k; base += 12
``0101`` VECT_8        ``[7:0]`` valid bits: bit k set = an event at base + k; base += 8
``0110`` EVT_TIME_LOW  ``[11:0]``: the low 12 bits of the 24-bit time base
``0111`` CONTINUED_4   extra data of an OTHERS word (skipped)
``1000`` EVT_TIME_HIGH ``[11:0]``: the high 12 bits of the 24-bit time base
``1010`` EXT_TRIGGER   ``[11:8]`` channel id, ``[0]`` value (edge)
``1110`` OTHERS        extensions (skipped, with the CONTINUED words after them)
``1111`` CONTINUED_12  extra data of an OTHERS word (skipped)
======== ============= =======================================================================

Time (µs) = ``(TIME_HIGH << 12) | TIME_LOW``, each part the last one seen: a TIME_LOW word
sets only the low 12 bits, so a TIME_LOW smaller than the previous one is a step back
within the same TIME_HIGH, never an overflow (the sensor sends a new TIME_HIGH when the
high part moves). The 24-bit time base itself wraps every 2**24 µs (16.8 s): a TIME_HIGH
more than half its range (2048) below the previous one is such a wrap and adds 2**24 µs to
what follows; a smaller decrease is left as it is (the event contract then refuses the
times that run backwards). This is where we differ from expelliarmus 1.1.x, which counts
every decrease of TIME_LOW as an overflow of 4096 µs (its issue #19, "durations too long";
on Prophesee's own EVT 3.0 sample it puts 199,475 of 219,596 events 4,096 µs × 1..11 late,
outside the 11,718,656..11,730,943 µs that the file's TIME_HIGH words state).

**EVT 2.0** (32-bit words; bits ``[31:28]`` the type):

======== ============= =======================================================================
``0000`` CD_OFF        ``[27:22]`` time low 6 bits, ``[21:11]`` x, ``[10:0]`` y; polarity 0
``0001`` CD_ON         the same, polarity 1
``1000`` EVT_TIME_HIGH ``[27:0]``: time bits 6..33
``1010`` EXT_TRIGGER   ``[27:22]`` time low 6 bits, ``[12:8]`` channel id, ``[0]`` value
``1110`` OTHERS        skipped
``1111`` CONTINUED     skipped
======== ============= =======================================================================

Time (µs) = ``(TIME_HIGH << 6) | low``, 34 bits; a TIME_HIGH more than half its range below
the previous one is a wrap of 2**34 µs.

Both decoders are single-pass state machines compiled with numba (a count pass, then a
fill pass; ``bench/prophesee_read.py --raw`` times them against expelliarmus).

In both, CD events and triggers before the first TIME_HIGH have no time and are dropped
(counted in :attr:`Decoded.before_time_high`), vector words before any VECT_BASE_X,
events before any EVT_ADDR_Y and vector pixels past column 2047 (EVT 3.0 addresses 2048
columns; a run of vectors without a new base can overflow it) have no valid address and
are dropped the same way (:attr:`Decoded.without_address`). A word of a reserved type is
an error naming its byte offset (:class:`DecodeProblem`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neuromark._numba import numba
from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE

#: Structured dtype of external trigger events: time µs, channel id, value (edge).
TRIGGER_DTYPE = np.dtype([("t", "<i8"), ("id", "u1"), ("value", "u1")])

EVT3_TYPES = {0x0: "EVT_ADDR_Y", 0x2: "EVT_ADDR_X", 0x3: "VECT_BASE_X", 0x4: "VECT_12",
              0x5: "VECT_8", 0x6: "EVT_TIME_LOW", 0x7: "CONTINUED_4", 0x8: "EVT_TIME_HIGH",
              0xA: "EXT_TRIGGER", 0xE: "OTHERS", 0xF: "CONTINUED_12"}
EVT2_TYPES = {0x0: "CD_OFF", 0x1: "CD_ON", 0x8: "EVT_TIME_HIGH", 0xA: "EXT_TRIGGER",
              0xE: "OTHERS", 0xF: "CONTINUED"}
_WORD_BYTES = {"evt2": 4, "evt3": 2}


class DecodeProblem(ValueError):
    """A word the layout does not define: its index in the word stream and its type."""

    def __init__(self, index: int, word_type: int, encoding: str) -> None:
        self.index, self.word_type, self.encoding = index, word_type, encoding
        self.byte_offset = index * _WORD_BYTES[encoding]  # from the first event word
        known = EVT3_TYPES if encoding == "evt3" else EVT2_TYPES
        super().__init__(f"word {index} has type {word_type:#06b}, reserved in "
                         f"{encoding.upper()} (known types: "
                         f"{', '.join(f'{k:04b} {v}' for k, v in known.items())})")


@dataclass(frozen=True)
class Decoded:
    """What a decoder found. ``t`` µs (int64), ``x``, ``y`` (int64), ``p`` (0/1, int8) of
    the CD events in stream order; ``triggers`` (:data:`TRIGGER_DTYPE`); counts of the
    events dropped for lack of a time or an address; ``time_high_range`` (µs): the span
    [first TIME_HIGH << shift, (last TIME_HIGH + 1) << shift) the stream's TIME_HIGH
    words state (after wraps), or None without one; ``wraps``: TIME_HIGH wraps counted."""

    t: np.ndarray
    x: np.ndarray
    y: np.ndarray
    p: np.ndarray
    triggers: np.ndarray
    before_time_high: int
    without_address: int
    time_high_range: tuple[int, int] | None
    wraps: int
    events: np.ndarray | None = None
    """The events as one :data:`~neuromark.data.event_dtypes.CAMERA_EVENT_DTYPE` array
    (``t``, ``x``, ``y``, ``p`` are its field views)."""


#: word type codes per encoding, 1 where the layout defines the type
_EVT3_KNOWN = np.array([1 if k in EVT3_TYPES else 0 for k in range(16)], np.uint8)
_EVT2_KNOWN = np.array([1 if k in EVT2_TYPES else 0 for k in range(16)], np.uint8)


@numba.njit(cache=True, nogil=True)
def _first_reserved(kinds: np.ndarray, known: np.ndarray) -> int:  # pragma: no cover - numba
    for i in range(kinds.shape[0]):
        if known[kinds[i]] == 0:
            return i
    return -1


@numba.njit(cache=True, nogil=True)
def _evt3(words: np.ndarray, fill: bool, t: np.ndarray, x: np.ndarray, y: np.ndarray,
          p: np.ndarray, trig: np.ndarray, stats: np.ndarray) -> tuple:  # pragma: no cover
    """One pass over EVT 3.0 words; ``fill=False`` only counts. ``stats``: [before_time_high,
    without_address, wraps, first_high, last_high] (highs unwrapped, -1: none)."""
    n_ev = 0
    n_tr = 0
    high = np.int64(-1)  # last TIME_HIGH payload (-1: none yet)
    loops = np.int64(0)
    low = np.int64(0)
    row = np.int64(-1)
    base = np.int64(-1)
    base_p = 0
    first_high = np.int64(-1)
    last_high = np.int64(-1)
    for i in range(words.shape[0]):
        w = np.int64(words[i])
        kind = w >> 12
        v = w & 0xFFF
        if kind == 0x8:
            if high >= 0 and v < high - 2048:
                loops += 1
            high = v
            unwrapped = v + (loops << 12)
            if first_high < 0 or unwrapped < first_high:
                first_high = unwrapped
            if unwrapped > last_high:
                last_high = unwrapped
        elif kind == 0x6:
            low = v
        elif kind == 0x0:
            row = v & 0x7FF
        elif kind == 0x3:
            base = v & 0x7FF
            base_p = (v >> 11) & 1
        elif kind == 0x2 or kind == 0x4 or kind == 0x5:
            if kind == 0x2:
                origin, pol, mask, width = v & 0x7FF, (v >> 11) & 1, np.int64(1), 0
            elif kind == 0x4:
                origin, pol, mask, width = base, base_p, v, 12
            else:
                origin, pol, mask, width = base, base_p, v & 0xFF, 8
            if high < 0 or row < 0 or origin < 0:
                count = 0
                m = mask
                while m:
                    count += m & 1
                    m >>= 1
                if high < 0:
                    stats[0] += count
                else:
                    stats[1] += count
            else:
                time = ((high + (loops << 12)) << 12) | low
                k = 0
                m = mask
                while m:
                    if m & 1 and origin + k > 2047:  # a vector run past the format's columns
                        stats[1] += 1
                    elif m & 1:
                        if fill:
                            t[n_ev] = time
                            x[n_ev] = origin + k
                            y[n_ev] = row
                            p[n_ev] = pol
                        n_ev += 1
                    m >>= 1
                    k += 1
            if width and base >= 0:
                base += width
        elif kind == 0xA:
            if high >= 0:
                if fill:
                    trig[n_tr, 0] = ((high + (loops << 12)) << 12) | low
                    trig[n_tr, 1] = (v >> 8) & 0xF
                    trig[n_tr, 2] = v & 1
                n_tr += 1
    stats[2] = loops
    stats[3] = first_high
    stats[4] = last_high
    return n_ev, n_tr


@numba.njit(cache=True, nogil=True)
def _evt2(words: np.ndarray, fill: bool, t: np.ndarray, x: np.ndarray, y: np.ndarray,
          p: np.ndarray, trig: np.ndarray, stats: np.ndarray) -> tuple:  # pragma: no cover
    """One pass over EVT 2.0 words (see :func:`_evt3`)."""
    n_ev = 0
    n_tr = 0
    high = np.int64(-1)
    loops = np.int64(0)
    first_high = np.int64(-1)
    last_high = np.int64(-1)
    for i in range(words.shape[0]):
        w = np.int64(words[i])
        kind = w >> 28
        if kind == 0x8:
            v = w & 0x0FFFFFFF
            if high >= 0 and v < high - (1 << 27):
                loops += 1
            high = v
            unwrapped = v + (loops << 28)
            if first_high < 0 or unwrapped < first_high:
                first_high = unwrapped
            if unwrapped > last_high:
                last_high = unwrapped
        elif kind <= 0x1:
            if high < 0:
                stats[0] += 1
            else:
                if fill:
                    t[n_ev] = ((high + (loops << 28)) << 6) | ((w >> 22) & 0x3F)
                    x[n_ev] = (w >> 11) & 0x7FF
                    y[n_ev] = w & 0x7FF
                    p[n_ev] = kind
                n_ev += 1
        elif kind == 0xA:
            if high >= 0:
                if fill:
                    trig[n_tr, 0] = ((high + (loops << 28)) << 6) | ((w >> 22) & 0x3F)
                    trig[n_tr, 1] = (w >> 8) & 0x1F
                    trig[n_tr, 2] = w & 1
                n_tr += 1
    stats[2] = loops
    stats[3] = first_high
    stats[4] = last_high
    return n_ev, n_tr


def _decode(words: np.ndarray, encoding: str) -> Decoded:
    """Check the word types, count, allocate, fill."""
    if encoding == "evt3":
        words = np.ascontiguousarray(words, dtype=np.uint16)
        kinds, known, kernel, shift = (words >> 12).astype(np.uint8), _EVT3_KNOWN, _evt3, 12
    else:
        words = np.ascontiguousarray(words, dtype=np.uint32)
        kinds, known, kernel, shift = (words >> 28).astype(np.uint8), _EVT2_KNOWN, _evt2, 6
    bad = _first_reserved(kinds, known)
    if bad >= 0:
        raise DecodeProblem(int(bad), int(kinds[bad]), encoding)
    stats = np.zeros(5, np.int64)
    empty = np.empty(0, CAMERA_EVENT_DTYPE)  # field views: one compiled signature
    n_ev, n_tr = kernel(words, False, empty["t"], empty["x"], empty["y"], empty["p"],
                        np.zeros((0, 3), np.int64), stats)
    events = np.empty(n_ev, CAMERA_EVENT_DTYPE)  # filled in place: no copy afterwards
    trig = np.empty((n_tr, 3), np.int64)
    stats[:] = 0
    kernel(words, True, events["t"], events["x"], events["y"], events["p"], trig, stats)
    triggers = np.empty(n_tr, TRIGGER_DTYPE)
    triggers["t"], triggers["id"], triggers["value"] = trig[:, 0], trig[:, 1], trig[:, 2]
    stated = None if stats[3] < 0 else (int(stats[3]) << shift, (int(stats[4]) + 1) << shift)
    return Decoded(events["t"], events["x"], events["y"], events["p"], triggers, int(stats[0]),
                   int(stats[1]), stated, int(stats[2]), events)


def decode_evt3(words: np.ndarray) -> Decoded:
    """Decode EVT 3.0 words (uint16, as read little-endian) by the layout in the module
    docstring; :class:`DecodeProblem` at the first word of a reserved type."""
    return _decode(words, "evt3")


def decode_evt2(words: np.ndarray) -> Decoded:
    """Decode EVT 2.0 words (uint32, as read little-endian) by the layout in the module
    docstring; :class:`DecodeProblem` at the first word of a reserved type."""
    return _decode(words, "evt2")


def word_bytes(encoding: str) -> int:
    """Bytes per word of ``encoding`` ("evt2": 4, "evt3": 2)."""
    return _WORD_BYTES[encoding]


DECODERS = {"evt2": decode_evt2, "evt3": decode_evt3}
