"""Offline keyword corpora synthesised with espeak-ng, written in the real layouts so that
:class:`~neuromark.benchmarks.keywords.mswc.MSWC` and
:class:`~neuromark.benchmarks.keywords.speech_commands.SpeechCommands` read them unchanged.

- :func:`build_mswc`: the MSWC FSCIL layout (``MSWC/base_{train,val,test}.csv``,
  ``MSWC/<lang>/evaluation.csv``, ``MSWC/<lang>/clips/<word>/<file>.opus``, 48 kHz Ogg/Opus,
  1 s), the same 200 words (:data:`neuromark.benchmarks.keywords.mswc.KEYWORDS`) in the same 15
  languages: each language's espeak-ng voice (:data:`MSWC_VOICES`), except Kinyarwanda,
  which espeak-ng lacks: it is spoken by the Swahili voice (``sw``, the nearest Bantu
  language it has). Base test and validation clips come from voice variants absent from
  base training.
- :func:`build_speech_commands`: Speech Commands v0.02 (35 English words,
  ``<word>/<speaker>_nohash_<n>.wav``, 16-bit 16-kHz WAV, ``validation_list.txt`` and
  ``testing_list.txt`` holding speaker-disjoint thirds, a ``_background_noise_`` folder).

A clip: espeak-ng speaks the word with a voice variant, pitch (0-99) and speed
(words/min); the utterance is trimmed of silence, changed in speed by resampling
("tape speed", factor ``rate``, which shifts pitch and formants like a shorter or longer
vocal tract), squeezed to at most 90% of the clip when longer, placed at a seeded offset
in the 1-s clip, scaled to a seeded level, and mixed with white noise at a seeded SNR.
Every random draw comes from ``numpy.random.default_rng`` seeded by the clip's identity,
so the same espeak-ng and libsndfile versions write the same corpus; ``SHA256SUMS``
checksums every file written, and a folder that holds the same recipe and verifies is
reused as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from neuromark.benchmarks.keywords.mswc import BASE_LANGUAGES, KEYWORD_LANGUAGE, KEYWORDS, NUM_BASE_CLASSES
from neuromark.benchmarks.keywords.speech_commands import LABELS
from neuromark.data.download import file_digest
from neuromark.errors import ChecksumError, DataError, require
from neuromark.io_atomic import write_text_atomic
from neuromark.synth.speech import espeak_version, speak, trim_silence

#: Version of the corpus recipe; bump it whenever the written clips would change.
CORPUS_VERSION = "1"
#: espeak-ng voice of each MSWC language (Kinyarwanda: Swahili, the nearest it has).
MSWC_VOICES = {"en": "en-us", "fr": "fr-fr", "ca": "ca", "de": "de", "rw": "sw", "fa": "fa", "eo": "eo",
               "pt": "pt", "eu": "eu", "pl": "pl", "cy": "cy", "nl": "nl", "ru": "ru", "es": "es",
               "it": "it"}
#: Voice variants: the first 10 speak base training and the incremental sessions' clips,
#: the last 6 (held out) base validation and test.
VARIANTS = ("m1", "f1", "m2", "f2", "m3", "f3", "m4", "f4", "m5", "f5",
            "m6", "klatt", "m7", "klatt2", "aunty", "belinda")
_TRAIN_VARIANTS, _HELD_VARIANTS = VARIANTS[:10], VARIANTS[10:]


@dataclass(frozen=True)
class Voice:
    """One synthetic speaker: espeak-ng voice, variant, pitch (0-99), speed (words/min)."""

    voice: str
    variant: str
    pitch: int
    speed: int

    @property
    def id(self) -> str:
        """8 hex digits, like the hashed speaker ids of Speech Commands."""
        return f"{zlib.crc32(repr(self).encode()):08x}"


@dataclass(frozen=True)
class ClipSpec:
    """One clip to write: who says what, where it goes, and its seed."""

    text: str
    voice: Voice
    rate: int  # sample rate of the written clip
    path: str  # relative to the corpus root
    seed: int


def _seed(*parts: object) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())


def synthesise(text: str, voice: Voice) -> tuple[np.ndarray, int]:
    """espeak-ng audio of ``text`` (:func:`neuromark.synth.speech.speak`): (float64 samples,
    rate in Hz)."""
    return speak(text, f"{voice.voice}+{voice.variant}", pitch=voice.pitch, speed=voice.speed)


def render(spec: ClipSpec, audio: np.ndarray, espeak_rate: int, samples: int) -> np.ndarray:
    """The 1-s clip of one utterance (see the module notes): float32 (samples,)."""
    rng = np.random.default_rng(spec.seed)
    speech = trim_silence(audio, espeak_rate)
    # tape speed (> 1 plays faster and higher), as a ratio of small integers so that the
    # polyphase filter stays short
    ratio = Fraction(spec.rate, espeak_rate) / Fraction(rng.uniform(0.9, 1.12)).limit_denominator(16)
    limit = int(0.9 * samples)
    if speech.size * ratio > limit:  # squeeze a long utterance into 90% of the clip
        ratio = Fraction(limit, speech.size + 1).limit_denominator(64)
        while speech.size * ratio > limit:
            ratio *= Fraction(63, 64)
    wave = resample_poly(speech, ratio.numerator, ratio.denominator)
    out = np.zeros(samples)
    start = int(rng.integers(0, samples - wave.size + 1))
    out[start:start + wave.size] = wave / (np.max(np.abs(wave)) + 1e-12) * rng.uniform(0.2, 0.7)
    snr_db = rng.uniform(15.0, 35.0)
    noise_rms = np.sqrt(np.mean(wave**2) + 1e-12) * rng.uniform(0.2, 0.7) / 10 ** (snr_db / 20)
    out += rng.standard_normal(samples) * noise_rms / (np.max(np.abs(wave)) + 1e-12)
    return np.clip(out, -1.0, 1.0).astype(np.float32)


def _write(specs: Sequence[ClipSpec], root: Path, fmt: str, jobs: int | None,
           progress: Callable[[int, int], None] | None) -> None:
    sf = require("soundfile", "audio")
    done = [0]

    groups: dict[tuple[str, Voice], list[ClipSpec]] = {}
    for spec in specs:  # one espeak-ng call per (text, voice), rendered into each clip
        groups.setdefault((spec.text, spec.voice), []).append(spec)

    def one(group: list[ClipSpec]) -> None:
        audio, rate = synthesise(group[0].text, group[0].voice)
        for spec in group:
            clip = render(spec, audio, rate, spec.rate)
            target = root / spec.path
            target.parent.mkdir(parents=True, exist_ok=True)
            if fmt == "opus":
                sf.write(str(target), clip, spec.rate, format="OGG", subtype="OPUS")
            else:
                sf.write(str(target), clip, spec.rate, format="WAV", subtype="PCM_16")
            done[0] += 1
            if progress is not None:
                progress(done[0], len(specs))

    with ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:  # espeak-ng runs as a subprocess
        list(pool.map(one, groups.values()))


def _voices(language: str, variants: Sequence[str], count: int, seed: int, per_voice: int = 1) -> list[Voice]:
    """``count`` voices, each repeated ``per_voice`` times in a row (one espeak-ng call
    each, rendered differently)."""
    rng = np.random.default_rng(seed)
    voices = [Voice(MSWC_VOICES.get(language, language), variants[i % len(variants)],
                    int(rng.integers(25, 75)), int(rng.integers(130, 190)))
              for i in range(-(-count // per_voice))]
    return [voices[j // per_voice] for j in range(count)]


@dataclass(frozen=True)
class MSWCSize:
    """Clips per word: base train / val / test, and per incremental word (the real set:
    500 / 100 / 100 and 200)."""

    base_train: int = 40
    base_val: int = 0
    base_test: int = 10
    evaluation: int = 40
    clips_per_voice: int = 1


def mswc_specs(size: MSWCSize, fmt: str = "opus") -> tuple[list[ClipSpec], dict[str, list[str]]]:
    """The clips of an MSWC-layout corpus and its csv files' rows (``path,WORD,lang``)."""
    specs: list[ClipSpec] = []
    lists: dict[str, list[str]] = {"base_train": [], "base_val": [], "base_test": []}
    ext = "opus" if fmt == "opus" else "wav"
    for label, word in enumerate(KEYWORDS):
        lang = KEYWORD_LANGUAGE[label]
        if label < NUM_BASE_CLASSES:
            splits = [("base_train", size.base_train, _TRAIN_VARIANTS),
                      ("base_val", size.base_val, _HELD_VARIANTS),
                      ("base_test", size.base_test, _HELD_VARIANTS)]
        else:
            splits = [(f"{lang}/evaluation", size.evaluation, _TRAIN_VARIANTS)]
        for split, count, variants in splits:
            voices = _voices(lang, variants, count, _seed(word, split), size.clips_per_voice)
            for j, voice in enumerate(voices):
                rel = f"{word}/synth_{lang}_{voice.id}_{split.replace('/', '_')}_{j:04d}.{ext}"
                specs.append(ClipSpec(word, voice, 48_000, f"MSWC/{lang}/clips/{rel}", _seed(word, split, j)))
                lists.setdefault(split, []).append(f"{rel},{word},{lang}")
    return specs, lists


def _recipe(kind: str, size: object, fmt: str) -> dict[str, object]:
    return {"corpus": kind, "version": CORPUS_VERSION, "size": asdict(size), "format": fmt,  # type: ignore[call-overload]
            "voices": MSWC_VOICES, "variants": list(VARIANTS)}


def build_mswc(out_dir: str | os.PathLike[str], size: MSWCSize = MSWCSize(), *, fmt: str = "opus",
               jobs: int | None = None, force: bool = False,
               progress: Callable[[int, int], None] | None = None) -> Path:
    """Write (or reuse) an MSWC-layout corpus under ``out_dir``; returns ``out_dir``
    (``MSWC(out_dir, subset)`` reads it)."""
    root = Path(out_dir)
    recipe = _recipe("mswc_fscil", size, fmt)
    if not force and _cached(root, recipe):
        return root
    specs, lists = mswc_specs(size, fmt)
    _write(specs, root, fmt, jobs, progress)
    files = []
    for split, rows in lists.items():
        csv = root / "MSWC" / f"{split}.csv"
        csv.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(csv, "LINK,WORD,LANGUAGE\n" + "".join(r + "\n" for r in rows))
        files.append(csv)
    _finish(root, recipe, files + [root / s.path for s in specs])
    return root


@dataclass(frozen=True)
class GSCSize:
    """Speakers (each says every word ``repeats`` times); a third of them each in the
    validation and testing lists (the real set: 2,618 speakers)."""

    speakers: int = 24
    repeats: int = 1
    words: tuple[str, ...] = LABELS  # a subset for tests


def gsc_specs(size: GSCSize) -> tuple[list[ClipSpec], dict[str, list[str]]]:
    """The clips of a Speech Commands corpus and its split lists."""
    rng = np.random.default_rng(_seed("gsc", size.speakers))
    voices = [Voice("en-us" if i % 3 else "en", VARIANTS[i % len(VARIANTS)], int(rng.integers(20, 80)),
                    int(rng.integers(120, 200))) for i in range(size.speakers)]
    specs, lists = [], {"validation_list.txt": [], "testing_list.txt": []}
    for i, voice in enumerate(voices):
        split = ("training", "validation_list.txt", "testing_list.txt")[i % 3]
        for word in size.words:
            for n in range(size.repeats):
                rel = f"{word}/{voice.id}_nohash_{n}.wav"
                specs.append(ClipSpec(word, voice, 16_000, rel, _seed("gsc", word, voice.id, n)))
                if split != "training":
                    lists[split].append(rel)
    return specs, lists


def build_speech_commands(out_dir: str | os.PathLike[str], size: GSCSize = GSCSize(), *,
                          jobs: int | None = None, force: bool = False,
                          progress: Callable[[int, int], None] | None = None) -> Path:
    """Write (or reuse) a Speech Commands v0.02 layout corpus in ``out_dir``."""
    sf = require("soundfile", "audio")
    root = Path(out_dir)
    recipe = _recipe("speech_commands", size, "wav")
    if not force and _cached(root, recipe):
        return root
    specs, lists = gsc_specs(size)
    _write(specs, root, "wav", jobs, progress)
    noise = root / "_background_noise_" / "white_noise.wav"
    noise.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(noise), (0.05 * np.random.default_rng(0).standard_normal(160_000)).astype(np.float32),
             16_000, subtype="PCM_16")
    files = [noise]
    for name, rows in lists.items():
        write_text_atomic(root / name, "".join(r + "\n" for r in sorted(rows)))
        files.append(root / name)
    _finish(root, recipe, files + [root / s.path for s in specs])
    return root


def _finish(root: Path, recipe: dict[str, object], files: list[Path]) -> None:
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    lines = [f"{file_digest(f)}  {f.relative_to(root).as_posix()}\n" for f in files]
    meta = {**recipe, "espeak_ng": espeak_version(), "recipe_sha256": digest}
    write_text_atomic(root / "SHA256SUMS", "".join(lines) + f"# recipe {digest}\n")
    write_text_atomic(root / "corpus.json", json.dumps(meta, indent=1, ensure_ascii=False) + "\n")


def verify(root: str | os.PathLike[str]) -> None:
    """Check every file listed in ``root/SHA256SUMS``; :class:`ChecksumError` names the first
    that differs, :class:`DataError` a missing one."""
    root = Path(root)
    sums = root / "SHA256SUMS"
    if not sums.is_file():
        raise DataError(f"{sums}: missing checksum file")
    for number, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        digest, _, name = line.partition("  ")
        path = root / name
        if not path.is_file():
            raise DataError(f"{path}: missing (listed in {sums}:{number})")
        if file_digest(path) != digest:
            raise ChecksumError(f"{path}: sha256 differs from {sums}:{number}")


def _cached(root: Path, recipe: dict[str, object]) -> bool:
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    sums = root / "SHA256SUMS"
    if not sums.is_file() or f"# recipe {digest}" not in sums.read_text(encoding="utf-8").splitlines():
        return False
    try:
        verify(root)
    except DataError:
        return False
    return True


def corpus_recipe(kind: str, size: object, fmt: str) -> dict[str, object]:
    """What a corpus depends on (kind ``mswc_fscil`` or ``speech_commands``, size, format)."""
    return _recipe(kind, size, fmt)


def reusable(root: str | os.PathLike[str], recipe: dict[str, object]) -> bool:
    """Whether ``root`` holds a verified corpus of ``recipe`` (written before marks, too)."""
    return _cached(Path(root), recipe)


__all__ = ["BASE_LANGUAGES", "GSCSize", "MSWCSize", "build_mswc", "build_speech_commands", "verify"]
