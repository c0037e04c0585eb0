"""Reading a whole Prophesee ``.raw`` file: header checked, words decoded, events checked.

The steps, each before the next starts:

1. the header (:func:`~neuromark.data.prophesee_raw.read_raw_header`): encoding, sensor,
   where the event words start; fields that disagree or an encoding neuromark does not
   decode refuse the file with a :class:`DataError` naming it;
2. the words: a file whose event bytes are not a whole number of words (2 bytes EVT 3.0,
   4 bytes EVT 2.0: a file cut mid-word) is refused naming the bytes left over and where;
   ``on_invalid="drop"`` drops that partial word instead, warns, and records it in
   :attr:`RawRead.truncated_bytes` and the counts (rule ``"truncated final word"``);
3. the decoding (:mod:`~neuromark.data.prophesee_evt`, neuromark's own decoders from
   Prophesee's published layouts): a word of a reserved type is an error naming the file,
   the byte offset and the type;
4. the input contract (:mod:`~neuromark.data.event_contract`): time range, inside the
   sensor, time order, time gap.

expelliarmus is not used; tests compare with it as an optional cross-check on EVT 2.0
(equal event for event) and EVT 3.0 (equal but for its times, see
:mod:`~neuromark.data.prophesee_evt`).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from neuromark.data.event_contract import check_events
from neuromark.data.prophesee_evt import DECODERS, Decoded, DecodeProblem, word_bytes
from neuromark.data.prophesee_raw import (
    CONVERT_HINT,
    RawHeader,
    raw_sensor_size,
    read_raw_header,
)
from neuromark.errors import DataError

#: The rule name under which a dropped partial final word is counted.
TRUNCATED_RULE = "truncated final word"


@dataclass(frozen=True)
class RawRead:
    """A read ``.raw`` file: ``events`` (``CAMERA_EVENT_DTYPE``), ``counts`` (records
    dropped per rule), the ``header``, the ``decoded`` words' report (triggers, events
    without a time or an address, the TIME_HIGH range), ``truncated_bytes`` (bytes of a
    partial final word dropped under ``on_invalid="drop"``; 0 otherwise)."""

    events: np.ndarray
    counts: dict[str, int]
    header: RawHeader
    encoding: str
    sensor: tuple[int, int, str]
    decoded: Decoded
    truncated_bytes: int = 0
    notes: list[str] = field(default_factory=list)


def raw_encoding(path: str | os.PathLike[str], header: RawHeader, encoding: str | None) -> str:
    """The encoding to decode with: the header's (``% evt 3.0``, ``% format EVT3;...``),
    which an explicit ``encoding`` must agree with; the explicit one when the header
    states none."""
    if encoding is not None and encoding not in ("evt2", "evt3"):
        raise ValueError(f"encoding must be 'evt2' or 'evt3', got {encoding!r}")
    if header.encoding is not None and encoding is not None and encoding != header.encoding:
        raise DataError(f"{path}: the header states encoding {header.encoding!r}, the call "
                        f"{encoding!r}")
    found = header.encoding or encoding
    if found is None:
        raise DataError(f"{path}: the header states no encoding ('% evt 2.0', '% evt 3.0' or "
                        "'% format EVT3;...'), so its words cannot be decoded safely; add the "
                        "line the camera's software would have written (e.g. '% evt 3.0') to "
                        "the header of a copy, or from Python call "
                        "neuromark.data.prophesee.read_raw(path, encoding='evt3'); if the "
                        "file is in another encoding, " + CONVERT_HINT)
    return found


def raw_words(path: str | os.PathLike[str], header: RawHeader, encoding: str,
              on_invalid: str = "error") -> tuple[np.ndarray, int]:
    """(the event words of a ``.raw`` file, bytes of a partial final word dropped)."""
    size = word_bytes(encoding)
    total = os.path.getsize(path) - header.offset
    extra = total % size
    if extra:
        where = header.offset + total - extra
        text = (f"{path}: the event data ({total} bytes from byte {header.offset}) is not a "
                f"whole number of {size}-byte {encoding.upper()} words: the last {extra} "
                f"byte(s), from byte {where}, are part of a word cut off (truncated file?)")
        if on_invalid != "drop":
            raise DataError(text + "; dataset option on_invalid: drop drops that partial "
                            "word and records it")
        warnings.warn(text + f"; dropped ({extra} bytes)", stacklevel=3)
    dtype = "<u2" if size == 2 else "<u4"
    count = total // size
    words = np.fromfile(path, dtype=dtype, count=count, offset=header.offset) if count \
        else np.zeros(0, dtype)
    return words, extra


def decode_raw_words(path: object, words: np.ndarray, encoding: str, offset: int) -> Decoded:
    """Decode ``words``; a reserved word type becomes a :class:`DataError` naming the file,
    the byte offset in the file and the type."""
    try:
        return DECODERS[encoding](words)
    except DecodeProblem as exc:
        raise DataError(f"{path}: byte {offset + exc.byte_offset}: {exc} (junk, a cut or "
                        f"an encoding other than the header's {encoding.upper()}?)") from None


def read_raw_file(path: str | os.PathLike[str], encoding: str | None = None, *,
                  width: int | None = None, height: int | None = None,
                  on_invalid: str = "error") -> RawRead:
    """Read and check a whole ``.raw`` file (the steps in the module docstring).

    The sensor is the header's geometry, else ``width``/``height``, else the size of the
    sensor the header names (:func:`~neuromark.data.prophesee_raw.raw_sensor_size`)."""
    if on_invalid not in ("error", "drop"):
        raise ValueError(f"on_invalid must be 'error' or 'drop', got {on_invalid!r}")
    header = read_raw_header(path)
    encoding = raw_encoding(path, header, encoding)
    sensor = raw_sensor_size(path, header, width, height)
    words, extra = raw_words(path, header, encoding, on_invalid)
    decoded = decode_raw_words(path, words, encoding, header.offset)
    keep, counts = check_events(path, decoded.t, decoded.x, decoded.y, width=sensor[0],
                                height=sensor[1], on_invalid=on_invalid, p=decoded.p)
    counts = dict(counts)
    if extra:
        counts[TRUNCATED_RULE] = 1
    out = decoded.events if keep is None else decoded.events[keep]
    notes = []
    if decoded.before_time_high:
        notes.append(f"{decoded.before_time_high} event(s) before the first EVT_TIME_HIGH "
                     "word have no time and were skipped")
    if decoded.without_address:
        notes.append(f"{decoded.without_address} event(s) before the first address word "
                     "(EVT_ADDR_Y / VECT_BASE_X) have no pixel and were skipped")
    return RawRead(out, counts, header, encoding, sensor, decoded, extra, notes)


def read_raw_checked(path: str | os.PathLike[str], encoding: str | None = None, *,
                     width: int | None = None, height: int | None = None,
                     on_invalid: str = "error") -> tuple[np.ndarray, dict[str, int]]:
    """(events, records dropped per rule) of a ``.raw`` file (:func:`read_raw_file`)."""
    got = read_raw_file(path, encoding, width=width, height=height, on_invalid=on_invalid)
    return got.events, got.counts


def read_raw(path: str | os.PathLike[str], encoding: str | None = None, *,
             width: int | None = None, height: int | None = None,
             on_invalid: str = "error") -> np.ndarray:
    """A whole Prophesee ``.raw`` file (EVT 2.0 or 3.0) as
    :data:`~neuromark.data.event_dtypes.CAMERA_EVENT_DTYPE`,
    decoded by neuromark's own decoders and checked (:func:`read_raw_file`)."""
    return read_raw_checked(path, encoding, width=width, height=height, on_invalid=on_invalid)[0]


def raw_geometry(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(width, height) the ``.raw`` header states (``% geometry 1280x720`` or
    ``% format EVT3;height=720;width=1280``), or None when it states none."""
    header = read_raw_header(path)
    return None if header.width is None or header.height is None else (header.width, header.height)
