"""Typed run configs: YAML loaded safely, validated by pydantic, errors with the YAML line.

Example:
    >>> cfg = load_config("configs/mackey_glass/esn.yaml")  # doctest: +SKIP
    >>> settings = validate(MySettings, cfg.data["model"], cfg, ("model",))  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from neuromark.errors import ConfigError
from neuromark.results import BenchmarkInfo, id_problem

M = TypeVar("M", bound=BaseModel)

Loc = tuple[str | int, ...]


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are errors, values are not coerced silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that records the line of every mapping key and sequence item."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    mapping = {}
    lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in mapping:
            raise ConfigError(f"{loader.name}:{key_node.start_mark.line + 1}: duplicate key {key!r}")
        mapping[key] = loader.construct_object(value_node, deep=True)
        lines[key] = key_node.start_mark.line + 1
    loader.lines_by_id[id(mapping)] = lines  # type: ignore[attr-defined]
    return mapping


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> list[Any]:
    items = [loader.construct_object(child, deep=True) for child in node.value]
    loader.lines_by_id[id(items)] = {  # type: ignore[attr-defined]
        i: child.start_mark.line + 1 for i, child in enumerate(node.value)
    }
    return items


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


@dataclass
class ConfigFile:
    """A loaded YAML config: its data, its path and the line of each key path."""

    data: dict[str, Any]
    path: Path | None = None
    lines: dict[Loc, int] = field(default_factory=dict)

    def where(self, loc: Sequence[str | int]) -> str:
        """``file:line`` of the deepest known prefix of ``loc``."""
        name = str(self.path) if self.path else "<config>"
        for end in range(len(loc), 0, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return f"{name}:{line}"
        return name


def _collect_lines(obj: Any, lines_by_id: dict[int, dict[Any, int]], prefix: Loc,
                   out: dict[Loc, int]) -> None:
    own = lines_by_id.get(id(obj), {})
    children = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in children:
        loc = (*prefix, key)
        if key in own:
            out[loc] = own[key]
        _collect_lines(value, lines_by_id, loc, out)


def parse_yaml(text: str, path: Path | None = None) -> ConfigFile:
    """Parse YAML text safely, keeping line numbers; the top level must be a mapping."""
    loader = _LineLoader(text)
    loader.name = str(path) if path else "<config>"
    loader.lines_by_id = {}  # type: ignore[attr-defined]
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise ConfigError(f"{loader.name}: invalid YAML: {exc}") from exc
    finally:
        loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{loader.name}: top level must be a mapping, got {type(data).__name__}")
    lines: dict[Loc, int] = {}
    _collect_lines(data, loader.lines_by_id, (), lines)  # type: ignore[attr-defined]
    return ConfigFile(data=data, path=path, lines=lines)


def load_config(path: str | Path) -> ConfigFile:
    """Load a YAML config file; a missing file or bad YAML raises :class:`ConfigError`."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"config file not found: {file}")
    return parse_yaml(file.read_text(), file)


def validate(model: type[M], data: Any, config: ConfigFile | None = None,
             prefix: Sequence[str | int] = ()) -> M:
    """Validate ``data`` against ``model``; errors name the key path, YAML line and problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        config = config or ConfigFile(data={})
        messages = []
        for err in exc.errors():
            loc = (*prefix, *err["loc"])
            dotted = ".".join(str(p) for p in loc) or "<root>"
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                fields = list(model.model_fields)
                close = difflib.get_close_matches(str(err["loc"][-1]), fields, n=2)
                msg = "unknown key" + (f"; did you mean {', '.join(close)}?" if close else
                                       f" (allowed: {', '.join(fields)})")
            elif "input" in err and err["type"] not in ("missing",):
                msg += f" (got {err['input']!r})"
            messages.append(f"{config.where(loc)}: {dotted}: {msg}")
        raise ConfigError("invalid config:\n  " + "\n  ".join(messages)) from None


#: A config path starting with this prefix lies in the cache folder (:func:`cache_dir`).
CACHE_PREFIX = "cache:"


def cache_dir() -> Path:
    """neuromark's cache folder (trained checkpoints): ``$NEUROMARK_CACHE_DIR`` (set by
    ``--cache-dir``), else ``$XDG_CACHE_HOME/neuromark``, else ``~/.cache/neuromark``."""
    import os

    own = os.environ.get("NEUROMARK_CACHE_DIR")
    if own:
        return Path(own).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "neuromark").absolute()


def resolve_path(value: str | Path, config: ConfigFile | None) -> Path:
    """Resolve a path in a config to an absolute path: a relative path lies in the config
    file's folder (never the working directory; no fallback), ``cache:REL`` in
    :func:`cache_dir`; a config without a file resolves from the working directory."""
    text = str(value)
    if text.startswith(CACHE_PREFIX):
        rel = Path(text[len(CACHE_PREFIX):])
        if rel.is_absolute() or ".." in rel.parts:
            raise ConfigError(f"{value}: a cache: path must stay inside the cache folder")
        return cache_dir() / rel
    candidate = Path(text).expanduser()
    if candidate.is_absolute() or config is None or config.path is None:
        return candidate.absolute()
    return (config.path.parent / candidate).absolute()


class BenchmarkSettings(StrictModel):
    """``benchmark: {id, version, parent, citation}``: one identity for every task config,
    mapped to :class:`neuromark.results.BenchmarkInfo` by :meth:`info`."""

    id: str
    version: str = "1.0"
    parent: str | None = None
    citation: str = ""

    @field_validator("id")
    @classmethod
    def _id_is_a_name(cls, value: str) -> str:
        problem = id_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    def info(self, citation: str = "", id: str | None = None) -> Any:
        """The results identity; ``citation`` is the task's default when none is configured,
        ``id`` overrides the configured one (a task writing several files derives theirs)."""

        return BenchmarkInfo(id or self.id, self.version, self.parent, self.citation or citation)


#: Keys of older configs and the key that replaced each (see :func:`reject_legacy_keys`).
LEGACY_KEYS: dict[str, str] = {
    "name": "benchmark: {id: ...}",
    "id": "benchmark: {id: ...}",
    "version": "benchmark: {version: ...}",
}


def reject_legacy_keys(config: ConfigFile, keys: Sequence[str]) -> None:
    """Raise :class:`ConfigError` naming the new key when ``config`` uses an old spelling."""
    for key in keys:
        if key in config.data:
            raise ConfigError(f"{config.where((key,))}: '{key}' is no longer a top-level key; "
                              f"use {LEGACY_KEYS[key]} instead")
