"""Typed run configs: YAML loaded safely, validated by pydantic, errors with the YAML line.

Example:
    >>> cfg = load_config("configs/mackey_glass/esn.yaml")  # doctest: +SKIP
    >>> settings = validate(MySettings, cfg.data["model"], cfg, ("model",))  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
import os
import typing
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

from neuromark.context import default_cache_dir
from neuromark.errors import BenchmarkVersionWarning, ConfigError
from neuromark.executors import cpu_limit
from neuromark.identity import BenchmarkIdentity, id_problem

M = TypeVar("M", bound=BaseModel)

Loc = tuple[str | int, ...]


#: Most YAML nodes a config may expand to through aliases (``*name``): a 16-line alias bomb
#: expands to billions; real configs stay far below.
MAX_EXPANDED_NODES = 100_000
#: Characters of a config file, checked before parsing (a config is a few kB).
MAX_CONFIG_CHARS = 2_000_000


#: A seed: what numpy's and torch's generators take (``[0, 2**32)``); every config field
#: named ``seed``/``seeds`` uses it, so -1 or 2**70 is a file:line error at load.
Seed = Annotated[int, Field(ge=0, lt=2**32)]


def check_jobs(value: int) -> int:
    """``value`` worker processes, or ``ValueError`` naming the value and the limit
    (:func:`cpu_limit`): more workers than CPUs only exhaust the machine."""
    limit = cpu_limit()
    if value > limit:
        raise ValueError(f"{value} worker processes exceed this machine's {limit} CPUs "
                         f"(the limit: the CPUs this process may use)")
    return value


def jobs_within(jobs: int | None, what: str) -> int | None:
    """``jobs`` (None: the caller's default) if at most :func:`cpu_limit`, else
    :class:`ConfigError` naming ``what`` (the key), the value and the limit."""
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"{what}: a worker count is an integer >= 1, got {jobs!r}")
    try:
        return check_jobs(jobs)
    except ValueError as exc:
        raise ConfigError(f"{what}: {exc}") from None


#: A worker-process count: ``1`` to :func:`cpu_limit`, checked at load (file:line, key).
Jobs = Annotated[int, Field(ge=1), AfterValidator(check_jobs)]


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are errors, values are not coerced silently,
    and every float is finite (``.inf`` and ``.nan`` are refused; a field that means
    "no limit" says so with its own value, e.g. ``0``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that records the line of every mapping key and sequence item, and stops
    composing past :data:`MAX_EXPANDED_NODES` nodes (a 10^6-item list took 76 s to compose
    before the size check saw it)."""

    composed = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.composed += 1
        if self.composed > MAX_EXPANDED_NODES:
            raise ConfigError(f"{self.name}: more than {MAX_EXPANDED_NODES} YAML nodes, more than the "
                              f"{MAX_EXPANDED_NODES} a config may hold (a list that long is not a "
                              "config setting); reading stopped there")
        return super().compose_node(parent, index)


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
    #: the entry's name in a run (its artefact folder) when not the file's stem, e.g. the
    #: ``-seed<S>`` copies of :mod:`neuromark.suite_seeds`
    label: str | None = None
    #: the run's cache folder (``cache:`` paths resolve in it, :func:`resolve_path`), from
    #: the run context; None: the environment's default
    #: (:func:`neuromark.context.default_cache_dir`)
    cache_root: Path | None = None
    #: key paths this copy's data got from elsewhere than its file (a suite entry's seed
    #: key), each with the ``file:line`` that set it: errors there name that place
    set_by: dict[Loc, str] = field(default_factory=dict)
    #: set when the config keeps a shipped benchmark id but changes what it fixes
    #: (:func:`neuromark.benchmark_settings.derive_identity`): the re-identification record,
    #: and the ``benchmark`` block as written
    derived: dict[str, Any] | None = None
    written_benchmark: dict[str, Any] | None = None
    derived_notes: set[str] | None = None

    def where(self, loc: Sequence[str | int]) -> str:
        """``file:line`` of the deepest known prefix of ``loc`` (for a key set elsewhere,
        :attr:`set_by`, that place and this file)."""
        name = str(self.path) if self.path else "<config>"
        for key, origin in self.set_by.items():
            if tuple(loc[:len(key)]) == key:
                return f"{origin} (this suite entry's seeds set {'.'.join(map(str, key))} in {name})"
        for end in range(len(loc), 0, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return f"{name}:{line}"
        return name


def _collect_lines(obj: Any, lines_by_id: dict[int, dict[Any, int]], prefix: Loc,
                   out: dict[Loc, int], seen: set[int] | None = None) -> None:
    """Lines of every key path; an aliased value is walked once only (its later uses are
    located by their own key), so the walk is linear in the file, not in its expansion."""
    seen = set() if seen is None else seen
    if isinstance(obj, (dict, list)):
        if id(obj) in seen:
            return
        seen.add(id(obj))
    own = lines_by_id.get(id(obj), {})
    children = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in children:
        loc = (*prefix, key)
        if key in own:
            out[loc] = own[key]
        _collect_lines(value, lines_by_id, loc, out, seen)


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Number of nodes ``node`` expands to with every alias written out (memoised, so
    linear in the composed graph)."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # a recursive alias counts once
    if isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, memo) for child in node.value)
    else:
        size = 1
    memo[key] = size
    return size


def parse_yaml(text: str, path: Path | None = None) -> ConfigFile:
    """Parse YAML text safely, keeping line numbers; the top level must be a mapping."""
    if len(text) > MAX_CONFIG_CHARS:  # refused before any parsing (see _LineLoader)
        raise ConfigError(f"{path or '<config>'}: {len(text):,} characters, more than the "
                          f"{MAX_CONFIG_CHARS:,} a config may hold (data belongs in files it names)")
    loader = _LineLoader(text)
    loader.name = str(path) if path else "<config>"
    loader.lines_by_id = {}  # type: ignore[attr-defined]
    try:
        node = loader.get_single_node()
        memo: dict[int, int] = {}
        if node is not None and _expanded_size(node, memo) > MAX_EXPANDED_NODES:
            if len(memo) > MAX_EXPANDED_NODES:  # no alias needed: the values themselves
                raise ConfigError(f"{loader.name}: {len(memo)} YAML nodes, more than the "
                                  f"{MAX_EXPANDED_NODES} a config may hold (a list that long "
                                  "is not a config setting)")
            raise ConfigError(f"{loader.name}: YAML aliases expand to more than "
                              f"{MAX_EXPANDED_NODES} nodes (an alias bomb?); write the values "
                              "out or use fewer aliases")
        data = loader.construct_document(node) if node is not None else None
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


def find_config(path: str | Path) -> Path:
    """``path`` when it is a file; else, for a relative path, the same path in the
    neuromark checkout (``configs/...`` of a source install: the shipped configs); else
    ``path`` (loading it then says it is missing)."""
    given = Path(path)
    if given.is_file() or given.is_absolute():
        return given
    shipped = Path(__file__).resolve().parents[2] / given
    return shipped if shipped.is_file() else given


def load_config(path: str | Path) -> ConfigFile:
    """Load a YAML config file; a missing file or bad YAML raises :class:`ConfigError`."""
    file = Path(path)
    if file.is_dir():
        raise ConfigError(f"{file}: is a directory, not a config file (give a YAML file)")
    if not file.is_file():
        raise ConfigError(f"config file not found: {file}")
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the config: {exc.strerror or exc}") from None
    return parse_yaml(decode_text(raw, file), file)


def decode_text(raw: bytes, file: Path | str) -> str:
    """``raw`` as UTF-8 text (a leading BOM dropped), whatever the locale; a NUL byte or
    invalid UTF-8 raises :class:`ConfigError` naming the file, line and byte offset."""
    if b"\0" in raw:
        offset = raw.index(b"\0")
        line = raw.count(b"\n", 0, offset) + 1
        raise ConfigError(f"{file}:{line}: binary file (NUL byte at "
                          f"offset {offset}); expected a UTF-8 YAML text file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{file}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                          f"offset {exc.start}); save the config as UTF-8") from None


def validate(model: type[M], data: Any, config: ConfigFile | None = None,
             prefix: Sequence[str | int] = ()) -> M:
    """Validate ``data`` against ``model``; errors name the key path, YAML line and problem.
    A ``benchmark:`` mapping without ``version`` is warned about
    (:class:`~neuromark.errors.BenchmarkVersionWarning`), naming the file and line."""
    try:
        validated = model.model_validate(data)
    except ValidationError as exc:
        config = config or ConfigFile(data={})
        grouped: dict[tuple[str, str], list[str]] = {}
        for err in exc.errors():
            loc = (*prefix, *_data_loc(data, err["loc"]))
            dotted = ".".join(str(p) for p in loc) or "<root>"
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                fields = _fields_at(model, err["loc"][:-1])
                close = difflib.get_close_matches(str(err["loc"][-1]), fields, n=2)
                msg = "unknown key" + (f"; did you mean {', '.join(close)}?" if close else
                                       f" (allowed: {', '.join(fields)})")
            elif "input" in err and err["type"] not in ("missing",):
                msg += f" (got {err['input']!r})"
            grouped.setdefault((config.where(loc), dotted), []).append(msg)
        messages = [f"{where}: {dotted}: {'; or: '.join(dict.fromkeys(msgs))}"
                    for (where, dotted), msgs in grouped.items()]
        raise ConfigError("invalid config:\n  " + "\n  ".join(messages)) from None
    _warn_unversioned(data, config, prefix)
    return validated


def _warn_unversioned(data: Any, config: ConfigFile | None,
                      prefix: Sequence[str | int]) -> None:
    """Warn when ``data`` names a benchmark without its version (recorded as "1.0")."""
    bench = data.get("benchmark") if isinstance(data, dict) else None
    if isinstance(bench, dict) and "id" in bench and "version" not in bench:
        where = (config or ConfigFile(data={})).where((*prefix, "benchmark"))
        warnings.warn(f"{where}: benchmark {bench['id']!r} names no version; recorded as "
                      "\"1.0\". Name it: benchmark: {id: ..., version: \"X.Y\"}",
                      BenchmarkVersionWarning, stacklevel=3)


def _data_loc(data: Any, loc: Sequence[str | int]) -> Loc:
    """``loc`` without pydantic's union tags (``constrained-int``, a model's name): a part
    is kept when it is a key of the data at that point, or is the last part under a
    mapping or list (a missing key)."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif i < len(loc) - 1 or not isinstance(node, (dict, list)):
            continue  # a union member's tag
        out.append(part)
    return tuple(out)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models inside a field annotation (``X | None``, ``list[X]``, unions)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _fields_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys allowed at ``loc`` inside ``model`` (the nested section's own fields; a
    union member's name in pydantic's ``loc`` selects that member)."""
    current: Any = model
    for part in loc:
        models = _models_in(current)
        if isinstance(part, int):
            continue  # a list item: the item type is inside ``current`` already
        by_name = [m for m in models if m.__name__ == part]
        if by_name:
            current = by_name[0]
            continue
        owner = next((m for m in models if part in m.model_fields), None)
        if owner is None:
            break
        current = owner.model_fields[part].annotation
    models = _models_in(current)
    return [name for m in models for name in m.model_fields] if models else list(model.model_fields)


#: A config path starting with this prefix lies in the run's cache folder (:func:`resolve_path`).
CACHE_PREFIX = "cache:"


def memory_budget() -> float:
    """Bytes one allocation plan may take (sanity bounds at validation): half the
    machine's physical memory, or 4 GiB when it cannot be read."""
    try:
        return 0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 4.0 * 2**30


def check_memory(what: str, need_bytes: float) -> None:
    """Raise ``ValueError`` (a validation error in a pydantic validator) when ``need_bytes``
    exceed :func:`memory_budget`."""
    budget = memory_budget()
    if need_bytes > budget:
        raise ValueError(f"{what} needs about {need_bytes / 2**30:.3g} GiB, more than the "
                         f"{budget / 2**30:.3g} GiB allowed (half of this machine's memory)")


def resolve_path(value: str | Path, config: ConfigFile | None) -> Path:
    """Resolve a path in a config to an absolute path, the one resolver of config paths: a
    relative path lies in the config file's folder (never the working directory; no
    fallback), ``cache:REL`` in the run's cache folder (``config.cache_root``: the run
    context's ``--cache-dir``; else the environment's default,
    :func:`neuromark.context.default_cache_dir`); a config without a file resolves from the
    working directory."""
    text = str(value)
    if text.startswith(CACHE_PREFIX):
        rel = Path(text[len(CACHE_PREFIX):])
        if rel.is_absolute() or ".." in rel.parts:
            raise ConfigError(f"{value}: a cache: path must stay inside the cache folder")
        root = config.cache_root if config is not None and config.cache_root else default_cache_dir()
        return root / rel
    candidate = Path(text).expanduser()
    if candidate.is_absolute() or config is None or config.path is None:
        return candidate.absolute()
    return (config.path.parent / candidate).absolute()


class IdentitySettings(StrictModel):
    """``benchmark: {id, version, parent, citation}``: one identity for every task config,
    mapped to :class:`neuromark.results.BenchmarkIdentity` by :meth:`info`."""

    id: str
    version: str = "1.0"
    parent: str | None = None
    citation: str = ""
    #: Model execution rate to report, Hz (None: the data's time step); kept out of dumps
    execution_rate_hz: float | None = Field(None, gt=0, allow_inf_nan=False, exclude=True)

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

        return BenchmarkIdentity(id or self.id, self.version, self.parent, self.citation or citation)
