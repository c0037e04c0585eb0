"""Build metric instances from names in a config (``neurobench`` key names)."""

from __future__ import annotations

from collections.abc import Sequence

from neuromark.config import ConfigFile
from neuromark.errors import ConfigError, UnknownNameError
from neuromark.registry import metrics as metric_registry


def build_metrics(names: Sequence[str], config: ConfigFile | None = None,
                  prefix: Sequence[str | int] = ("metrics",)) -> list:
    """Instantiate registered metrics by name; unknown names raise :class:`ConfigError`
    with the YAML line and close-match suggestions."""
    built = []
    for i, name in enumerate(names):
        try:
            built.append(metric_registry.get(name)())
        except UnknownNameError as exc:
            where = config.where((*prefix, i)) if config else "<config>"
            raise ConfigError(f"{where}: {'.'.join(map(str, prefix))}[{i}]: {exc}") from None
    return built
