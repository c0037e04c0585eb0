"""The offline spoken-digit corpus generator: English and German digits 0-9 synthesised with
espeak-ng, converted to spikes with our cochlea, written in the SHD layout.

The corpus itself (class names, splits, the shipped and checksummed files) is described by
:mod:`neuromark.benchmarks.shd.spoken_digits`, the reader side. A speaker is an espeak-ng voice
variant with its own pitch and speed (:data:`SPEAKERS`); the test split holds speakers
absent from the training split. To regenerate the shipped files (identical bytes for the
same espeak-ng and numpy/scipy versions)::

    neuromark data spoken-digits src/neuromark/benchmarks/shd/files/spoken_digits

Generation needs the ``espeak-ng`` program (Debian/Ubuntu: ``sudo apt-get install -y
espeak-ng``), run through :mod:`neuromark.synth.speech`; it runs the cochlea on all cores with
one process per core.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from neuromark.benchmarks.shd.spoken_digits import KEYS, SPLITS, WORDS, verify
from neuromark.data.download import file_digest
from neuromark.data.hdf5_spikes import write_shd_file
from neuromark.errors import DataError
from neuromark.io_atomic import write_text_atomic
from neuromark.processors.cochlea.convert import Clip, clips_to_spikes
from neuromark.processors.cochlea.model import SHD_SAMPLE_RATE
from neuromark.processors.cochlea.params import check_constants
from neuromark.synth.speech import espeak_binary, espeak_version, speak, trim_silence

#: Version of the corpus recipe; bump it whenever the generated spikes would change.
CORPUS_VERSION = "1"


@dataclass(frozen=True)
class Speaker:
    """One synthetic speaker: an espeak-ng voice variant with a pitch (0-99) and speed (words/min)."""

    id: int
    variant: str
    gender: str
    pitch: int
    speed: int
    split: str  # "train" or "test"


def _make_speakers() -> tuple[Speaker, ...]:
    variants = [
        ("m1", "male"), ("f1", "female"), ("m2", "male"), ("f2", "female"), ("m3", "male"),
        ("f3", "female"), ("m4", "male"), ("f4", "female"), ("m5", "male"), ("f5", "female"),
        ("m6", "male"), ("aunty", "female"), ("m7", "male"), ("belinda", "female"),
        ("klatt", "male"), ("linda", "female"), ("klatt2", "male"), ("steph", "female"),
        ("adam", "male"), ("grandma", "female"), ("benjamin", "male"), ("whisperf", "female"),
        ("edward", "male"), ("klatt3", "male"),
    ]
    speakers = []
    for i, (variant, gender) in enumerate(variants):
        pitch = 30 + (17 * i) % 41  # 30..70
        speed = 130 + (23 * i) % 50  # 130..179 words per minute
        split = "test" if i % 4 == 3 else "train"  # 6 held-out speakers
        speakers.append(Speaker(i, variant, gender, pitch, speed, split))
    return tuple(speakers)


#: The 24 speakers: 18 for training, 6 held out for testing.
SPEAKERS: tuple[Speaker, ...] = _make_speakers()


def synthesise(text: str, language: str, speaker: Speaker) -> tuple[np.ndarray, int]:
    """Speak ``text`` with espeak-ng as ``speaker`` (voice ``language+variant``, its pitch
    and speed): (float64 mono samples, rate in Hz, 22050 for espeak-ng)."""
    return speak(text, f"{language}+{speaker.variant}", pitch=speaker.pitch, speed=speaker.speed)


@dataclass(frozen=True)
class Utterance:
    speaker: Speaker
    language: str
    digit: int
    label: int
    text: str


def utterances(speakers: Sequence[Speaker] = SPEAKERS, digits: Sequence[int] = range(10)) -> list[Utterance]:
    """All (speaker, language, digit) combinations in file order."""
    out = []
    for speaker in speakers:
        for lang_index, (code, words) in enumerate(WORDS.values()):
            for digit in digits:
                out.append(Utterance(speaker, code, digit, 10 * lang_index + digit, words[digit]))
    return out


def _padded_length(max_samples_48k: int) -> int:
    """Smallest N >= max_samples with N // 2 + 1 a fast FFT length (the cochlea's inverse FFT)."""
    from scipy.fft import next_fast_len

    half = next_fast_len(max_samples_48k // 2 + 1, real=True)
    return 2 * (half - 1)


def _recipe(speakers: Sequence[Speaker], digits: Sequence[int],
            cochlea_constants: str = "lauscher") -> dict[str, object]:
    recipe: dict[str, object] = {
        "corpus_version": CORPUS_VERSION, "speakers": [asdict(s) for s in speakers],
        "words": {k: list(v[1]) for k, v in WORDS.items()}, "cochlea_rate": SHD_SAMPLE_RATE}
    if list(digits) != list(range(10)):
        recipe["digits"] = list(digits)
    if cochlea_constants != "lauscher":  # the default keeps the shipped corpus' recipe
        recipe["cochlea_constants"] = cochlea_constants
    return recipe


def build_corpus(
    out_dir: str | os.PathLike[str],
    *,
    speakers: Sequence[Speaker] = SPEAKERS,
    digits: Sequence[int] = range(10),
    jobs: int | None = None,
    force: bool = False,
    progress: Callable[[int, int], None] | None = None,
    cochlea_constants: str = "lauscher",
) -> dict[str, Path]:
    """Synthesise, convert and write ``train.h5``, ``test.h5`` and ``SHA256SUMS`` to ``out_dir``.

    Cached: when ``out_dir`` already holds files made by the same recipe whose checksums
    match, nothing is recomputed (``force=True`` rebuilds). ``jobs`` worker processes run
    the cochlea (default: all cores). ``speakers`` and ``digits`` select a subset (tests).
    Utterance ``i`` (in :func:`utterances` order) gets the cochlea seed ``1000 + i``.
    ``cochlea_constants``: ``lauscher`` (default, the shipped corpus) or ``paper``
    (:mod:`neuromark.processors.cochlea.params`), checked first and part of the recipe.
    Returns ``{"train": path, "test": path}``.
    """
    check_constants(cochlea_constants, "cochlea_constants")
    out = Path(out_dir)
    recipe = _recipe(speakers, digits, cochlea_constants)
    recipe_hash = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    paths = {split: out / f"{split}.h5" for split in SPLITS}
    if not force and _cached(out, recipe_hash):
        return paths
    foreign = _foreign_files(out)
    if foreign:
        raise DataError(f"{out}: holds {', '.join(foreign)}, not written by this generator; "
                        f"they are not replaced (not even with --force): choose an empty or new "
                        f"folder, or move them away (nothing was changed)")

    espeak_binary("the spoken-digit corpus",
                  otherwise="use the shipped files (neuromark.benchmarks.shd.spoken_digits.shipped_corpus())")
    items = utterances(speakers, digits)
    workers = jobs or os.cpu_count() or 1
    with ThreadPoolExecutor(workers) as threads:  # espeak-ng runs as a subprocess
        waves = list(threads.map(lambda u: synthesise(u.text, u.language, u.speaker), items))
    audio = [(trim_silence(wave, rate), rate) for wave, rate in waves]
    longest = max(int(np.ceil(a.size * SHD_SAMPLE_RATE / r)) for a, r in audio)
    pad_to = _padded_length(longest) / SHD_SAMPLE_RATE
    results = clips_to_spikes([Clip(a, r) for a, r in audio], sample_rate=SHD_SAMPLE_RATE,
                              pad_to=pad_to, seed=1000, jobs=workers, progress=progress,
                              cochlea_constants=cochlea_constants)

    espeak = espeak_version()
    gender = np.array([s.gender.encode() for s in SPEAKERS])  # meta_info is indexed by speaker id
    for split, path in paths.items():
        chosen = [i for i, item in enumerate(items) if item.speaker.split == split]
        write_shd_file(
            path,
            [results[i][0] for i in chosen],
            [results[i][1] for i in chosen],
            [items[i].label for i in chosen],
            speakers=[items[i].speaker.id for i in chosen],
            keys=KEYS,
            meta_info={"gender": gender, "age": np.zeros(len(SPEAKERS), dtype=np.uint16),
                       "body_height": np.zeros(len(SPEAKERS), dtype=np.float32)},
            attrs={"neuromark_corpus": "spoken_digits", "split": split, "recipe_sha256": recipe_hash,
                   "recipe": json.dumps(recipe, sort_keys=True), "synthesiser": espeak,
                   "pad_to_s": pad_to, "note": "meta_info age and body_height are 0 (unknown)"},
        )
    sums = "".join(f"{file_digest(p)}  {p.name}\n" for p in paths.values())
    write_text_atomic(out / "SHA256SUMS", sums + f"# recipe {recipe_hash}\n")
    return paths


def _foreign_files(out: Path) -> list[str]:
    """The files :func:`build_corpus` writes (``train.h5``, ``test.h5``, ``SHA256SUMS``)
    that exist in ``out`` but are not its own (an HDF5 file without its
    ``neuromark_corpus`` mark, a checksum list without its recipe line)."""
    import h5py

    found = []
    for split in SPLITS:
        path = out / f"{split}.h5"
        if not path.exists():
            continue
        try:
            with h5py.File(path, "r") as handle:
                mark = handle.attrs.get("neuromark_corpus")
        except OSError:
            mark = None
        if (mark.decode() if isinstance(mark, bytes) else mark) != "spoken_digits":
            found.append(path.name)
    sums = out / "SHA256SUMS"
    if sums.exists() and (not sums.is_file() or not any(
            line.startswith("# recipe ") for line in sums.read_text(errors="replace").splitlines())):
        found.append(sums.name)
    return found


def _cached(out: Path, recipe_hash: str) -> bool:
    sums = out / "SHA256SUMS"
    if not sums.is_file():
        return False
    lines = sums.read_text().splitlines()
    if f"# recipe {recipe_hash}" not in lines:
        return False
    try:
        verify(out)
    except DataError:
        return False
    return True
