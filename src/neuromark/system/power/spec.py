"""One way to configure a power meter: ``meter: {name, options}`` naming a registry entry.

Example::

    meter: {name: csv, point: board, options: {path: trace.csv, offset_s: 0.0}}
    meter: {name: ptd, options: {path: ptd_log.txt, address: "10.0.0.2:8888"}}
    meter: {name: "null", options: {reason: "no instrument on this CPU"}}

``point`` is where the meter measures (the NeuroBench system rules review asks for it):
``wall`` (the wall socket, e.g. a PTDaemon analyzer), ``board`` (the board's supply),
``shunt`` (a shunt resistor on one supply line), ``rail`` (one voltage rail), ``package``
(the chip package, e.g. RAPL). It is recorded in every result
(``details.power_meter.point``); a meter with a fixed point (RAPL: package, NVML: board,
PTDaemon: wall) has it as default, others (csv) need it declared or ``neuromark check``
reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from neuromark.components import ComponentSpec, build_component
from neuromark.config import ConfigFile, resolve_path
from neuromark.registry import meters

#: Options holding file paths, resolved from the config's folder.
PATH_OPTIONS = ("path", "root")
#: Where a meter may measure.
POINTS = ("wall", "board", "shunt", "rail", "package")


class MeterSpec(ComponentSpec):
    """``meter: {name, point, options}``: a meter entry, where it measures, its options."""

    point: Literal["wall", "board", "shunt", "rail", "package"] | None = None


def make_meter(spec: ComponentSpec | None, config: ConfigFile | None = None,
               loc: Sequence[str | int] = ("meter",), *,
               reason: str = "no power meter configured") -> Any:
    """The configured :class:`~neuromark.system.power.protocol.PowerMeter` from
    :data:`neuromark.registry.meters`; no spec gives the null meter with ``reason``.

    Unknown names and options that do not fit the meter raise :class:`ConfigError` with
    the config's ``file:line``; path options are resolved from the config's folder.
    """

    if spec is None:
        spec = ComponentSpec(name="null", options={"reason": reason})
    options = dict(spec.options)
    for key in PATH_OPTIONS:
        if isinstance(options.get(key), str):
            options[key] = resolve_path(options[key], config)
    point = getattr(spec, "point", None)
    spec = ComponentSpec(name=spec.name, options=options)
    meter = build_component(meters, spec, config, loc)
    if point is not None:
        meter.point = point  # the declared point overrides the meter's default
    return meter
