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
ENCODINGS = {"2.0": "evt2", "3.0": "evt3", "evt2": "evt2", "evt3": "evt3"}
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


def read_raw_header(path: str | os.PathLike[str]) -> RawHeader:
    """Parse the ``%`` lines of a ``.raw`` file (see the module docstring)."""
    keys: dict[str, str] = {}
    with open(path, "rb") as f:
        for raw in iter(f.readline, b""):
            if not raw.startswith(b"%"):
                break
            key, _, value = raw[1:].decode("ascii", "replace").strip().partition(" ")
            if key.lower() == "end":
                break
            keys[key.lower()] = value.strip()
    encoding, size, source = None, None, None
    if "evt" in keys:
        encoding = ENCODINGS.get(keys["evt"])
        if encoding is None:
            raise DataError(f"{path}: header '% evt {keys['evt']}' is not an encoding this "
                            f"reader knows ({', '.join(sorted(set(ENCODINGS.values())))})")
    if "format" in keys:
        name, *fields = keys["format"].split(";")
        encoding = ENCODINGS.get(name.strip().lower(), encoding)
        parts = dict(part.partition("=")[::2] for part in fields)
        if parts.get("width", "").isdigit() and parts.get("height", "").isdigit():
            size, source = (int(parts["width"]), int(parts["height"])), "format"
    w, _, h = keys.get("geometry", "").partition("x")
    if w.strip().isdigit() and h.strip().isdigit():
        size, source = (int(w), int(h)), "geometry"
    sensor, named_by = _sensor_family(keys)
    return RawHeader(encoding, *(size or (None, None)), sensor, source or named_by, keys)


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
