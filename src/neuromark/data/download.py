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
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from neuromark.errors import ChecksumError, DataError
from neuromark.results import current_umask

_BLOCK = 1 << 20


def file_digest(path: str | os.PathLike[str], algorithm: str = "sha256") -> str:
    """Hex digest of a file (``"sha256"`` or ``"md5"``), read in 1 MiB blocks."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: str | os.PathLike[str], *, sha256: str | None = None, md5: str | None = None) -> None:
    """Check a file's sha256 (and/or md5); raise :class:`ChecksumError` naming file and digests.

    At least one checksum must be given: an unverifiable file is an error, not a pass.
    """
    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: no such file")
    if sha256 is None and md5 is None:
        raise ChecksumError(f"{file}: no checksum known to verify against")
    for algorithm, expected in (("sha256", sha256), ("md5", md5)):
        if expected is None:
            continue
        actual = file_digest(file, algorithm)
        if actual.lower() != expected.lower():
            raise ChecksumError(f"{file}: {algorithm} is {actual}, expected {expected} "
                                "(corrupt or incomplete download; delete it and download again)")


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
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout_s) as response:  # noqa: S310
                    shutil.copyfileobj(response, out, _BLOCK)
            except OSError as exc:
                raise DataError(f"cannot download {url}: {exc}") from exc
        for algorithm, expected in (("sha256", sha256), ("md5", md5)):
            actual = file_digest(tmp, algorithm) if expected else None
            if actual is not None and actual != expected.lower():
                raise ChecksumError(f"{url} -> {target}: {algorithm} is {actual}, expected {expected} "
                                    "(corrupt or tampered download; nothing was kept)")
        os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes 0600 files
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
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
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out, gzip.open(source, "rb") as inp:
                shutil.copyfileobj(inp, out, _BLOCK)
            os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes 0600 files
            os.replace(tmp, target)
        except (OSError, EOFError) as exc:
            raise DataError(f"{source}: corrupt or truncated gzip archive: {exc}") from exc
        finally:
            Path(tmp).unlink(missing_ok=True)
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
