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

In both, CD events and triggers before the first TIME_HIGH have no time and are dropped
(counted in :attr:`Decoded.before_time_high`), vector words before any VECT_BASE_X and
events before any EVT_ADDR_Y (EVT 3.0) have no address and are dropped the same way
(:attr:`Decoded.without_address`). A word of a reserved type is an error naming its byte
offset (:class:`DecodeProblem`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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


def _last_index(mask: np.ndarray) -> np.ndarray:
    """For each position, the index of the last ``True`` at or before it (-1: none)."""
    idx = np.where(mask, np.arange(mask.shape[0]), -1)
    return np.maximum.accumulate(idx) if idx.size else idx


def _unwrapped_high(high: np.ndarray, bits: int) -> tuple[np.ndarray, int]:
    """TIME_HIGH values with their wraps added (a drop of more than half the range)."""
    h = high.astype(np.int64)
    if h.size < 2:
        return h, 0
    wrapped = np.diff(h) < -(1 << (bits - 1))
    loops = np.concatenate(([0], np.cumsum(wrapped)))
    return h + (loops << bits), int(wrapped.sum())


def _time_base(kind: np.ndarray, high_code: int, high_value: np.ndarray, bits: int,
               shift: int) -> tuple[np.ndarray, np.ndarray, tuple[int, int] | None, int]:
    """(high part µs at each word, has a TIME_HIGH been seen, range, wraps)."""
    is_high = kind == high_code
    unwrapped, wraps = _unwrapped_high(high_value[is_high], bits)
    last = _last_index(is_high)
    seen = last >= 0
    rank = np.cumsum(is_high) - 1  # which TIME_HIGH word is the last one seen
    base = np.zeros(kind.shape[0], np.int64)
    base[seen] = unwrapped[rank[seen]] << shift
    stated = None if not unwrapped.size else (int(unwrapped.min()) << shift,
                                             (int(unwrapped.max()) + 1) << shift)
    return base, seen, stated, wraps


def _check_types(kind: np.ndarray, known: dict[int, str], encoding: str) -> None:
    table = np.zeros(16, bool)
    table[list(known)] = True
    bad = np.flatnonzero(~table[kind])
    if bad.size:
        raise DecodeProblem(int(bad[0]), int(kind[bad[0]]), encoding)


def decode_evt3(words: np.ndarray) -> Decoded:
    """Decode EVT 3.0 words (uint16, as read little-endian) by the layout in the module
    docstring; :class:`DecodeProblem` at the first word of a reserved type."""
    w = np.asarray(words, dtype=np.uint16).astype(np.int64)
    kind = w >> 12
    _check_types(kind, EVT3_TYPES, "evt3")
    payload = w & 0xFFF
    base_t, seen_high, stated, wraps = _time_base(kind, 0x8, payload, 12, 12)
    is_low = kind == 0x6
    last_low = _last_index(is_low)
    t_word = base_t + np.where(last_low >= 0, payload[np.maximum(last_low, 0)], 0)

    last_y = _last_index(kind == 0x0)
    y_word = np.where(last_y >= 0, payload[np.maximum(last_y, 0)] & 0x7FF, -1)
    # vectors: the base x of each VECT word = its VECT_BASE_X + 12/8 per VECT word since
    is_base = kind == 0x3
    step = np.where(kind == 0x4, 12, np.where(kind == 0x5, 8, 0))
    before = np.cumsum(step) - step  # pixels the vectors before each word advanced
    last_base = _last_index(is_base)
    ok_base = last_base >= 0
    lb = np.maximum(last_base, 0)
    vect_x = np.where(ok_base, (payload[lb] & 0x7FF) + before - before[lb], -1)
    vect_p = (payload[lb] >> 11) & 1

    # every CD word as (origin x, polarity, mask of pixels): ADDR_X one pixel, vectors 12/8
    cd = np.flatnonzero((kind == 0x2) | (kind == 0x4) | (kind == 0x5))
    ck = kind[cd]
    origin = np.where(ck == 0x2, payload[cd] & 0x7FF, vect_x[cd])
    pol = np.where(ck == 0x2, (payload[cd] >> 11) & 1, vect_p[cd])
    mask = np.where(ck == 0x2, 1, np.where(ck == 0x4, payload[cd], payload[cd] & 0xFF))
    bits = (mask[:, None] >> np.arange(12)) & 1
    row, k = np.nonzero(bits)  # row-major: word order, then increasing pixel
    word = cd[row]
    valid_time = seen_high[word]
    valid_addr = (y_word[word] >= 0) & (origin[row] >= 0)
    keep = valid_time & valid_addr
    word, row, k = word[keep], row[keep], k[keep]
    triggers = _triggers(kind == 0xA, seen_high, t_word, (payload >> 8) & 0xF, payload & 1)
    return Decoded(t=t_word[word], x=origin[row] + k, y=y_word[word],
                   p=pol[row].astype(np.int8), triggers=triggers,
                   before_time_high=int((~valid_time).sum()),
                   without_address=int((valid_time & ~valid_addr).sum()),
                   time_high_range=stated, wraps=wraps)


def _triggers(is_trigger: np.ndarray, seen_high: np.ndarray, t_word: np.ndarray,
              channel: np.ndarray, value: np.ndarray) -> np.ndarray:
    at = np.flatnonzero(is_trigger & seen_high)
    out = np.empty(at.size, TRIGGER_DTYPE)
    out["t"], out["id"], out["value"] = t_word[at], channel[at], value[at]
    return out


def decode_evt2(words: np.ndarray) -> Decoded:
    """Decode EVT 2.0 words (uint32, as read little-endian) by the layout in the module
    docstring; :class:`DecodeProblem` at the first word of a reserved type."""
    w = np.asarray(words, dtype=np.uint32).astype(np.int64)
    kind = w >> 28
    _check_types(kind, EVT2_TYPES, "evt2")
    base_t, seen_high, stated, wraps = _time_base(kind, 0x8, w & 0x0FFFFFFF, 28, 6)
    t_word = base_t + ((w >> 22) & 0x3F)
    cd = np.flatnonzero(kind <= 0x1)
    valid = seen_high[cd]
    cd = cd[valid]
    triggers = _triggers(kind == 0xA, seen_high, t_word, (w >> 8) & 0x1F, w & 1)
    return Decoded(t=t_word[cd], x=(w[cd] >> 11) & 0x7FF, y=w[cd] & 0x7FF,
                   p=kind[cd].astype(np.int8), triggers=triggers,
                   before_time_high=int((~valid).sum()), without_address=0,
                   time_high_range=stated, wraps=wraps)


def word_bytes(encoding: str) -> int:
    """Bytes per word of ``encoding`` ("evt2": 4, "evt3": 2)."""
    return _WORD_BYTES[encoding]


DECODERS = {"evt2": decode_evt2, "evt3": decode_evt3}
