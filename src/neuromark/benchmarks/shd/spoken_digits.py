"""The offline spoken-digit corpus, reader side: English and German digits 0-9 in the SHD
layout (``train.h5``, ``test.h5``), shipped with neuromark and checked by sha256.

It mirrors the Heidelberg Digits (SHD, Cramer et al. 2020): 20 classes (0-9 English
``english-zero`` ... , 10-19 German ``german-null`` ...), every synthetic "speaker" says
every digit in both languages, and the test split holds speakers absent from the training
split. :func:`shipped_corpus` returns the shipped files (``neuromark/data/files/
spoken_digits/``, sha256 in ``SHA256SUMS``) after checking them; read them with
:func:`neuromark.data.hdf5_spikes.read_shd_file` or any SHD reader.

Model selection uses a **validation split** carved out of ``train.h5`` by speaker
(:data:`VALID_SPEAKERS`, :func:`speaker_split`): those speakers' utterances are held out of
training, the way the test speakers are held out of ``train.h5``; the test speakers are
never used for choosing anything.

The files are made by the generator in :mod:`neuromark.benchmarks.shd.generator` (espeak-ng +
the cochlea of :mod:`neuromark.processors.cochlea`)::

    neuromark data spoken-digits src/neuromark/benchmarks/shd/files/spoken_digits
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from neuromark.data.clips import read_utf8
from neuromark.data.download import file_digest
from neuromark.errors import ChecksumError, DataError

WORDS = {
    "english": ("en", ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]),
    "german": ("de", ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"]),
}
#: Class names in label order, as in SHD's ``extra/keys``.
KEYS = [f"{lang}-{word}" for lang, (_, words) in WORDS.items() for word in words]
SHIPPED_DIR = Path(__file__).resolve().parent / "files" / "spoken_digits"
CITATION = (
    "Synthetic corpus of neuromark (espeak-ng + the cochlea model of Cramer et al., 'The Heidelberg "
    "Spiking Data Sets for the Systematic Evaluation of Spiking Neural Networks', IEEE TNNLS 2022)"
)
#: The files of the corpus, each of which ``SHA256SUMS`` must list.
SPLITS = ("train", "test")
#: Speakers of ``train.h5`` held out as the validation split (2 male, 2 female voices of
#: four espeak-ng variant families: m2, f5, klatt, steph); none of them is a test speaker.
VALID_SPEAKERS = (2, 9, 14, 17)


def speaker_split(speakers: np.ndarray | None, held_out: Sequence[int] = VALID_SPEAKERS,
                  *, name: str = "<memory>") -> tuple[np.ndarray, np.ndarray]:
    """(fit indices, held-out indices) of a file's samples, split by ``extra/speaker``.

    Args:
        speakers: (N,) speaker id per sample (``SpikeSamples.speakers``).
        held_out: speaker ids whose samples go to the second (validation) part.
        name: the file, for error messages.
    Raises DataError when the file has no speakers, or either part would be empty.
    """
    if speakers is None:
        raise DataError(f"{name}: no extra/speaker dataset; a speaker split needs speaker ids")
    ids = np.asarray(speakers)
    mask = np.isin(ids, np.asarray(held_out, dtype=ids.dtype))
    if not mask.any() or mask.all():
        raise DataError(f"{name}: speakers {sorted(held_out)} hold {int(mask.sum())} of {ids.size} "
                        f"samples; a speaker split needs samples on both sides (speakers in the "
                        f"file: {sorted(np.unique(ids).tolist())})")
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def verify(directory: str | os.PathLike[str]) -> None:
    """Check ``train.h5`` and ``test.h5`` in ``directory`` against its ``SHA256SUMS``.

    Both must be listed there (a file the sums do not cover is unverified, not valid); every
    listed file must exist and match.
    """
    folder = Path(directory)
    sums = folder / "SHA256SUMS"
    if not sums.is_file():
        raise DataError(f"{sums}: missing checksum file")
    listed: list[tuple[str, str]] = []  # (file name, sha256), every line checked
    for number, line in enumerate(read_utf8(sums, "checksum file").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2:
            raise DataError(f"{sums}:{number}: expected '<sha256>  <file name>', got {line!r}")
        listed.append((parts[1], parts[0]))
    names = {name for name, _ in listed}
    unlisted = [f"{split}.h5" for split in SPLITS if f"{split}.h5" not in names]
    if unlisted:
        raise DataError(f"{sums}: does not list {', '.join(unlisted)}, so it cannot be verified; "
                        "regenerate the corpus with: neuromark data spoken-digits DIR")
    for name, digest in listed:
        path = folder / name
        if not path.is_file():
            raise DataError(f"{path}: missing (listed in {sums})")
        actual = file_digest(path)
        if actual != digest:
            raise ChecksumError(f"{path}: sha256 {actual} does not match {digest} in {sums}; "
                                "regenerate it with: neuromark data spoken-digits DIR")


def shipped_corpus() -> dict[str, Path]:
    """Paths of the corpus shipped with neuromark, ``{"train": ..., "test": ...}``, verified."""
    verify(SHIPPED_DIR)
    return {split: SHIPPED_DIR / f"{split}.h5" for split in SPLITS}
