"""Short audio clips for keyword data sets: decoding, the length rule, tar unpacking and a
decode-once cache of float32 arrays with checksums.

Decoding goes through ``soundfile`` (libsndfile reads WAV, FLAC and Ogg/Opus), never
torchaudio. Decoders differ between builds (Opus above all), so a data set is decoded once
into one ``.npy`` array per split whose sha256 is recorded beside it (``.json``) with the
libsndfile version and the list of source files: results computed from the cache do not
depend on the decoder that happens to be installed later.
"""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuromark.errors import ChecksumError, DataError, require
from neuromark.io_atomic import atomic_path, write_text_atomic

#: What to do with a clip longer than the fixed length: raise, or keep its beginning.
LongClips = Literal["error", "truncate"]


def decode_clip(path: str | os.PathLike[str], sample_rate: int, samples: int,
                long_clips: LongClips = "error", where: str = "") -> np.ndarray:
    """One clip as mono float32 ``(samples,)``: zero-padded at the end when shorter.

    The file's rate must equal ``sample_rate`` (no silent resampling). A clip longer than
    ``samples`` raises :class:`DataError` naming it (``long_clips="error"``, the rule of
    the published loaders, which fail on such clips) or keeps its first ``samples``
    (``"truncate"``). ``where`` names the list row the clip comes from, for messages.
    """
    sf = require("soundfile", "audio")
    file = Path(path)
    origin = f" ({where})" if where else ""
    if not file.is_file():
        raise DataError(f"{file}: clip not found{origin}")
    try:
        audio, rate = sf.read(str(file), dtype="float32", always_2d=True)
    except Exception as exc:  # noqa: BLE001 - libsndfile raises several types
        raise DataError(f"{file}: cannot decode audio{origin}: {exc}") from None
    if rate != sample_rate:
        raise DataError(f"{file}: sample rate {rate} Hz, expected {sample_rate} Hz{origin}")
    mono = audio.mean(axis=1) if audio.shape[1] > 1 else audio[:, 0]
    if mono.size > samples:
        if long_clips == "error":
            raise DataError(f"{file}: {mono.size} samples ({mono.size / rate:.3f} s), longer than "
                            f"{samples} ({samples / rate:g} s){origin}; set long_clips='truncate' "
                            "to keep the first part")
        mono = mono[:samples]
    out = np.zeros(samples, dtype=np.float32)
    out[:mono.size] = mono
    return out


def check_list_or_audio(path: Path, list_suffix: str, read_list: Callable[[Path], object],
                        what: str) -> None:
    """``check_file`` of an audio data set: a file ending in ``list_suffix`` must parse with
    ``read_list``; any other file must be audio whose header soundfile reads (else a
    :class:`DataError` calling it "not a readable ``what``")."""
    if path.suffix == list_suffix:
        read_list(path)
        return
    sf = require("soundfile", "audio")
    try:
        sf.info(str(path))
    except Exception as exc:
        raise DataError(f"{path}: not a readable {what} (corrupt or truncated?): {exc}") from None


def array_digest(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes (C order)."""
    digest = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def decoded_files(folder: str | os.PathLike[str], name: str, recipe: dict[str, Any]
                  ) -> tuple[Path, Path]:
    """``(array, sidecar)`` paths of a decoded cache in the cache folder ``folder``, keyed
    by the digest of ``recipe`` (the data's file list with sizes): another corpus, or the
    same corpus changed, gets files of its own and nothing is written over."""
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True, default=str).encode()).hexdigest()
    stem = f"{name}-{digest[:16]}"
    return Path(folder) / f"{stem}.npy", Path(folder) / f"{stem}.json"


def decoded_cache(folder: str | os.PathLike[str], name: str, recipe: dict[str, Any], count: int,
                  decode: Callable[[int], np.ndarray]) -> np.ndarray:
    """The array ``(count, samples)`` of decoded clips, from the cache (:func:`decoded_files`:
    ``folder/name-DIGEST.npy``) when its sidecar holds the same ``recipe`` and the array's
    sha256 matches, else decoded now (``decode(i)`` per clip), checked finite and written
    atomically with its checksum. ``folder`` is a cache folder, never the data's own.

    A cached array whose bytes no longer match its recorded sha256 raises
    :class:`ChecksumError` (delete both files to decode again).
    """
    sf = require("soundfile", "audio")
    array_file, meta_file = decoded_files(folder, name, recipe)
    if array_file.exists() and not meta_file.is_file():
        raise DataError(f"{array_file}: exists without its sidecar {meta_file.name}: not a cache "
                        "neuromark wrote, so it is left alone; move it or choose another cache_dir")
    if array_file.is_file() and meta_file.is_file():
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if meta.get("recipe") == recipe:
            array = np.load(array_file, mmap_mode="r")
            actual = array_digest(np.asarray(array))
            if actual != meta.get("sha256"):
                raise ChecksumError(f"{array_file}: sha256 {actual} does not match {meta.get('sha256')} "
                                    f"in {meta_file}; delete both files to decode again")
            return np.asarray(array)
    if count == 0:
        raise DataError(f"{name}: no clips to decode")
    first = decode(0)
    array = np.empty((count, first.size), dtype=np.float32)
    array[0] = first
    for i in range(1, count):
        array[i] = decode(i)
    bad = ~np.isfinite(array).all(axis=1)
    if bad.any():  # refused before anything is written
        raise DataError(f"{name}: clip {int(np.flatnonzero(bad)[0])} decodes to NaN or infinite "
                        f"samples ({int(bad.sum())} clip(s) in all); the audio file is corrupt")
    array_file.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(array_file) as tmp, open(tmp, "wb") as handle:
        np.save(handle, array)
    write_text_atomic(meta_file, json.dumps({
        "recipe": recipe, "sha256": array_digest(array), "shape": list(array.shape),
        "dtype": "float32", "libsndfile": sf.__libsndfile_version__}, indent=1, ensure_ascii=False))
    return array


def unpack_tar(archive: str | os.PathLike[str], dest_dir: str | os.PathLike[str]) -> list[str]:
    """Extract a ``.tar.gz`` archive into ``dest_dir``; members with absolute paths, ``..``,
    links or devices are refused. Returns the member names."""
    source = Path(archive)
    try:
        with tarfile.open(source, "r:*") as tar:
            members = tar.getmembers()
            for m in members:
                unsafe = m.name.startswith(("/", "\\")) or ".." in Path(m.name).parts
                if unsafe or not (m.isfile() or m.isdir()):
                    raise DataError(f"{source}: refusing unsafe member {m.name!r}")
            tar.extractall(dest_dir, members=members)  # noqa: S202 - members checked above
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise DataError(f"{source}: corrupt or truncated tar archive: {exc}") from exc
    return [m.name for m in members]


def file_list_digest(paths: Sequence[str]) -> str:
    """sha256 of a list of relative paths (the identity of a split's file list)."""
    return hashlib.sha256("\n".join(paths).encode()).hexdigest()


def read_utf8(path: Path, what: str) -> str:
    """The text of ``path`` decoded as UTF-8 (a leading BOM dropped), whatever the locale;
    other bytes (a Latin-1 list, say) raise :class:`DataError` naming the file, the line and
    byte offset of the first undecodable byte, before any row is used."""
    raw = path.read_bytes()
    bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = bom + exc.start
        line = raw.count(b"\n", 0, at) + 1
        raise DataError(f"{path}:{line}: {what} is not UTF-8 text (byte 0x{raw[at]:02x} at "
                        f"offset {at}); save it as UTF-8") from None
