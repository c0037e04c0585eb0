"""What a shipped benchmark id fixes, read from the shipped configs; a config that keeps the
id but changes one of those settings is given a derived id of its own, and told so.

A benchmark id and version (``spoken-digits`` 2.0) name the task, the data, the split and
the metric set: the same for every model run on it. What that means in settings is read
from the configs shipped under ``configs/`` (no hand list): a setting is **defining** for an
id when every shipped config of that id and version sets it to the same value, outside the
sections and keys that name the model, its training or how the run executes
(:data:`FREE_SECTIONS`, :data:`FREE_KEYS`). So ``dataset.options.dt_us`` is defining for
``spoken-digits`` (all five configs bin at 10 ms) while ``dataset.options.pool`` is not (the
SVM reads all 700 channels); ``eval.postprocessor`` is defining where every config of the
id decodes the same way (the task fixes it), free where they differ.

A config that keeps a shipped id but

- sets a defining setting to another value, or leaves it out, or
- adds a setting that no shipped config of the id sets (not a model choice: a key no
  shipped id's configs disagree on, e.g. ``eval.metrics``),

is **re-identified** (:func:`derive_identity`): its results are filed under
``<id>-custom-<8 hex>`` (the digest of the changed settings, so the same change always gets
the same id), ``parent`` the shipped id, and ``details.benchmark_derived`` records the
shipped id and each changed setting; the run says so once, naming the config's file and
line. Give the variant a name of your own to silence the note:
``benchmark: {id: spoken-digits-5ms, version: "1.0", parent: spoken-digits}``.

Where no ``configs/`` folder lies beside the package (an installed wheel), nothing is
shipped and nothing is re-identified.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuromark.io_atomic import canonical_json

#: The shipped configs: ``configs/`` of the checkout (beside ``src/``).
SHIPPED_CONFIGS = Path(__file__).resolve().parents[2] / "configs"
#: Top-level sections that name what runs on a benchmark (the model, the system under test,
#: the solvers, its training) or how a run executes and reports; never part of the id.
FREE_SECTIONS = frozenset({
    "benchmark", "description", "model", "models", "train", "sut", "agent", "solvers",
    "controller", "learning", "meter", "power", "timing", "profile", "compliance",
    "checkpoint_dir", "suite", "entries"})
#: Keys (at any depth) that say where data lies or how fast a run goes, not what it measures.
FREE_KEYS = frozenset({
    "root", "path", "batch_size", "threads", "jobs", "workers", "checkpoint", "label",
    "min_query_count", "min_duration_s", "max_duration_s", "expected_latency_s", "per_unit",
    "execution_rate_hz"})
#: Between a shipped id and the digest of a variant's changes.
DERIVED_MARK = "-custom-"
_MISSING = object()


@dataclass(frozen=True)
class SettingChange:
    """One setting of a config that departs from what its shipped id fixes.

    Attributes:
        path: the dotted key path (``dataset.options.dt_us``).
        shipped: the value every shipped config of the id sets (None where they set none).
        given: the config's value (None where it leaves the setting out).
        how: ``"changed"``, ``"left out"`` or ``"added"``.
    """

    path: str
    shipped: Any
    given: Any
    how: str

    def describe(self) -> str:
        if self.how == "left out":
            return f"{self.path} is left out (the shipped configs set {self.shipped!r})"
        if self.how == "added":
            return f"{self.path} = {self.given!r} is added (no shipped config of the id sets it)"
        return f"{self.path} = {self.given!r} (the shipped configs: {self.shipped!r})"

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.path, "shipped": self.shipped, "given": self.given, "how": self.how}


@dataclass(frozen=True)
class ShippedBenchmark:
    """What the shipped configs of one ``(id, version)`` fix: ``defining`` (path -> value),
    ``known`` (every path any of them sets) and the config files they come from."""

    key: tuple[str, str]
    defining: Mapping[str, Any]
    known: frozenset[str]
    files: tuple[str, ...]


def leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted path, value)`` of every setting of ``data`` outside :data:`FREE_SECTIONS`
    and :data:`FREE_KEYS` (a list is one value)."""
    for key, value in data.items():
        if not isinstance(key, str) or key in FREE_KEYS or (not prefix and key in FREE_SECTIONS):
            continue
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from leaves(value, path + ".")
        else:
            yield path, value


def _key(data: Mapping[str, Any]) -> tuple[str, str] | None:
    bench = data.get("benchmark")
    if not isinstance(bench, Mapping) or not isinstance(bench.get("id"), str):
        return None
    return bench["id"], str(bench.get("version", "1.0"))


@functools.lru_cache(maxsize=4)
def shipped_benchmarks(root: Path = SHIPPED_CONFIGS
                       ) -> tuple[dict[tuple[str, str], ShippedBenchmark], frozenset[str]]:
    """Every shipped ``(id, version)`` with what it fixes, and the model-choice paths (set to
    different values by the shipped configs of some one id). Read once per process."""
    import yaml

    groups: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    for file in sorted(root.rglob("*.yaml")) if root.is_dir() else []:
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            continue
        key = _key(data) if isinstance(data, dict) else None
        if key is not None:
            groups.setdefault(key, []).append((str(file.relative_to(root.parent)),
                                               dict(leaves(data))))
    shipped, free = {}, set()
    for key, members in groups.items():
        values: dict[str, list[Any]] = {}
        for _, flat in members:
            for path, value in flat.items():
                values.setdefault(path, []).append(value)
        defining = {}
        for path, seen in values.items():
            if len(seen) == len(members) and all(v == seen[0] for v in seen):
                defining[path] = seen[0]
            elif len(seen) > 1 and any(v != seen[0] for v in seen):
                free.add(path)
        shipped[key] = ShippedBenchmark(key, defining, frozenset(values),
                                        tuple(f for f, _ in members))
    return shipped, frozenset(free)


def changes_from_shipped(data: Mapping[str, Any], root: Path = SHIPPED_CONFIGS
                         ) -> tuple[ShippedBenchmark | None, list[SettingChange]]:
    """The shipped benchmark ``data`` names (None: an id of its own) and every setting in
    which ``data`` departs from it (see the module notes)."""
    key = _key(data)
    shipped_all, free = shipped_benchmarks(root)
    shipped = shipped_all.get(key) if key is not None else None
    if shipped is None:
        return None, []
    given = dict(leaves(data))
    out = []
    for path, value in shipped.defining.items():
        mine = given.get(path, _MISSING)
        if mine is _MISSING:
            out.append(SettingChange(path, value, None, "left out"))
        elif mine != value:
            out.append(SettingChange(path, value, mine, "changed"))
    for path, value in given.items():
        if path not in shipped.known and path not in free and not any(
                k.startswith(path + ".") for k in shipped.known):
            out.append(SettingChange(path, None, value, "added"))
    return shipped, out


def derived_id(shipped_id: str, changes: list[SettingChange]) -> str:
    """``<shipped id>-custom-<8 hex>``: the digest of the changed settings and their values."""
    digest = hashlib.sha256(canonical_json(
        sorted([c.path, c.how, c.given] for c in changes)).encode()).hexdigest()[:8]
    return f"{shipped_id}{DERIVED_MARK}{digest}"


def derive_identity(config: Any, *, announce: bool = True) -> dict[str, Any] | None:
    """Re-identify ``config`` (a :class:`neuromark.config.ConfigFile`) in place when it keeps
    a shipped id but changes what the id fixes: its ``benchmark.id`` becomes
    :func:`derived_id`, ``parent`` the shipped id; returns (and keeps as
    ``config.derived``) the record written to ``details.benchmark_derived``, else None. The
    note goes to stderr once per config (``announce``)."""
    if getattr(config, "derived", None) is not None:
        return config.derived
    data = config.data
    shipped, changes = changes_from_shipped(data)
    if shipped is None or not changes:
        return None
    new_id = derived_id(shipped.key[0], changes)
    record = {"shipped_id": shipped.key[0], "shipped_version": shipped.key[1], "id": new_id,
              "changes": [c.to_json() for c in changes],
              "shipped_configs": list(shipped.files)}
    config.written_benchmark = copy.deepcopy(data["benchmark"])
    data["benchmark"] = {**data["benchmark"], "id": new_id, "parent": shipped.key[0]}
    config.derived = record
    if announce:
        print(derivation_note(config, shipped, changes, new_id), file=sys.stderr)
    return record


def derivation_note(config: Any, shipped: ShippedBenchmark, changes: list[SettingChange],
                    new_id: str) -> str:
    """The note a re-identified run prints: each change with its ``file:line``, the new id
    and how to name the variant yourself."""
    sid, version = shipped.key
    lines = [f"note: {config.where(('benchmark',))}: this config keeps benchmark {sid} "
             f"{version} but changes what that id fixes (task, data, split, metric set, "
             f"decoding), so its results are filed under their own id {new_id} "
             f"(parent {sid}), never beside {sid}'s:"]
    for change in changes:
        lines.append(f"  {config.where(tuple(change.path.split('.')))}: {change.describe()}")
    lines.append(f"  name the variant yourself: benchmark: {{id: {sid}-<what differs>, "
                 f"version: \"1.0\", parent: {sid}}}; or keep {sid}'s settings "
                 f"({', '.join(shipped.files[:2])}{', ...' if len(shipped.files) > 2 else ''})")
    return "\n".join(lines)


def stamp_derived(results: Any, config: Any) -> None:
    """Record ``config.derived`` (when re-identified) in ``results.details`` and restore the
    written ``benchmark`` block in ``results.requested`` (the config as written). A config
    without a ``benchmark`` block whose task filed it under a shipped id (a task's default
    id) is checked here, against the results' id: re-identified in ``results`` itself."""
    record = getattr(config, "derived", None)
    bench = getattr(results, "benchmark", None)
    if record is None and bench is not None and isinstance(getattr(config, "data", None), dict) \
            and "benchmark" not in config.data:
        data = {**config.data, "benchmark": {"id": bench.id, "version": bench.version}}
        shipped, changes = changes_from_shipped(data)
        if shipped is not None and changes:
            record = {"shipped_id": shipped.key[0], "shipped_version": shipped.key[1],
                      "id": derived_id(shipped.key[0], changes),
                      "changes": [c.to_json() for c in changes],
                      "shipped_configs": list(shipped.files)}
            if getattr(config, "derived_notes", None) is None:
                config.derived_notes = set()
            if record["id"] not in config.derived_notes:
                config.derived_notes.add(record["id"])
                print(derivation_note(config, shipped, changes, record["id"]), file=sys.stderr)
    if record is None:
        return
    if bench is not None and bench.id == record["shipped_id"]:
        bench.id, bench.parent = record["id"], record["shipped_id"]
    results.details["benchmark_derived"] = record
    requested = getattr(results, "requested", None)
    written = getattr(config, "written_benchmark", None)
    if isinstance(requested, dict) and written is not None:
        requested["benchmark"] = copy.deepcopy(written)
