"""The ASCII header of a Prophesee ``.raw`` file: its encoding and its sensor.

A ``.raw`` file starts with lines ``% key value`` (Metavision / OpenEB writers), then the
binary event words. What the header says differs by the software that wrote it:

- the **encoding**: ``% evt 2.0`` / ``% evt 3.0`` (files of 2020, Metavision 2.x) or
  ``% format EVT3;height=720;width=1280`` (Metavision 3 and later);
- the **sensor size**: ``% geometry 1280x720`` or the ``format`` line's ``width``/``height``;
  older files state neither and only name the camera plugin (``% plugin_name
  hal_plugin_gen41_evk3``) or the sensor generation (``% sensor_generation 4.1``).

For those, :data:`KNOWN_SENSORS` gives the pixel array of each sensor family, with where
the size is published:

- Gen3 / Gen3.1 VGA: 640x480 (Prophesee, Metavision SDK docs, "Supported Sensors: Gen3.1
  VGA Sensor", https://docs.prophesee.ai/stable/hw/sensors/ ; the expelliarmus EVT2 sample,
  ``hal_plugin_gen3_fx3``, has x 60-599 and y 18-475, inside it);
- Gen4 / Gen4.1 HD and Sony IMX636 HD: 1280x720 (Metavision SDK docs, "IMX636 HD Sensor"
  and "Discontinued Products: Gen4.1"; Finateu et al., ISSCC 2020, "A 1280x720
  back-illuminated stacked temporal contrast event-based vision sensor"; the expelliarmus
  EVT3 sample, ``hal_plugin_gen41_evk3``, decodes to x 0-1279, y 0-719);
- ATIS: 304x240 (Posch, Matolin, Wohlgenannt, IEEE JSSC 46(1), 2011, "A QVGA 143 dB
  dynamic range frame-free PWM image sensor ..."; N-CARS and the Gen1 automotive set were
  recorded with it).

An explicit ``width``/``height`` overrides a size taken from this table (not one the
header states); a sensor the table does not know is a :class:`DataError` naming it.

Validation before decoding (:func:`read_raw_header`): every header line must be ASCII
``% key value``; ``% evt`` and ``% format`` must name the same encoding when both are
given (else the file is refused naming both); an encoding neuromark does not decode (EVT
2.1, ...) is refused naming it; sizes must be positive integers. The event words then
decode through neuromark's own decoders (:mod:`~neuromark.data.prophesee_raw_read`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from neuromark.errors import DataError

#: Sensor family -> (width, height) in pixels; sources in the module docstring.
KNOWN_SENSORS: dict[str, tuple[int, int]] = {
    "gen3": (640, 480), "gen3.1": (640, 480),
    "gen4": (1280, 720), "gen4.1": (1280, 720), "imx636": (1280, 720),
    "atis": (304, 240),
}
#: ``% evt`` values and ``% format`` names -> the encoding names the readers take.
ENCODINGS = {"2.0": "evt2", "3.0": "evt3", "evt2": "evt2", "evt3": "evt3", "evt2.0": "evt2",
             "evt3.0": "evt3"}
#: Encodings Prophesee publishes that neuromark does not decode (named when a file states one).
UNSUPPORTED = {"2.1": "EVT 2.1", "evt21": "EVT 2.1", "evt2.1": "EVT 2.1", "histo3d": "Histo3D",
               "diff3d": "Diff3D", "aer": "AER"}
#: What a user can do with a file in an encoding neuromark does not decode.
CONVERT_HINT = ("convert it to EVT 3.0 or HDF5 with Prophesee's Metavision tools (e.g. "
                "metavision_file_to_hdf5) or decode it with Metavision and save the events as "
                "a .npy structured array (t µs, x, y, p), which `neuromark data info` and the "
                "readers take")
_PLUGIN = re.compile(r"hal_plugin_(gen\d+|imx\d+|atis)", re.IGNORECASE)


@dataclass(frozen=True)
class RawHeader:
    """What a ``.raw`` header states. ``sensor_source`` says where the size came from
    (``"geometry"``, ``"format"``, ``"plugin_name"``, ``"sensor_generation"`` or None)."""

    encoding: str | None
    width: int | None
    height: int | None
    sensor: str | None
    sensor_source: str | None
    keys: dict[str, str]
    offset: int = 0
    """Byte offset of the first event word (after the last ``%`` line)."""


def _sensor_family(keys: dict[str, str]) -> tuple[str | None, str | None]:
    """(family, key it came from) of the plugin or sensor generation named in the header."""
    generation = keys.get("sensor_generation", "").strip()
    if generation:
        return f"gen{generation}".lower(), "sensor_generation"
    match = _PLUGIN.search(keys.get("plugin_name", ""))
    if match:
        name = match.group(1).lower()
        if re.fullmatch(r"gen\d\d", name):  # gen31 -> gen3.1, gen41 -> gen4.1
            name = f"{name[:4]}.{name[4:]}"
        return name, "plugin_name"
    return None, None


def _encoding_of(path: object, key: str, value: str) -> str:
    """The reader's name of the encoding a ``% evt`` value or ``% format`` name states."""
    name = value.strip().lower().replace(" ", "")
    if name in ENCODINGS:
        return ENCODINGS[name]
    if name in UNSUPPORTED:
        raise DataError(f"{path}: header '% {key} {value}' states {UNSUPPORTED[name]}, an "
                        "encoding neuromark does not decode (it decodes EVT 2.0 and EVT 3.0); "
                        + CONVERT_HINT)
    raise DataError(f"{path}: header '% {key} {value}' is not an encoding neuromark knows "
                    "(it decodes EVT 2.0 and EVT 3.0: '% evt 2.0', '% evt 3.0', "
                    "'% format EVT3;...')")


def _size(path: object, line: str, value: str) -> int:
    if not value.strip().isdigit() or int(value) <= 0:
        raise DataError(f"{path}: header '{line}': {value!r} is not a positive whole number "
                        "of pixels")
    return int(value)


def read_raw_header(path: str | os.PathLike[str]) -> RawHeader:
    """Parse and check the ``%`` lines of a ``.raw`` file (see the module docstring)."""
    keys: dict[str, str] = {}
    offset = 0
    with open(path, "rb") as f:
        while True:
            offset = f.tell()
            raw = f.readline()
            if not raw.startswith(b"%"):
                break
            try:
                line = raw.decode("ascii")
            except UnicodeDecodeError:
                if raw.startswith(b"% ") and raw.endswith(b"\n") and len(raw) <= 1024:
                    raise DataError(f"{path}: header line at byte {offset} is not ASCII text "
                                    f"({raw[:40]!r}...): a .raw header is '% key value' lines "
                                    "(a damaged header?)") from None
                break  # an event word whose first byte is '%' (0x25): the data begins
            key, _, value = line[1:].strip().partition(" ")
            if key.lower() == "end":
                offset = f.tell()
                break
            keys[key.lower()] = value.strip()
    encoding, size, source = None, None, None
    if "evt" in keys:
        encoding = _encoding_of(path, "evt", keys["evt"])
    if "format" in keys:
        name, *fields = keys["format"].split(";")
        stated = _encoding_of(path, "format", name)
        if encoding is not None and stated != encoding:
            raise DataError(f"{path}: the header states two encodings: '% evt {keys['evt']}' "
                            f"({encoding}) and '% format {keys['format']}' ({stated}); the "
                            "file is refused (which one its words follow is unknown)")
        encoding = stated
        parts = dict(part.partition("=")[::2] for part in fields)
        if "width" in parts or "height" in parts:
            line = f"% format {keys['format']}"
            size = (_size(path, line, parts.get("width", "")),
                    _size(path, line, parts.get("height", "")))
            source = "format"
    if "geometry" in keys:
        w, _, h = keys["geometry"].partition("x")
        line = f"% geometry {keys['geometry']}"
        geometry = (_size(path, line, w), _size(path, line, h))
        if size is not None and geometry != size:
            raise DataError(f"{path}: '% geometry' states {geometry[0]}x{geometry[1]}, "
                            f"'% format' {size[0]}x{size[1]}; the file is refused")
        size, source = geometry, "geometry"
    sensor, named_by = _sensor_family(keys)
    return RawHeader(encoding, *(size or (None, None)), sensor, source or named_by, keys, offset)


def raw_sensor_size(path: str | os.PathLike[str], header: RawHeader, width: int | None,
                    height: int | None) -> tuple[int, int, str]:
    """(width, height, how it was found) of the sensor a ``.raw`` file was recorded with.

    The header's ``geometry`` / ``format`` size wins and must agree with an explicit one;
    otherwise an explicit ``width``/``height``; otherwise :data:`KNOWN_SENSORS` for the
    named plugin or sensor generation. Anything else is a :class:`DataError`."""
    stated = (header.width, header.height) if header.width is not None else None
    if stated is not None:
        if None not in (width, height) and stated != (width, height):
            raise DataError(f"{path}: the header states a {stated[0]}x{stated[1]} sensor, the "
                            f"call {width}x{height}")
        return stated[0], stated[1], f"header {header.sensor_source}"
    if width is not None and height is not None:
        return width, height, "given"
    if header.sensor is not None:
        if header.sensor not in KNOWN_SENSORS:
            raise DataError(f"{path}: the header names sensor {header.sensor!r} (from "
                            f"{header.sensor_source} {header.keys.get(header.sensor_source or '', '')!r}), "
                            f"whose size neuromark does not know (known: "
                            f"{', '.join(KNOWN_SENSORS)}); pass width= and height=")
        w, h = KNOWN_SENSORS[header.sensor]
        return w, h, f"{header.sensor} sensor, named by the header's {header.sensor_source}"
    raise DataError(f"{path}: the header states no sensor size ('% geometry WxH' or "
                    "'% format ...;width=W;height=H') and names no known sensor; pass width= "
                    "and height= to check that events lie inside it")
