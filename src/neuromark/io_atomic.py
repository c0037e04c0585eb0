"""Atomic file writes (temp file + fsync + rename) and plain-JSON conversion, shared by
every writer of results, reports, caches and checkpoints.

Re-exported by :mod:`neuromark.results`, so ``from neuromark.results import atomic_path``
keeps working.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from neuromark.errors import ConfigError


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/torch scalars and arrays, tuples, paths to plain JSON values.

    Non-finite floats are kept as the strings "NaN"/"Infinity"/"-Infinity" so that the
    file stays strict JSON and nothing is silently turned into 0.
    """
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if hasattr(obj, "tolist"):  # numpy / torch
        return to_jsonable(obj.tolist())
    if hasattr(obj, "item"):
        return to_jsonable(obj.item())
    if hasattr(obj, "model_dump"):  # pydantic
        return to_jsonable(obj.model_dump())
    raise TypeError(f"cannot convert {type(obj).__name__} to JSON")


def canonical_json(data: Any) -> str:
    """``data`` as canonical JSON: plain values (:func:`to_jsonable`), sorted keys, no
    spaces (``{"a":1,"b":[2,3]}``); the text every digest of a config or options hashes."""
    return json.dumps(to_jsonable(data), sort_keys=True, separators=(",", ":"))


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of the file at ``path``, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Write a file atomically: yields a temp path beside ``path`` to write to; on success
    it gets the usual permissions (0666 less the umask; mkstemp makes 0600 files) and
    replaces ``path`` with ``os.replace``; on failure it is removed and ``path`` is left as
    it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`), fsynced."""
    with atomic_path(path) as tmp, open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return Path(path)


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> Path:
    """Write ``data`` as indented JSON to ``path`` atomically (see :func:`atomic_path`)."""
    text = json.dumps(to_jsonable(data), indent=1, allow_nan=False) + "\n"
    return write_text_atomic(path, text)


def temp_beside(path: str | os.PathLike[str]) -> Path:
    """A new, uniquely named empty file beside ``path`` (``.NAME.XXXX.tmp``, made by
    ``mkstemp``) for a writer that needs a path, not a handle; the caller deletes it or
    renames it onto ``path``. Never a name a user's file may already have."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~current_umask())  # the usual permissions once renamed (not 0600)
    return Path(tmp)


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether ``a`` and ``b`` name one file (same inode when both exist, else the same
    resolved path: a link or ``..`` does not disguise it)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def claim_output_file(path: str | os.PathLike[str], *, overwrite: bool = False,
                      protected: Mapping[str, str | os.PathLike[str] | None] | None = None,
                      flag: str = "OUT") -> Path:
    """Check, before any work, that a command may write the file ``path`` (the rule of
    ``neuromark run --out``); returns it. Raises :class:`~neuromark.errors.ConfigError`
    naming ``flag`` and the reason when ``path`` is one of the ``protected`` inputs (what ->
    path: the config, its checkpoint; never written, even with ``overwrite``), a folder,
    an existing file without ``overwrite``, or when its folder is missing or not writable."""
    target = Path(path)
    for what, other in (protected or {}).items():
        if other is not None and same_file(target, other):
            raise ConfigError(f"{flag} {target}: is {what}; neuromark never writes over its "
                              f"own inputs (not even with --overwrite): choose another path")
    if target.is_dir():
        raise ConfigError(f"{flag} {target}: is a folder; give a file name")
    if target.exists() and not overwrite:
        raise ConfigError(f"{flag} {target}: the file exists; it is not replaced: choose "
                          f"another path or pass --overwrite")
    parent = target.parent
    if not parent.is_dir():
        raise ConfigError(f"{flag} {target}: its folder {parent} does not exist; create it "
                          f"first (nothing was written)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{flag} {target}: its folder {parent} is not writable (nothing was "
                          f"written)")
    return target
