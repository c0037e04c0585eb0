"""One way to configure a power meter: ``meter: {name, options}`` naming a registry entry.

Example::

    meter: {name: csv, options: {path: trace.csv, offset_s: 0.0}}
    meter: {name: "null", options: {reason: "no instrument on this CPU"}}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neuromark.components import ComponentSpec, build_component
from neuromark.config import ConfigFile, resolve_path
from neuromark.registry import meters

#: Options holding file paths, resolved from the config's folder.
PATH_OPTIONS = ("path", "root")


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
    return build_component(meters, spec.model_copy(update={"options": options}), config, loc)
