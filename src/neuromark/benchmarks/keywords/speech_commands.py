"""Google Speech Commands v0.02 (35 words), with the splits and labels NeuroBench uses.

Layout (``speech_commands_v0.02.tar.gz`` unpacked; torchaudio puts it under
``SpeechCommands/speech_commands_v0.02/``)::

    <word>/<speaker>_nohash_<n>.wav     16-bit PCM, mono, 16 kHz, at most 1 s
    _background_noise_/*.wav            long noise recordings (excluded)
    validation_list.txt testing_list.txt    relative paths, one per line

- ``validation`` and ``testing`` are the files of the two lists; ``training`` is every
  ``*_nohash_*.wav`` of a word folder in neither list (``_background_noise_`` excluded).
- Labels: the 35 words in alphabetical order (:data:`LABELS`), as NeuroBench's
  ``SpeechCommands`` derives them (index in the sorted folder list, less the noise folder).
- Clips are padded with zeros or truncated to 16,000 samples (1 s).

Citation: P. Warden, "Speech Commands: A Dataset for Limited-Vocabulary Speech
Recognition", arXiv:1804.03209, 2018.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.config import jobs_within
from neuromark.data import clips
from neuromark.data.clips import check_list_or_audio, decode_clip, decoded_cache, file_list_digest, unpack_tar
from neuromark.data.download import fetch
from neuromark.data.entry import Entry, check_digest, sums_owned, synthesize_into
from neuromark.errors import DataError
from neuromark.registry import generators

URL = "http://download.tensorflow.org/data/speech_commands_v0.02.tar.gz"
#: sha256 of the archive (torchaudio ``_CHECKSUMS`` and TFDS ``checksums.tsv``).
SHA256 = "af14739ee7dc311471de98f5f9d2c9191b18aedfe957f4a6ff791c709868ff58"
SAMPLE_RATE = 16_000
CLIP_SAMPLES = 16_000
SUBSETS = ("training", "validation", "testing")
LISTS = {"validation": "validation_list.txt", "testing": "testing_list.txt"}
NOISE = "_background_noise_"
#: The 35 words, alphabetical; label = index.
LABELS = ("backward", "bed", "bird", "cat", "dog", "down", "eight", "five", "follow", "forward",
          "four", "go", "happy", "house", "learn", "left", "marvin", "nine", "no", "off", "on",
          "one", "right", "seven", "sheila", "six", "stop", "three", "tree", "two", "up",
          "visual", "wow", "yes", "zero")
CITATION = """@article{warden2018speech,
  title={Speech Commands: A Dataset for Limited-Vocabulary Speech Recognition},
  author={Warden, Pete}, journal={arXiv preprint arXiv:1804.03209}, year={2018}}"""


def dataset_folder(root: str | os.PathLike[str]) -> Path:
    """The folder holding the word folders: ``root``, or torchaudio's
    ``root/SpeechCommands/speech_commands_v0.02`` when that exists."""
    root = Path(root)
    nested = root / "SpeechCommands" / "speech_commands_v0.02"
    return nested if nested.is_dir() else root


def _read_list(path: Path) -> list[str]:
    if not path.is_file():
        raise DataError(f"{path}: split list not found (Speech Commands layout: "
                        "validation_list.txt and testing_list.txt beside the word folders)")
    out = []
    for number, line in enumerate(clips.read_utf8(path, "split list").splitlines(), start=1):
        name = line.strip()
        if not name:
            continue
        parts = Path(name).parts
        if len(parts) != 2 or "_nohash_" not in parts[1] or not name.endswith(".wav"):
            raise DataError(f"{path}:{number}: expected '<word>/<speaker>_nohash_<n>.wav', got {name!r}")
        out.append(name)
    return out


def split_files(folder: Path, subset: str) -> list[str]:
    """Relative paths ``<word>/<file>.wav`` of a subset, sorted."""
    if subset not in SUBSETS:
        raise DataError(f"Speech Commands subset must be one of {', '.join(SUBSETS)}, got {subset!r}")
    if not folder.is_dir():
        raise DataError(f"{folder}: Speech Commands folder not found")
    listed = {name: _read_list(folder / file) for name, file in LISTS.items()}
    if subset in listed:
        files = listed[subset]
        for number, name in enumerate(files, start=1):
            if not (folder / name).is_file():
                raise DataError(f"{folder / name}: clip not found (listed in {LISTS[subset]}, "
                                f"entry {number})")
        return sorted(files)
    held = set(listed["validation"]) | set(listed["testing"])
    out = []
    for wav in folder.glob("*/*_nohash_*.wav"):
        word = wav.parent.name
        if word == NOISE:
            continue
        name = f"{word}/{wav.name}"
        if name not in held:
            out.append(name)
    return sorted(out)


class SpeechCommands:
    """One subset of Speech Commands v0.02: ``dataset[i] = (clip float32 (16000,), label)``.

    Args:
        root: the folder of the word folders (or one holding torchaudio's
            ``SpeechCommands/speech_commands_v0.02``).
        subset: ``training``, ``validation`` or ``testing``.

    Nothing is downloaded or decoded on construction.
    """

    url = URL
    sha256 = SHA256
    citation = CITATION

    def __init__(self, root: str | os.PathLike[str], subset: str) -> None:
        self.root = Path(root)
        self.folder = dataset_folder(root)
        self.subset = subset
        self.files = split_files(self.folder, subset)
        labels = []
        for name in self.files:
            word = name.split("/", 1)[0]
            if word not in LABELS:
                raise DataError(f"{self.folder / name}: folder {word!r} is not one of the 35 Speech "
                                "Commands v0.02 words")
            labels.append(LABELS.index(word))
        self.labels = np.array(labels, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> tuple[np.ndarray, int]:
        if not 0 <= i < len(self.files):
            raise IndexError(f"Speech Commands {self.subset}: index {i} out of range "
                             f"0..{len(self.files) - 1}")
        audio = decode_clip(self.folder / self.files[i], SAMPLE_RATE, CLIP_SAMPLES, "truncate",
                            where=f"{self.subset} sample {i}")
        return audio, int(self.labels[i])

    def recipe(self) -> dict[str, Any]:
        """What the decoded array depends on: the file list with sizes."""
        sizes = [f"{n}:{(self.folder / n).stat().st_size}" for n in self.files]
        return {"dataset": "speech_commands_v0.02", "subset": self.subset,
                "clips_sha256": file_list_digest(sizes), "sample_rate": SAMPLE_RATE,
                "samples": CLIP_SAMPLES}

    def arrays(self, cache_dir: str | os.PathLike[str]) -> np.ndarray:
        """All clips decoded once, ``(N, 16000)`` float32, cached with their sha256."""
        return decoded_cache(cache_dir, f"speech_commands_{self.subset}", self.recipe(), len(self),
                             lambda i: self[i][0])

    def download(self) -> Path:
        """Download (2.4 GB, sha256-checked) and unpack the archive into ``root``."""
        archive = fetch(URL, self.root, sha256=SHA256)
        unpack_tar(archive, self.root)
        return self.root

    def verify_archive(self, archive: str | os.PathLike[str]) -> None:
        """Check a downloaded archive against :data:`SHA256`."""
        check_digest(Path(archive), f"sha256:{SHA256}")


# ---- data set entry (neuromark.data.entry.DatasetEntry) ----------------------------------------


class SpeechCommandsEntry(Entry):
    """Entry ``speech_commands``: the v0.02 layout at ``root``; with ``synthesize``, the
    espeak-ng corpus of :mod:`neuromark.benchmarks.keywords.generator` in that layout. Calling it builds a
    split's features (:func:`neuromark.benchmarks.keywords.models.speech_commands`)."""

    name = "speech_commands"
    citation = CITATION
    urls = (URL,)
    manifest = {URL.rsplit("/", 1)[-1]: f"sha256:{SHA256}"}

    def layout(self, root: Path) -> list[Path]:
        folder = dataset_folder(root)
        clips = sorted(p for p in folder.glob("*/*_nohash_*.wav") if p.parent.name != NOISE)
        return [folder / name for name in LISTS.values()] + clips

    def check_file(self, path: Path) -> None:
        check_list_or_audio(path, ".txt", _read_list, "WAV clip")

    def download(self, root: str | os.PathLike[str]) -> Path:
        archive = fetch(URL, root, sha256=SHA256)
        unpack_tar(archive, Path(root))
        return self.record(dataset_folder(root))

    def synthesize(self, root: str | os.PathLike[str], *, speakers: int = 24, repeats: int = 1,
                   words: list[str] | None = None, jobs: int | None = None) -> Path:
        """Write the espeak-ng corpus (:class:`~neuromark.benchmarks.keywords.generator.GSCSize`)
        into ``root``."""
        jobs_within(jobs, "synthesize.jobs")
        gen = generators.get("keywords")
        GSCSize, build_speech_commands = gen.GSCSize, gen.build_speech_commands  # noqa: N806
        corpus_recipe, reusable = gen.corpus_recipe, gen.reusable

        size = GSCSize(speakers, repeats, tuple(words) if words is not None else LABELS)
        recipe = corpus_recipe("speech_commands", size, "wav")
        return synthesize_into(root, recipe, lambda tmp: build_speech_commands(tmp, size, jobs=jobs,
                                                                                force=True),
                               what="Speech Commands keyword", complete=lambda r: reusable(r, recipe),
                               legacy=lambda r: sums_owned(r, "corpus.json"), scratch=("decoded",))

    def load(self, root: str | os.PathLike[str], split: str = "testing", **options: Any) -> SpeechCommands:
        return SpeechCommands(root, split)
