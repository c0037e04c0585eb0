"""Convert many audio clips, or a folder of audio files, to a spike data set in the SHD layout.

Used by ``neuromark data cochlea IN_DIR OUT.h5 [--labels CSV] [--constants lauscher|paper]``
and by the spoken-digit corpus. ``constants`` names the cochlea's constant set
(:func:`~neuromark.processors.cochlea.params.constants`; default ``lauscher``), checked before
any audio is read and recorded in the file's attributes. Clips run through
:class:`~neuromark.processors.cochlea.model.Cochlea` in worker processes (one per core by
default). Clip ``i`` gets the seed ``seed + i``, so the output
does not depend on the number of workers.

Labels (in this order of precedence):
- ``--labels CSV``: a CSV file with a header holding ``file`` (path relative to IN_DIR)
  and ``label`` (an integer class index or a class name), and optionally ``speaker``
  (integer). Only the listed files are converted, in the CSV's order.
- otherwise, as torchvision's ``ImageFolder``: each sub-folder of IN_DIR is a class
  (sorted names -> 0, 1, ...), and its audio files (any depth) are the samples;
- a flat folder gets label 0 for every file.
"""

from __future__ import annotations

import csv
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neuromark.config import cpu_limit, jobs_within
from neuromark.data.hdf5_spikes import write_shd_file
from neuromark.errors import DataError
from neuromark.processors.cochlea.model import SHD_SAMPLE_RATE, Cochlea, read_audio
from neuromark.processors.cochlea.params import check_constants, constants

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")


@dataclass(frozen=True)
class Clip:
    """One audio clip to convert: samples (float64 mono) and rate in Hz."""

    audio: np.ndarray
    rate: int


def _init_worker() -> None:
    import numba

    numba.set_num_threads(1)  # one process per core; no nested threads


def _job(job: tuple[int, Clip | Path, int | None, float | None, int, str]
         ) -> tuple[int, np.ndarray, np.ndarray]:
    index, clip, sample_rate, pad_to, seed, name = job
    if isinstance(clip, Path):  # read in the worker: the parent never holds all the audio
        clip = Clip(*read_audio(clip))
    spikes = Cochlea(params=constants(name), sample_rate=sample_rate, pad_to=pad_to)(
        clip.audio, clip.rate, seed=seed)
    return index, spikes.times, spikes.units


def clips_to_spikes(
    clips: Sequence[Clip | Path],
    *,
    sample_rate: int | None = SHD_SAMPLE_RATE,
    pad_to: float | None = None,
    seed: int = 0,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cochlea_constants: str = "lauscher",
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(times in s, units) for every clip (or audio file), in order; clip ``i`` uses seed ``seed + i``.

    ``jobs`` worker processes (default: all cores; 1 runs in this process);
    ``cochlea_constants``: ``lauscher`` or ``paper`` (:mod:`.params`).
    """
    check_constants(cochlea_constants, "cochlea_constants")
    work = [(i, clip, sample_rate, pad_to, seed + i, cochlea_constants) for i, clip in enumerate(clips)]
    results: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(0), np.zeros(0, np.uint16))] * len(work)
    workers = min(jobs_within(jobs, "jobs") or cpu_limit(), max(len(work), 1))
    if workers == 1:
        outputs = map(_job, work)
        pool = None
    else:
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_init_worker)
        outputs = pool.map(_job, work, chunksize=4)
    try:
        for done, (index, times, units) in enumerate(outputs):
            results[index] = (times, units)
            if progress is not None:
                progress(done + 1, len(work))
    finally:
        if pool is not None:
            pool.shutdown()
    return results


def _read_labels(in_dir: Path, labels_csv: Path) -> tuple[list[Path], list[str], list[int] | None]:
    if not labels_csv.is_file():
        raise DataError(f"{labels_csv}: no such labels file")
    with open(labels_csv, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames or []
        if "file" not in fields or "label" not in fields:
            raise DataError(f"{labels_csv}: the header must name the columns 'file' and 'label' "
                            f"(optionally 'speaker'), got {fields}")
        files, labels, speakers = [], [], []
        for line, row in enumerate(reader, start=2):
            path = in_dir / row["file"]
            if not path.is_file():
                raise DataError(f"{labels_csv}:{line}: audio file {path} does not exist")
            if not row["label"]:
                raise DataError(f"{labels_csv}:{line}: empty label")
            files.append(path)
            labels.append(row["label"].strip())
            if "speaker" in fields:
                try:
                    speakers.append(int(row["speaker"]))
                except (TypeError, ValueError) as exc:
                    raise DataError(f"{labels_csv}:{line}: speaker must be an integer, got "
                                    f"{row['speaker']!r}") from exc
    if not files:
        raise DataError(f"{labels_csv}: lists no files")
    return files, labels, speakers if "speaker" in fields else None


def discover(in_dir: str | os.PathLike[str], labels_csv: str | os.PathLike[str] | None = None
             ) -> tuple[list[Path], np.ndarray, list[str], np.ndarray | None]:
    """(audio files, integer labels, class names, speakers or None) for IN_DIR (see module doc)."""
    folder = Path(in_dir)
    if not folder.is_dir():
        raise DataError(f"{folder}: not a directory")
    if labels_csv is not None:
        files, raw, speakers = _read_labels(folder, Path(labels_csv))
        if all(r.lstrip("-").isdigit() for r in raw):
            labels = np.array([int(r) for r in raw])
            if (labels < 0).any():
                raise DataError(f"{labels_csv}: labels must be >= 0")
            keys: list[str] = []
        else:
            keys = sorted(set(raw))
            labels = np.array([keys.index(r) for r in raw])
        return files, labels, keys, None if speakers is None else np.array(speakers)
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir())
    found: list[tuple[Path, int]] = []
    if classes:
        for index, name in enumerate(classes):
            found += [(f, index) for f in sorted((folder / name).rglob("*"))
                      if f.suffix.lower() in AUDIO_SUFFIXES]
    else:
        found = [(f, 0) for f in sorted(folder.iterdir()) if f.suffix.lower() in AUDIO_SUFFIXES]
    if not found:
        raise DataError(f"{folder}: no audio files ({', '.join(AUDIO_SUFFIXES)}) found")
    return [f for f, _ in found], np.array([lab for _, lab in found]), classes, None


def convert_directory(
    in_dir: str | os.PathLike[str],
    out_h5: str | os.PathLike[str],
    *,
    labels_csv: str | os.PathLike[str] | None = None,
    sample_rate: int | None = SHD_SAMPLE_RATE,
    seed: int = 0,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cochlea_constants: str = "lauscher",
) -> Path:
    """Convert every audio file of ``in_dir`` to spikes and write ``out_h5`` in the SHD layout
    (``cochlea_constants``: ``lauscher`` or ``paper``, checked before any file is read)."""
    check_constants(cochlea_constants, "cochlea_constants")
    files, labels, keys, speakers = discover(in_dir, labels_csv)
    spikes = clips_to_spikes(files, sample_rate=sample_rate, seed=seed, jobs=jobs, progress=progress,
                             cochlea_constants=cochlea_constants)
    root = Path(in_dir)
    names = [str(f.relative_to(root)) if f.is_relative_to(root) else str(f) for f in files]
    return write_shd_file(
        out_h5, [t for t, _ in spikes], [u for _, u in spikes], labels,
        speakers=speakers, keys=keys,
        attrs={"source_files": "\n".join(names), "cochlea_seed": seed,
               "cochlea_sample_rate": sample_rate or 0,
               "cochlea": "neuromark.processors.cochlea (Cramer et al. 2022, Sec. III-A)",
               "cochlea_constants": cochlea_constants},
    )
