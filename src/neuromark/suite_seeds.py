"""Training seeds as suite entries: ``{config: PATH, seeds: [0, 1, 2]}`` in a suite's
``entries`` runs the config once per seed.

Each copy sets the seed key (``train.seed`` unless ``key`` names another dotted path, list
items by index as in ``models.0.seed``; its parent section must exist in the config),
suffixes the model's label (``model.label``, else its name; each of ``models``) and
``model.checkpoint`` (when set) with ``-seed<S>``, so that results and trained weights never
collide while every seed stays on the same benchmark (one leaderboard table); a config
without a model section has its ``benchmark.id`` suffixed instead. Each copy is labelled
``<stem>-seed<S>`` (its artefact folder). Copies are ordinary suite entries: under
``--executor ray`` each is a unit of its own. Example (a suite file)::

    suite: rsnn-seeds
    entries:
      - {config: ../shd/spoken_digits_rsnn.yaml, seeds: [0, 1, 2]}
"""

from __future__ import annotations

import copy
from pathlib import PurePath
from typing import Any

from pydantic import Field

from neuromark.config import ConfigFile, Seed, StrictModel
from neuromark.errors import ConfigError


class SeededEntry(StrictModel):
    """A suite entry run once per seed."""

    config: str
    seeds: list[Seed] = Field(min_length=1)
    key: str = "train.seed"


def seeded_copies(config: ConfigFile, entry: SeededEntry, where: str) -> list[ConfigFile]:
    """One copy of ``config`` per seed of ``entry`` (see the module notes); ``where`` is the
    suite entry's ``file:line`` for errors."""
    if len(set(entry.seeds)) != len(entry.seeds):
        raise ConfigError(f"{where}: seeds {entry.seeds} repeat a seed")
    *parents, leaf = entry.key.split(".")
    if not leaf or not all(parents):
        raise ConfigError(f"{where}: key {entry.key!r} is not a dotted key path such as train.seed")
    bench = config.data.get("benchmark")
    if not isinstance(bench, dict) or not isinstance(bench.get("id"), str):
        raise ConfigError(f"{where}: {config.path} has no benchmark.id to tell the seeds' results "
                          f"apart")
    stem = config.path.stem if config.path else str(config.data.get("task"))
    out = []
    for seed in entry.seeds:
        data = copy.deepcopy(config.data)
        section: Any = data
        for depth, name in enumerate(parents):
            section = _child(section, name)
            if not isinstance(section, dict if depth == len(parents) - 1 else (dict, list)):
                missing = ".".join(parents[:depth + 1])
                raise ConfigError(f"{where}: key {entry.key}: {config.path} has no {missing!r} "
                                  f"section to set the seed in")
        section[leaf] = seed
        if not _label_models(data, f"-seed{seed}"):
            data["benchmark"]["id"] = f"{bench['id']}-seed{seed}"
        model = data.get("model")
        if isinstance(model, dict) and isinstance(model.get("checkpoint"), str):
            model["checkpoint"] = suffixed(model["checkpoint"], f"-seed{seed}")
        key = tuple(int(k) if k.isdigit() else k for k in (*parents, leaf))
        out.append(ConfigFile(data, config.path, dict(config.lines), label=f"{stem}-seed{seed}",
                              cache_root=config.cache_root,
                              set_by={**config.set_by, key: where}))
    return out


def _label_models(data: dict[str, Any], suffix: str) -> bool:
    """Suffix the label of ``data``'s model (``model``, or each of ``models``) with ``suffix``
    (the label defaults to the model's name); False when the config has no model section."""
    found = [data["model"]] if isinstance(data.get("model"), dict) else (
        [m for m in data["models"] if isinstance(m, dict)]
        if isinstance(data.get("models"), list) else [])
    for model in found:
        base = model.get("label") or model.get("name")
        if not isinstance(base, str):
            return False
        model["label"] = f"{base}{suffix}"
    return bool(found)


def _child(section: Any, name: str) -> Any:
    """``section[name]`` of a mapping, or item ``int(name)`` of a list; None when absent."""
    if isinstance(section, dict):
        return section.get(name)
    if isinstance(section, list) and name.isdigit() and int(name) < len(section):
        return section[int(name)]
    return None


def suffixed(path: str, suffix: str) -> str:
    """``path`` with ``suffix`` before its extension (``cache:c/x.pt`` -> ``cache:c/x-seed1.pt``)."""
    name = PurePath(path).name
    stem, dot, ext = name.rpartition(".")
    new = f"{stem}{suffix}.{ext}" if dot and stem else f"{name}{suffix}"
    return path[: len(path) - len(name)] + new
