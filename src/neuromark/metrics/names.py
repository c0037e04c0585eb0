"""Build metric instances from a config's metric list (``neurobench`` key names).

An entry is a registered name, or ``{name: NAME, options: {...}}`` whose options are the
metric class's constructor arguments, validated against its signature:

.. code-block:: yaml

    eval:
      metrics:
        - classification_accuracy
        - {name: synaptic_operations, options: {mac_rule: per_call}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from neuromark.components import ComponentSpec, check_options, parameters
from neuromark.config import ConfigFile
from neuromark.errors import ConfigError, UnknownNameError
from neuromark.registry import metrics as metric_registry


class MetricSpec(ComponentSpec):
    """``{name: NAME, options: {...}}``: a registered metric and its constructor options."""


#: One entry of a config's metric list (a pydantic field type: ``list[MetricEntry]``).
MetricEntry = str | MetricSpec


def metric_name(entry: str | Mapping[str, Any] | MetricSpec) -> str:
    """The registered name of a metric-list entry."""
    if isinstance(entry, str):
        return entry
    return entry.name if isinstance(entry, MetricSpec) else str(entry.get("name"))


def metric_names(entries: Sequence[str | Mapping[str, Any] | MetricSpec]) -> list[str]:
    """The registered names of a metric list, in order."""
    return [metric_name(e) for e in entries]


def _spec(entry: Any, where: str, key: str) -> MetricSpec:
    if isinstance(entry, MetricSpec):
        return entry
    if isinstance(entry, Mapping):
        unknown = sorted(set(entry) - {"name", "options"})
        if unknown or not isinstance(entry.get("name"), str) \
                or not isinstance(entry.get("options", {}), Mapping):
            raise ConfigError(f"{where}: {key}: a metric is a name or {{name: NAME, options: "
                              f"{{...}}}}, got {dict(entry)!r}")
        return MetricSpec(name=entry["name"], options=dict(entry.get("options") or {}))
    raise ConfigError(f"{where}: {key}: a metric is a name or {{name: NAME, options: {{...}}}}, "
                      f"got {entry!r}")


def build_metrics(entries: Sequence[str | Mapping[str, Any] | MetricSpec],
                  config: ConfigFile | None = None,
                  prefix: Sequence[str | int] = ("metrics",)) -> list:
    """Instantiate registered metrics from names or ``{name, options}`` entries.

    Unknown names raise :class:`ConfigError` with the YAML line and close-match
    suggestions; an unknown option names the metric's known options; an ill-typed or
    refused option value names its line too.
    """
    where = (config or ConfigFile(data={})).where
    dotted = ".".join(map(str, prefix))
    built = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            try:
                built.append(metric_registry.get(entry)())
            except UnknownNameError as exc:
                raise ConfigError(f"{where((*prefix, i))}: {dotted}[{i}]: {exc}") from None
            continue
        spec = _spec(entry, where((*prefix, i)), f"{dotted}[{i}]")
        try:
            cls = metric_registry.get(spec.name)
        except UnknownNameError as exc:
            raise ConfigError(f"{where((*prefix, i, 'name'))}: {dotted}[{i}].name: {exc}") from None
        known = [k for k, p in parameters(cls).items() if p.kind in (p.KEYWORD_ONLY,
                                                                     p.POSITIONAL_OR_KEYWORD)]
        takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters(cls).values())
        for key in spec.options:
            if key not in known and not takes_any:
                raise ConfigError(f"{where((*prefix, i, 'options', key))}: {dotted}[{i}].options."
                                  f"{key}: metric {spec.name!r} has no option {key!r}; known "
                                  f"options: {', '.join(known) or 'none'}")
        checked = check_options(metric_registry, spec, config, (*prefix, i))
        try:
            built.append(cls(**{k: checked.get(k, v) for k, v in spec.options.items()}))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where((*prefix, i, 'options'))}: {dotted}[{i}].options: "
                              f"metric {spec.name!r}: {exc}") from None
    return built
