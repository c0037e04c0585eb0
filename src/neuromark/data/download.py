"""Fetching data files: download, checksum verification (sha256, or md5 where only that is
published), and unpacking of ``.gz`` and ``.zip`` archives.

Nothing here runs on import and tests never touch the network: ``fetch`` accepts any URL
that ``urllib`` opens, ``file://`` included.

Example:
    >>> path = fetch("https://zenkelab.org/datasets/shd_test.h5.zip", "data/shd",
    ...              md5="1503a5064faa34311c398fb0a1ed0a6f")  # doctest: +SKIP
    >>> unpack(path)  # doctest: +SKIP
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from neuromark.errors import ChecksumError, DataError
from neuromark.io_atomic import atomic_path

_BLOCK = 1 << 20


def update_digest(digest: Any, path: str | os.PathLike[str]) -> Any:
    """Feed a file's bytes to a ``hashlib`` object (in 1 MiB blocks); returns ``digest``.

    For hashes over more than one file's bytes (a recipe plus its training file)."""
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest


def file_digest(path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
    """Hex digest of a file (``"sha256"`` or ``"md5"``), read in 1 MiB blocks."""
    return str(update_digest(hashlib.new(algorithm), path).hexdigest())


def _check_digests(path: str | os.PathLike[str], sha256: str | None, md5: str | None, name: str,
                   advice: str) -> None:
    """Compare ``path``'s sha256 and/or md5 with the expected ones (case-insensitive);
    raise :class:`ChecksumError` "``name``: <algorithm> is <actual>, expected <expected> (advice)"."""
    for algorithm, expected in (("sha256", sha256), ("md5", md5)):
        if expected is None:
            continue
        actual = file_digest(path, algorithm)
        if actual.lower() != expected.lower():
            raise ChecksumError(f"{name}: {algorithm} is {actual}, expected {expected} ({advice})")


def verify_file(path: str | os.PathLike[str], *, sha256: str | None = None, md5: str | None = None) -> None:
    """Check a file's sha256 (and/or md5); raise :class:`ChecksumError` naming file and digests.

    At least one checksum must be given: an unverifiable file is an error, not a pass.
    """
    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: no such file")
    if sha256 is None and md5 is None:
        raise ChecksumError(f"{file}: no checksum known to verify against")
    _check_digests(file, sha256, md5, str(file),
                   "corrupt or incomplete download; delete it and download again")


def fetch(url: str, dest_dir: str | os.PathLike[str], *, sha256: str | None = None,
          md5: str | None = None, filename: str | None = None, timeout_s: float = 60.0) -> Path:
    """Download ``url`` into ``dest_dir`` (atomically) and verify it; returns the file path.

    An existing file with the right checksum is reused without downloading. The download
    goes to a temp file that is renamed only after the checksum matched, so an interrupted
    or corrupt download never leaves a file that looks complete.

    Raises:
        DataError: the URL cannot be opened (names the URL).
        ChecksumError: the downloaded file's checksum differs (names file and digests).
    """
    if sha256 is None and md5 is None:
        raise ChecksumError(f"{url}: refusing to download without a sha256 or md5 to verify")
    folder = Path(dest_dir)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (filename or url.rstrip("/").rsplit("/", 1)[-1])
    if target.is_file():
        try:
            verify_file(target, sha256=sha256, md5=md5)
            return target
        except ChecksumError:
            target.unlink()
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310
                    shutil.copyfileobj(response, out, _BLOCK)
            except OSError as exc:
                raise DataError(f"cannot download {url}: {exc}") from exc
        _check_digests(tmp, sha256, md5, f"{url} -> {target}",
                       "corrupt or tampered download; nothing was kept")
    return target


def unpack(archive: str | os.PathLike[str], dest_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Unpack a ``.gz`` (one file) or ``.zip`` archive next to it (or into ``dest_dir``).

    Returns the unpacked files. Zip members with absolute paths or ``..`` are refused.

    Raises:
        DataError: unknown extension, or a corrupt/truncated archive (naming it).
    """
    source = Path(archive)
    folder = Path(dest_dir) if dest_dir is not None else source.parent
    folder.mkdir(parents=True, exist_ok=True)
    if source.suffix == ".gz":
        target = folder / source.stem
        with atomic_path(target) as tmp:
            try:
                with open(tmp, "wb") as out, gzip.open(source, "rb") as inp:
                    shutil.copyfileobj(inp, out, _BLOCK)
            except (OSError, EOFError) as exc:
                raise DataError(f"{source}: corrupt or truncated gzip archive: {exc}") from exc
        return [target]
    if source.suffix == ".zip":
        try:
            with zipfile.ZipFile(source) as archive_file:
                names = [m for m in archive_file.namelist() if not m.endswith("/")]
                for member in names:
                    if member.startswith(("/", "\\")) or ".." in Path(member).parts:
                        raise DataError(f"{source}: refusing unsafe member path {member!r}")
                bad = archive_file.testzip()
                if bad is not None:
                    raise DataError(f"{source}: member {bad!r} is corrupt (CRC mismatch)")
                archive_file.extractall(folder, members=names)
        except (zipfile.BadZipFile, EOFError, OSError) as exc:
            raise DataError(f"{source}: corrupt or truncated zip archive: {exc}") from exc
        return [folder / m for m in names]
    raise DataError(f"{source}: cannot unpack {source.suffix!r} files (expected .gz or .zip)")
