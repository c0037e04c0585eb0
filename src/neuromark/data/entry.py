"""One contract for every data set: :class:`DatasetEntry`.

An entry describes a data set, not one split of it: class attributes ``name``,
``citation``, ``urls`` and ``manifest`` (published checksums of the files ``download``
fetches, ``"file": "sha256:<hex>"`` or ``"md5:<hex>"``), and two methods of one signature:

- ``download(root) -> Path``: fetch into ``root``, check the published checksums, unpack,
  record the unpacked files' sha256 in ``root/SHA256SUMS``; network, never called by tests;
- ``verify(root) -> None``: raise :class:`~neuromark.errors.DataError` naming the file and
  the expected and actual digest (:class:`~neuromark.errors.ChecksumError`), or what is
  missing or malformed.

Entries that have an offline generator also have ``synthesize(root, **options) -> Path``:
it writes the same layout from a seeded model, atomically (into a sibling folder renamed
at the end), only when ``root`` does not already hold a complete corpus of the same recipe,
and never into a folder holding files it did not write (:func:`synthesize_into`). A task
never calls a generator: a config asks for one as a data set option (``synthesize:``).

Calling an entry (``entry(split, **options)``) builds one split's data set, as the
registry (:data:`neuromark.registry.datasets`) and configs do; nothing is read, fetched or
written before the data are first used.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from neuromark.data.clips import read_utf8
from neuromark.data.download import file_digest
from neuromark.errors import ChecksumError, DataError
from neuromark.io_atomic import current_umask, write_text_atomic

#: The checksum record of a data folder (``sha256sum -c`` format, ``#`` comments allowed).
SUMS = "SHA256SUMS"
#: The mark a complete synthesized folder carries: ``{"recipe": ..., "files": [...]}``.
MARK = ".complete"


@runtime_checkable
class DatasetEntry(Protocol):
    """What every data set declares (see the module docstring)."""

    name: str
    citation: str
    urls: tuple[str, ...]
    manifest: Mapping[str, str]

    def download(self, root: str | os.PathLike[str]) -> Path: ...

    def verify(self, root: str | os.PathLike[str]) -> None: ...


@runtime_checkable
class SynthesizingEntry(DatasetEntry, Protocol):
    """A data set with an offline generator (``synthesize:`` option)."""

    def synthesize(self, root: str | os.PathLike[str], **options: Any) -> Path: ...


def check_digest(path: Path, expected: str, source: str = "") -> None:
    """``expected`` is ``"sha256:<hex>"``, ``"md5:<hex>"`` or a bare sha256; raise
    :class:`ChecksumError` naming ``path``, the expected and the actual digest."""
    algorithm, _, digest = expected.rpartition(":")
    algorithm = algorithm or "sha256"
    if not path.is_file():
        raise DataError(f"{path}: missing{f' (listed in {source})' if source else ''}")
    actual = file_digest(path, algorithm)
    if actual.lower() != digest.lower():
        raise ChecksumError(f"{path}: {algorithm} is {actual}, expected {digest}"
                            f"{f' (listed in {source})' if source else ''}; the file is corrupt, "
                            "truncated or modified: download or synthesize it again")


def read_sums(path: Path) -> dict[str, str]:
    """``{relative file name: sha256}`` of a ``SHA256SUMS`` file (``#`` lines skipped)."""
    if not path.is_file():
        raise DataError(f"{path}: missing checksum file")
    sums: dict[str, str] = {}
    for number, line in enumerate(read_utf8(path, "checksum file").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        digest, _, name = line.partition(" ")
        name = name.strip().lstrip("*")
        if len(digest) != 64 or not name:
            raise DataError(f"{path}:{number}: expected '<sha256>  <file name>', got {line!r}")
        sums[name] = digest.lower()
    return sums


def write_sums(root: Path, files: Iterable[Path], comment: str | None = None) -> Path:
    """Record the sha256 of ``files`` (below ``root``) in ``root/SHA256SUMS``, atomically."""
    lines = [f"{file_digest(f)}  {f.relative_to(root).as_posix()}\n" for f in sorted(files)]
    if comment:
        lines.append(f"# {comment}\n")
    target = root / SUMS
    write_text_atomic(target, "".join(lines))
    return target


def verify_sums(root: Path, required: Iterable[str] = ()) -> None:
    """Check every file ``root/SHA256SUMS`` lists; ``required`` names must be listed."""
    sums_path = root / SUMS
    sums = read_sums(sums_path)
    unlisted = [n for n in required if n not in sums]
    if unlisted:
        raise DataError(f"{sums_path}: does not list {', '.join(unlisted)}, so it cannot be "
                        "verified; download or synthesize the data again")
    for name, digest in sums.items():
        check_digest(root / name, f"sha256:{digest}", str(sums_path))


def layout_files(root: Path) -> list[Path]:
    """Every regular file below ``root`` except the checksum record and the mark."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name not in (SUMS, MARK))


def synthesized_recipe(root: Path) -> Any:
    """The recipe of the synthesized corpus at ``root`` (its mark), or None."""
    mark = root / MARK
    if not mark.is_file():
        return None
    try:
        saved = json.loads(mark.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return saved.get("recipe") if isinstance(saved, dict) and "recipe" in saved else saved


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=list))


def synthesize_into(root: str | os.PathLike[str], recipe: Mapping[str, Any],
                    write: Callable[[Path], object], *, what: str,
                    complete: Callable[[Path], bool] | None = None,
                    legacy: Callable[[Path], set[str]] | None = None,
                    scratch: Iterable[str] = ()) -> Path:
    """Write a synthesized corpus into ``root``, atomically; returns ``root``.

    ``root`` is reused when its mark records ``recipe`` (or ``complete(root)`` says it
    holds a complete corpus of it, for folders written before the mark existed). Else
    ``write(tmp)`` writes the corpus into a sibling folder, which gets a ``SHA256SUMS``
    (unless ``write`` made one) and the mark, then replaces ``root``. An existing ``root``
    is replaced only when it is empty or a synthesized corpus holding nothing but the files
    its mark lists (and the ``scratch`` folders, e.g. ``decoded`` caches): a folder with
    any other file is refused, never deleted. ``legacy(root)``: the files a folder written
    before marks listed their files holds as its own (by the generator's file names).
    """
    root = Path(root)
    want = _json(dict(recipe))
    if _json(synthesized_recipe(root)) == want or (complete is not None and complete(root)):
        return root
    if root.exists():
        if not root.is_dir():
            raise DataError(f"{root}: not a folder; cannot synthesize the {what} corpus there")
        owned = _owned_files(root, legacy)
        owned |= {parent.as_posix() for name in owned for parent in Path(name).parents}
        keep = set(scratch)
        foreign = [p for p in sorted(root.rglob("*")) if p.relative_to(root).parts[0] not in keep
                   and p.relative_to(root).as_posix() not in owned]
        if foreign:
            shown = ", ".join(p.relative_to(root).as_posix() for p in foreign[:3])
            raise DataError(f"{root}: holds files that are not a neuromark surrogate (a complete "
                            f"synthesized {what} corpus): {shown}{', ...' if len(foreign) > 3 else ''}; "
                            "drop the synthesize option to read them as data, or choose an "
                            "empty or new folder (nothing was changed)")
    root.parent.mkdir(parents=True, exist_ok=True)
    # a folder of its own, uniquely named beside root: the only one it ever deletes whole
    tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.", suffix=".partial", dir=root.parent))
    try:
        os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp's 0700 is not the folder's mode
        write(tmp)
        files = layout_files(tmp)
        if not (tmp / SUMS).is_file():
            write_sums(tmp, files)
        listed = [p.relative_to(tmp).as_posix() for p in files] + [SUMS, MARK]
        write_text_atomic(tmp / MARK, json.dumps({"recipe": want, "files": listed},
                                                 sort_keys=True) + "\n")
        if root.exists():
            shutil.rmtree(root)  # only its own files and scratch folders (checked above)
        tmp.rename(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)  # the folder mkdtemp made for this call
        raise
    return root


def _owned_files(root: Path, legacy: Callable[[Path], set[str]] | None) -> set[str]:
    """Files the mark at ``root`` lists; without a list, ``legacy(root)`` (or none)."""
    try:
        saved = json.loads((root / MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = None
    if isinstance(saved, dict) and isinstance(saved.get("files"), list):
        return set(saved["files"])
    return legacy(root) if legacy is not None else set()


def sums_owned(root: Path, *extra: str) -> set[str]:
    """``legacy`` rule of generators that wrote a ``SHA256SUMS``: its files, itself, ``extra``."""
    try:
        return set(read_sums(root / SUMS)) | {SUMS, MARK, *extra}
    except DataError:
        return set()


class Entry:
    """Base of the shipped entries: :meth:`verify` checks the published checksums of files
    present in ``root``, that every file of :meth:`layout` exists, the ``SHA256SUMS``
    record when there is one, then :meth:`check_file` (a cheap read of each file's
    header, naming it when malformed). Subclasses set the attributes, :meth:`layout`,
    :meth:`download` and, with a generator, ``synthesize``."""

    name: str = ""
    citation: str = ""
    urls: tuple[str, ...] = ()
    manifest: Mapping[str, str] = {}

    def layout(self, root: Path) -> list[Path]:
        """The files a complete copy at ``root`` holds (those :meth:`verify` requires)."""
        return []

    def check_file(self, path: Path) -> None:
        """Raise :class:`DataError` naming ``path`` when it is not in the layout's format."""

    def published(self, root: Path) -> Mapping[str, str]:
        """The published checksums that apply to ``root`` (none for a synthesized copy)."""
        return {} if (root / MARK).is_file() else self.manifest

    def verify(self, root: str | os.PathLike[str]) -> None:
        folder = Path(root)
        if not folder.is_dir():
            raise DataError(f"{folder}: no such data folder for {self.name}")
        for name, digest in self.published(folder).items():
            if (folder / name).is_file():
                check_digest(folder / name, digest, f"{self.name}'s published checksums")
        files = self.layout(folder)
        for path in files:
            if not path.is_file():
                raise DataError(f"{path}: missing ({self.name} needs it; download or "
                                "synthesize the data set)")
        if (folder / SUMS).is_file():
            verify_sums(folder, [p.relative_to(folder).as_posix() for p in files])
        for path in files:
            self.check_file(path)

    def download(self, root: str | os.PathLike[str]) -> Path:
        raise DataError(f"{self.name}: no published download; put the files in {root} by hand")

    def record(self, root: str | os.PathLike[str]) -> Path:
        """Write ``root/SHA256SUMS`` over the layout's files (after a checked download),
        then verify; returns ``root``."""
        folder = Path(root)
        files = self.layout(folder)
        for path in files:
            if not path.is_file():
                raise DataError(f"{path}: missing after download ({self.name})")
        write_sums(folder, files, f"recorded by neuromark after checking {self.name}'s download")
        self.verify(folder)
        return folder

    def __repr__(self) -> str:
        return f"<dataset entry {self.name!r}>"
