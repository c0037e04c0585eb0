"""Benchmark identity and model identity, kept apart (as Brain-Score does).

- :class:`BenchmarkIdentity` names the task, the data and the metric set: the same id for every
  model run on it (``spoken-digits``, ``mackey-glass-tau17``).
- :class:`ModelIdentity` names what was run on it: the registry (or class) name, the sha256
  of its options as canonical JSON, the sha256 of its checkpoint file, and a user label.

Ids and labels are file names (:func:`id_problem`): a results file is
``<benchmark id>--<model label>.json`` (:func:`results_name`).

Re-exported by :mod:`neuromark.results`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuromark.errors import DataError
from neuromark.io_atomic import canonical_json, sha256_file

#: Benchmark ids (and every name derived from one) are file names: letters, digits, ``._-``.
ID_PATTERN = re.compile(r"[A-Za-z0-9._-]+")
#: Between the benchmark id and the model label in a results file's name.
NAME_SEPARATOR = "--"


def id_problem(name: object) -> str | None:
    """Why ``name`` is not a valid benchmark id (a file name, never a path), or None."""
    if not isinstance(name, str) or not ID_PATTERN.fullmatch(name):
        return (f"{name!r} is not a valid id: use letters, digits, '.', '_' and '-' only "
                f"(an id names a file in the output folder; it is never a path)")
    if set(name) == {"."}:
        return f"{name!r} is not a valid id: it must not be only dots"
    return None


def path_in(folder: str | os.PathLike[str], name: str) -> Path:
    """``folder/name`` for a valid id-like ``name``, refusing anything that would resolve
    outside ``folder`` (:class:`~neuromark.errors.DataError`)."""
    problem = id_problem(name.removesuffix(".json")) if isinstance(name, str) else id_problem(name)
    base = Path(folder).resolve()
    target = (base / name).resolve()
    if problem or target.parent != base:
        raise DataError(f"refusing to write {name!r} outside the output folder {folder}"
                        + (f": {problem}" if problem else ""))
    return Path(folder) / name


def config_digest(data: Any) -> str:
    """sha256 of ``data`` as canonical JSON (sorted keys): the identity of a resolved config."""
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


@dataclass
class BenchmarkIdentity:
    """Stable identity of a benchmark (task, data, metric set; never the model): id,
    version, parent, bibtex."""

    id: str
    version: str = "1.0"
    parent: str | None = None
    citation: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "parent": self.parent,
                "citation": self.citation}

    @property
    def key(self) -> tuple[str, str]:
        """``(id, version)``: what makes two results comparable."""
        return (self.id, self.version)


def check_label(label: str) -> str:
    """``label`` when it is a valid model label (a file-name part: letters, digits, ``._-``),
    else :class:`ValueError` saying why."""
    problem = id_problem(label)
    if problem:
        raise ValueError(problem.replace("valid id", "valid model label"))
    return label


@dataclass(frozen=True)
class ModelIdentity:
    """What ran on a benchmark.

    Attributes:
        name: the registry name (``rsnn``), or the class name of a model given in Python.
        options_digest: hex sha256 of the model options as canonical JSON
            (:func:`~neuromark.io_atomic.canonical_json`; no options: of ``{}``), or None
            where they are unknown (results files older than schema 1.2).
        checkpoint_sha256: hex sha256 of the checkpoint file, or None (no checkpoint, or
            an old results file).
        label: the user's name for this model on leaderboards and in file names
            (default: ``name``).
        notes: how the model was read where that departs from the plain path (e.g. a NIR
            file of an older NIR version read without nir's type check); written as
            ``notes`` only when there are any.
    """

    name: str
    options_digest: str | None
    checkpoint_sha256: str | None
    label: str
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "options_digest": self.options_digest,
                               "checkpoint_sha256": self.checkpoint_sha256, "label": self.label}
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "results") -> ModelIdentity:
        """The identity from its JSON block; :class:`DataError` naming ``where`` and the
        key when a key is missing or not a string."""
        if not isinstance(data, Mapping):
            raise DataError(f"{where}: 'model' must be a mapping, got {type(data).__name__}")
        values: dict[str, Any] = {}
        for key, optional in (("name", False), ("options_digest", True),
                              ("checkpoint_sha256", True), ("label", False)):
            value = data.get(key)
            if not (isinstance(value, str) or (optional and value is None)):
                raise DataError(f"{where}: model.{key} must be a string"
                                f"{' or null' if optional else ''}, got {value!r}")
            values[key] = value
        notes = data.get("notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise DataError(f"{where}: model.notes must be a list of strings, got {notes!r}")
        return cls(**values, notes=tuple(notes))

    @property
    def checkpoint_short(self) -> str:
        """The checkpoint digest's first 12 hex digits, or "—" without one."""
        return self.checkpoint_sha256[:12] if self.checkpoint_sha256 else "—"


def model_identity(name: str, options: Mapping[str, Any] | None = None,
                   checkpoint: str | os.PathLike[str] | None = None,
                   label: str | None = None) -> ModelIdentity:
    """The :class:`ModelIdentity` of model ``name`` built with ``options`` (None: ``{}``),
    its weights read from the file ``checkpoint`` (hashed here; None: no checkpoint), shown
    as ``label`` (None: ``name``). A missing checkpoint file raises
    :class:`DataError` naming it; an invalid label raises :class:`ValueError`."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"model name must be a non-empty string, got {name!r}")
    digest = None
    if checkpoint is not None:
        path = Path(checkpoint)
        if not path.is_file():
            raise DataError(f"model {name!r}: checkpoint {path} is not a file; the model "
                            f"identity records its sha256")
        digest = sha256_file(path)
    options_digest = hashlib.sha256(canonical_json(dict(options or {})).encode()).hexdigest()
    return ModelIdentity(name, options_digest, digest, check_label(label if label is not None
                                                                   else as_label(name)))


def as_label(name: str) -> str:
    """``name`` made a valid label (characters outside ``[A-Za-z0-9._-]`` become ``_``)."""
    label = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return label if label.strip(".") else "model"


def derive_model_identity(data: Mapping[str, Any]) -> ModelIdentity | None:
    """The model block of a results file older than schema 1.2, from what it recorded:
    ``details.model`` (a name, or ``{name, options}``), else ``config.model`` (``{name,
    options}``). ``label`` is the name; ``options_digest`` is None unless options were
    recorded; ``checkpoint_sha256`` is always None (the file those runs read may have
    changed since, so it is not hashed now). None when the file names no model (e.g. a
    QUBO or system run of schema 1.1)."""
    details = data.get("details") if isinstance(data.get("details"), Mapping) else {}
    config = data.get("config") if isinstance(data.get("config"), Mapping) else {}
    sources = [s if isinstance(s, Mapping) else {"name": s}
               for s in (details.get("model"), config.get("model"))]
    name = next((s["name"] for s in sources if isinstance(s.get("name"), str) and s["name"]),
                None)
    if name is None:
        return None
    options = next((s["options"] for s in sources
                    if s.get("name") == name and isinstance(s.get("options"), Mapping)), None)
    digest = (hashlib.sha256(canonical_json(options).encode()).hexdigest()
              if options is not None else None)
    return ModelIdentity(name, digest, None, as_label(name))


def results_name(benchmark_id: str, model: ModelIdentity | None) -> str:
    """The results file name of a run: ``<benchmark id>--<model label>.json``, or
    ``<benchmark id>.json`` without a model block."""
    return (f"{benchmark_id}{NAME_SEPARATOR}{model.label}.json" if model is not None
            else f"{benchmark_id}.json")


def identity_for(model: Any, identity: ModelIdentity | None = None,
                 label: str | None = None) -> ModelIdentity:
    """The model block of a Python-API run: ``identity`` (relabelled ``label`` when given),
    else named by the class of ``model`` (the ``module`` an adapter wraps, else the adapter
    itself), its options and checkpoint unknown (None), labelled ``label`` or that name.
    The notes an adapter carries on how it was read (``model.notes``) join the block's."""
    notes = tuple(n for n in getattr(model, "notes", ()) if isinstance(n, str))
    if identity is None:
        inner = getattr(model, "module", None)
        name = type(inner if inner is not None else model).__name__
        return ModelIdentity(name, None, None, check_label(label if label is not None
                                                           else as_label(name)), notes)
    if label is None and not notes:
        return identity
    return ModelIdentity(identity.name, identity.options_digest, identity.checkpoint_sha256,
                         check_label(label) if label is not None else identity.label,
                         identity.notes + tuple(n for n in notes if n not in identity.notes))
