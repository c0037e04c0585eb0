"""One checkpoint cache for every trainable model family.

**Header.** A checkpoint is a ``torch.save`` dict of tensors, numbers and strings, loaded
with ``torch.load(weights_only=True)``::

    {"format": 1, "kind": <family name>, "config": {...}, "state_dict": {...},
     "meta": {"recipe_hash": <sha256>, "recipe": {...}, <training info>, "device", ...}}

Checkpoints of neuromark before 0.2.0 in the older headers (:data:`RETIRED_FORMATS`: the
FSCIL backbones' ``"neuromark-fscil-1"``, the primate-reaching decoders'
``"neuromark-primate-decoder-1"``) are no longer read: they are still neuromark's own, so
:func:`prepare` replaces them by training anew (one printed line says why; with
``train_if_missing: false`` an error names the command that trains), and
:func:`read_checkpoint` refuses them naming the format and that command. None is loaded as
something it is not.

**Recipe hash** (:func:`recipe_hash`): sha256 of the recipe as canonical JSON
(``json.dumps(recipe, sort_keys=True)``) followed by the training data: each file's bytes,
each folder's files (relative name, a NUL, bytes; sorted), each ``bytes`` item as is.

**Replacement rule** (:func:`prepare`): a cached checkpoint whose recipe hash matches is
reused. A neuromark checkpoint of another recipe (or one that no longer loads) is replaced
by ``neuromark train``, or by a run with ``train_if_missing: true``, with one printed line
saying why; with ``train_if_missing: false`` it is an error. A file neuromark did not
write is never replaced. A missing checkpoint with ``train_if_missing: false`` is an error
naming the file and the command that trains it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuromark.data.download import update_digest
from neuromark.devices import checkpoint_device_meta
from neuromark.errors import DataError
from neuromark.io_atomic import atomic_path
from neuromark.models.checkpoint import read_weights
from neuromark.training.family import training_device

#: Version of the checkpoint header.
FORMAT = 1
#: Keys of a checkpoint dict (``meta`` optional).
KEYS = ("format", "kind", "config", "state_dict", "meta")
#: Headers of neuromark's checkpoints before 0.2.0: neuromark's own (replaced by training,
#: never read), see the module notes.
RETIRED_FORMATS = ("neuromark-fscil-1", "neuromark-primate-decoder-1")
#: The command a missing or stale checkpoint asks for.
TRAIN_COMMAND = "run `neuromark train CONFIG`"


def recipe_hash(recipe: dict[str, Any], data: Path | bytes | Iterable[Path | bytes]) -> str:
    """sha256 of ``recipe`` (canonical JSON) and the training ``data``: a file (its bytes),
    a folder (each file's relative name, NUL and bytes, in sorted order), ``bytes``, or a
    sequence of those, in order."""
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode())
    items = [data] if isinstance(data, (str, Path, bytes, bytearray)) else list(data)
    for item in items:
        if isinstance(item, (bytes, bytearray)):
            digest.update(item)
            continue
        path = Path(item)
        if not path.is_dir():
            update_digest(digest, path)
            continue
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(file.relative_to(path).as_posix().encode() + b"\0")
            update_digest(digest, file)
    return str(digest.hexdigest())


def is_neuromark_checkpoint(payload: Any) -> bool:
    """True when a loaded payload carries neuromark's checkpoint header (``format``), the
    current one or a retired one (:data:`RETIRED_FORMATS`: a file neuromark wrote, which it
    may replace)."""
    return isinstance(payload, dict) and (payload.get("format") == FORMAT
                                          or payload.get("format") in RETIRED_FORMATS)


def checkpoint_owner(path: Path) -> str | None:
    """None when the file at ``path`` is a neuromark checkpoint (its header is ours), else
    the reason it is not: neuromark never overwrites such a file."""
    try:
        payload = read_weights(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is foreign
        return str(exc)
    if is_neuromark_checkpoint(payload):
        return None
    return f"no 'format': {FORMAT} header ({type(payload).__name__})"


def read_checkpoint(path: Path, kinds: Iterable[str] | None = None, *, what: str = "") -> dict[str, Any]:
    """The checkpoint dict at ``path`` in the current header, or :class:`DataError` with the
    real reason: missing, not loadable, not a neuromark checkpoint, one of a retired header
    (:data:`RETIRED_FORMATS`: retrain it), a malformed dict, or a ``kind`` outside
    ``kinds``. ``what`` names the checkpoints expected (in messages)."""
    path = Path(path)
    try:
        payload = read_weights(path, missing_hint=f"; {TRAIN_COMMAND} first")
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - torch raises many types for foreign bytes
        raise DataError(f"{path}: not a loadable checkpoint: {type(exc).__name__}: {exc}") from None
    if not is_neuromark_checkpoint(payload):
        got = sorted(map(str, payload))[:6] if isinstance(payload, dict) else type(payload).__name__
        raise DataError(f"{path}: not a neuromark {what + ' ' if what else ''}checkpoint (no "
                        f"'format': {FORMAT} header; got {got})")
    if payload["format"] in RETIRED_FORMATS:
        raise DataError(f"{path}: a checkpoint of neuromark before 0.2.0 (header "
                        f"{payload['format']!r}), no longer read; {TRAIN_COMMAND} to retrain it "
                        "(a run with train_if_missing: true replaces it too)")
    unknown = sorted(str(k) for k in payload if k not in KEYS)
    missing = [k for k in KEYS[:4] if k not in payload]
    if unknown or missing:
        raise DataError(f"{path}: malformed checkpoint: "
                        + "; ".join(([f"missing key(s) {missing}"] if missing else [])
                                    + ([f"unknown key(s) {unknown}"] if unknown else [])))
    kinds = tuple(kinds) if kinds is not None else None
    if kinds is not None and payload["kind"] not in kinds:
        raise DataError(f"{path}: malformed checkpoint: unknown kind {payload['kind']!r} "
                        f"(one of {', '.join(kinds)})")
    for key in ("config", "state_dict", "meta"):
        if key in payload and not isinstance(payload[key], dict):
            raise DataError(f"{path}: malformed checkpoint: '{key}' must be a mapping, got "
                            f"{type(payload[key]).__name__}")
    return payload


def restore_network(path: Path, payload: dict[str, Any], build: Callable[[dict[str, Any]], Any],
                    what: str) -> Any:
    """``build(payload["config"])`` with the checkpoint's state dict loaded, in eval mode; a
    config or state dict that does not fit is :class:`DataError` naming ``path`` and ``what``."""
    try:
        net = build(payload["config"])
        net.load_state_dict(payload["state_dict"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise DataError(f"{path}: malformed {what} checkpoint: {exc}") from None
    return net.eval()


def save_checkpoint(path: Path, model: Any, meta: dict[str, Any]) -> Path:
    """Write ``model.checkpoint()`` (``kind``, ``config``, ``state_dict``) with the header
    and ``meta`` atomically (permissions 0666 less the umask, like any file written)."""
    import torch

    payload = {**model.checkpoint(), "format": FORMAT, "meta": meta}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)
    return Path(path)


@dataclass
class Prepared:
    """A checkpoint ready for evaluation (see :func:`prepare`).

    Attributes:
        path: the checkpoint file.
        trained: True when it was (re)trained now, False when the cached one was reused.
        model: the checkpoint's model in eval mode, as saved (the family's ``load``).
        meta: the checkpoint's meta (recipe hash and recipe, training curves and time).
    """

    path: Path
    trained: bool
    model: Any
    meta: dict[str, Any]


def recipe_changes(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted keys where two recipes differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(set(old) | set(new), key=str):
            where = f"{prefix}.{k}" if prefix else str(k)
            out += [where] if k not in old or k not in new else recipe_changes(old[k], new[k], where)
        return out
    return [] if old == new else [prefix or "recipe"]


def prepare(family: Any, target: Path, recipe: dict[str, Any], data: Any,
            fit: Callable[[], tuple[Any, dict[str, Any]]], *, train_if_missing: bool = True,
            retrain: bool = False, device: Any = "cpu",
            accept: Callable[[dict[str, Any]], None] | None = None) -> Prepared:
    """The checkpoint of ``recipe`` at ``target``: the cached one when its recipe hash
    (``recipe`` and the training ``data``, :func:`recipe_hash`) matches, else ``fit()``
    trained and saved under the replacement rule (module notes), then loaded back with
    ``family.load`` so that evaluation sees the weights exactly as saved.

    Args:
        family: a :class:`~neuromark.training.family.ModelFamily` (``load``; ``trains_on``).
        recipe: the JSON-able identity of the trained weights (dataset, model options,
            ``train.recipe()``, the device when not the CPU).
        fit: trains a fresh model: ``(model with checkpoint(), info for the meta)``.
        retrain: train even when the cached recipe matches (``neuromark train``).
        device: where training runs (the meta records it and the torch version).
        accept: called with a reused checkpoint's meta (may raise, e.g. on test labels).
    """
    target = Path(target)
    digest = recipe_hash(recipe, data)
    if target.exists() and not target.is_file():
        raise DataError(f"{target}: checkpoint path is not a file (a folder?)")
    if target.is_file():
        foreign = checkpoint_owner(target)
        if foreign is not None:
            raise DataError(f"{target}: not a neuromark checkpoint ({foreign}); neuromark never "
                            "overwrites a file it did not write: move it away or set "
                            "model.checkpoint to another path")
        try:
            model, meta = family.load(target)
            problem = ""
        except DataError as exc:
            model, meta, problem = None, {}, str(exc)
        if not retrain and not problem and meta.get("recipe_hash") == digest:
            if accept is not None:
                accept(meta)
            return Prepared(target, False, model, meta)
        keys = recipe_changes(meta.get("recipe"), recipe) if meta.get("recipe") else []
        if not retrain and not train_if_missing:
            raise DataError(f"{target}: " + (f"checkpoint does not load: {problem}" if problem else
                                             "checkpoint was made from a different recipe or "
                                             "data" + (f" ({', '.join(keys)})" if keys else ""))
                            + f"; {TRAIN_COMMAND}")
        why = ("`neuromark train` retrains it" if retrain else
               f"it does not load ({problem})" if problem else
               "its recipe differs" + (f" ({', '.join(keys)})" if keys else
                                       " (the training data or recipe changed)"))
        print(f"replacing neuromark checkpoint {target}: {why} (rule: a neuromark checkpoint "
              "is replaced by `neuromark train`, or by a run with train_if_missing: true when "
              "its recipe differs; files neuromark did not write are never replaced)",
              file=sys.stderr)
    elif not train_if_missing and not retrain:
        raise DataError(f"{target}: no such checkpoint and train_if_missing is false; "
                        f"{TRAIN_COMMAND}")
    model, info = fit()
    meta = {"recipe_hash": digest, "recipe": recipe, **info,
            **checkpoint_device_meta(training_device(family, device))}
    save_checkpoint(target, model, meta)
    model, meta = family.load(target)
    return Prepared(target, True, model, meta)
