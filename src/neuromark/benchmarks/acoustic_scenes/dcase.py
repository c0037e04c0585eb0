"""DCASE 2020 Task 1A: TAU Urban Acoustic Scenes 2020 Mobile (development set), as used by
the NeuroBench system-track acoustic scene classification (ASC) benchmark.

Layout (Zenodo record 3819968, after unpacking every archive into ``root``)::

    root/audio/<scene>-<city>-<location id>-<segment id>-<device>.wav   10 s, 44.1 kHz
    root/evaluation_setup/fold1_train.csv       "filename<TAB>scene_label", header row
    root/evaluation_setup/fold1_evaluate.csv    same columns
    root/meta.csv

NeuroBench ASC loader rules (matched exactly here):

- classes airport, street_traffic, bus, park; label = index in that order;
- recording device "a" only;
- train = ``fold1_train.csv``; test = ``fold1_evaluate.csv`` plus the device-a wav files of
  those scenes that appear in neither list;
- audio resampled to 8 kHz (polyphase, ``scipy.signal.resample_poly``) and cut into 1-s
  slices (a trailing partial slice is dropped).
- On the full data set there are exactly 41,360 train and 16,240 test slices; the loader
  checks this whenever the audio folder holds the full development set (23,040 files).
- No official validation split exists (the old one leaked test data): carve one out of
  train with :func:`validation_split`, seeded.

Citation: T. Heittola, A. Mesaros, T. Virtanen, "Acoustic scene classification in DCASE 2020
Challenge: generalization across devices and low complexity solutions", DCASE 2020.
"""

from __future__ import annotations

import csv
import io
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.data.clips import check_list_or_audio, read_utf8
from neuromark.data.download import fetch, unpack, verify_file
from neuromark.data.entry import Entry
from neuromark.errors import DataError, require
from neuromark.processors.encoder_cost import EncoderCost, mean_block, resample_cost

CLASSES = ("airport", "street_traffic", "bus", "park")
DEVICE = "a"
EXPECTED_SLICES = {"train": 41_360, "test": 16_240}
FULL_DEV_FILES = 23_040
ZENODO = "https://zenodo.org/record/3819968/files/"
#: Archive name -> md5 published on the Zenodo record.
ARCHIVES = {
    "TAU-urban-acoustic-scenes-2020-mobile-development.meta.zip": "6eae9db553ce48e4ea246e34e50a3cf5",
    "TAU-urban-acoustic-scenes-2020-mobile-development.doc.zip": "175f40dc3fec144347abad4d2962b7ae",
    **{f"TAU-urban-acoustic-scenes-2020-mobile-development.audio.{i}.zip": md5 for i, md5 in enumerate((
        "b1e85b8a908d3d6a6ab73268f385d5c8", "4310a13cc2943d6ce3f70eba7ba4c784",
        "ed38956c4246abb56190c1e9b602b7b8", "97ab8560056b6816808dedc044dcc023",
        "b50f5e0bfed33cd8e52cb3e7f815c6cb", "fbf856a3a86fff7520549c899dc94372",
        "0dbffe7b6e45564da649378723284062", "bb6f77832bf0bd9f786f965beb251b2e",
        "a65596a5372eab10c78e08a0de797c9e", "2ad595819ffa1d56d2de4c7ed43205a6",
        "0ad29f7040a4e6a22cfd639b3a6738e5", "e5f4400c6b9697295fab4cf507155a2f",
        "8855ab9f9896422746ab4c5d89d8da2f", "092ad744452cd3e7de78f988a3d13020",
        "4b5eb85f6592aebf846088d9df76b420", "2e0a89723e58a3836be019e6996ae460"), 1)},
}
CITATION = """@inproceedings{Heittola2020,
  author = {Heittola, Toni and Mesaros, Annamaria and Virtanen, Tuomas},
  title = {Acoustic scene classification in {DCASE} 2020 Challenge: generalization across
           devices and low complexity solutions},
  booktitle = {Proceedings of the DCASE 2020 Workshop}, year = {2020}}"""


def parse_name(name: str) -> dict[str, str]:
    """``audio/bus-lyon-1001-40001-a.wav`` -> scene, city, location, segment, device."""
    stem = Path(name).stem
    parts = stem.rsplit("-", 4)
    if len(parts) != 5 or not name.endswith(".wav"):
        raise DataError(f"{name}: not a TAU 2020 file name <scene>-<city>-<id>-<segment>-<device>.wav")
    scene, city, location, segment, device = parts
    return {"scene": scene, "city": city, "location": location, "segment": segment, "device": device}


def read_setup_csv(path: Path) -> list[tuple[str, str]]:
    """Rows ``(filename, scene_label)`` of a tab-separated evaluation-setup CSV."""
    if not path.is_file():
        raise DataError(f"ASC setup file not found: {path} (expected the TAU 2020 layout "
                        "root/evaluation_setup/fold1_*.csv)")
    with io.StringIO(read_utf8(path, "ASC setup file"), newline="") as handle:  # BOM dropped
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader, None)
        if header is None or header[:2] != ["filename", "scene_label"]:
            raise DataError(f"{path}:1: expected the header 'filename<TAB>scene_label', got {header}")
        rows = []
        for row in reader:
            if not row:
                continue
            if len(row) < 2:
                raise DataError(f"{path}:{reader.line_num}: expected 2 tab-separated columns, got {row}")
            rows.append((row[0], row[1]))
    return rows


def split_files(root: str | Path) -> dict[str, list[tuple[str, int]]]:
    """``{"train": [(relative wav, label)], "test": [...]}`` by the NeuroBench rules."""
    root = Path(root)
    setup = root / "evaluation_setup"
    listed: set[str] = set()
    out: dict[str, list[tuple[str, int]]] = {"train": [], "test": []}
    for split, file in (("train", "fold1_train.csv"), ("test", "fold1_evaluate.csv")):
        for name, scene in read_setup_csv(setup / file):
            listed.add(name)
            if scene in CLASSES and parse_name(name)["device"] == DEVICE:
                out[split].append((name, CLASSES.index(scene)))
    audio = root / "audio"
    if not audio.is_dir():
        raise DataError(f"ASC audio folder not found: {audio}")
    for wav in sorted(audio.glob("*.wav")):
        name = f"audio/{wav.name}"
        info = parse_name(name)
        if name not in listed and info["device"] == DEVICE and info["scene"] in CLASSES:
            out["test"].append((name, CLASSES.index(info["scene"])))
    return out


def load_wav(path: Path, sample_rate: int) -> np.ndarray:
    """Mono float32 audio resampled to ``sample_rate`` (polyphase filter)."""
    sf = require("soundfile", "audio")
    from scipy.signal import resample_poly

    try:
        audio, rate = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:
        raise DataError(f"{path}: cannot read audio: {exc}") from None
    mono = audio.mean(axis=1)
    if rate != sample_rate:
        ratio = Fraction(sample_rate, rate)
        mono = resample_poly(mono, ratio.numerator, ratio.denominator).astype(np.float32)
    return mono


class DcaseASC:
    """1-s slices of the NeuroBench ASC split, as a map-style dataset of
    ``(audio float32 (sample_rate,), label int)``. Nothing is downloaded on construction.

    Args:
        root: folder with ``audio/`` and ``evaluation_setup/``.
        split: "train" or "test".
        check_counts: verify 41,360 / 16,240 slices when the full development set is present.
    """

    url = ZENODO
    md5 = ARCHIVES
    citation = CITATION

    def __init__(self, root: str | Path, split: str = "train", sample_rate: int = 8000,
                 slice_s: float = 1.0, check_counts: bool = True) -> None:
        if split not in EXPECTED_SLICES:
            raise DataError(f"ASC split must be 'train' or 'test', got {split!r}")
        self.root = Path(root)
        self.split = split
        self.sample_rate = sample_rate
        self.slice_len = round(slice_s * sample_rate)
        self.files = split_files(self.root)[split]
        self.index: list[tuple[int, int]] = []
        self._cache: tuple[int, np.ndarray] | None = None
        self.rates: list[int] = []  # each file's audio rate (Hz), for the front-end cost
        for f, (name, _) in enumerate(self.files):
            n = self._count_slices(self.root / name)
            self.index += [(f, s) for s in range(n)]
        if check_counts:
            self.check_counts()

    def _count_slices(self, path: Path) -> int:
        sf = require("soundfile", "audio")
        try:
            info = sf.info(str(path))
        except Exception as exc:
            raise DataError(f"{path}: cannot read audio header: {exc}") from None
        self.rates.append(int(info.samplerate))
        resampled = int(np.ceil(info.frames * self.sample_rate / info.samplerate))
        return resampled // self.slice_len

    def check_counts(self) -> None:
        """When ``audio/`` holds the full development set, the slice count must match."""
        n_files = sum(1 for _ in (self.root / "audio").glob("*.wav"))
        if n_files >= FULL_DEV_FILES and len(self) != EXPECTED_SLICES[self.split]:
            raise DataError(f"{self.root}: {self.split} split has {len(self)} 1-s slices, expected "
                            f"{EXPECTED_SLICES[self.split]} on the full TAU 2020 Mobile development "
                            "set; the data or the loader rules differ")

    def __len__(self) -> int:
        return len(self.index)

    def front_end_cost(self) -> Any:
        """The resampling of each 1-s slice from the files' rate to ``sample_rate`` (issue
        47.4; :func:`~neuromark.processors.encoder_cost.resample_cost`), a mean over the files'
        rates weighted by their count; None when every file is at ``sample_rate``."""
        if all(r == self.sample_rate for r in self.rates):
            return None
        counts = {r: self.rates.count(r) for r in sorted(set(self.rates))}
        blocks = [resample_cost(r, self.sample_rate, round(r * self.slice_len / self.sample_rate)).to_json()
                  if r != self.sample_rate else
                  EncoderCost("resample_poly", {"rate": r, "new_rate": r}, "audio sample",
                               float(self.slice_len), [], notes=["already at the rate"]).to_json()
                  for r in counts]
        return blocks[0] if len(blocks) == 1 else mean_block(blocks, list(counts.values()))

    def label(self, i: int) -> int:
        """The class of slice ``i`` without reading its audio."""
        return self.files[self.index[i][0]][1]

    def __getitem__(self, i: int) -> tuple[np.ndarray, int]:
        if not 0 <= i < len(self.index):
            raise IndexError(f"ASC {self.split}: index {i} out of range 0..{len(self.index) - 1}")
        f, s = self.index[i]
        if self._cache is None or self._cache[0] != f:
            self._cache = (f, load_wav(self.root / self.files[f][0], self.sample_rate))
        audio = self._cache[1][s * self.slice_len:(s + 1) * self.slice_len]
        return np.ascontiguousarray(audio, dtype=np.float32), self.files[f][1]

    def audio_many(self, indices: list[int] | range) -> dict[int, np.ndarray]:
        """Audio of many slices, reading and resampling each wav file once (for loaders that
        ask in random order, e.g. LoadGen's sample library)."""
        by_file: dict[int, list[int]] = {}
        for i in indices:
            if not 0 <= i < len(self.index):
                raise IndexError(f"ASC {self.split}: index {i} out of range 0..{len(self.index) - 1}")
            by_file.setdefault(self.index[i][0], []).append(i)
        out = {}
        for f, items in by_file.items():
            audio = load_wav(self.root / self.files[f][0], self.sample_rate)
            for i in items:
                s = self.index[i][1]
                out[i] = np.ascontiguousarray(audio[s * self.slice_len:(s + 1) * self.slice_len],
                                              dtype=np.float32)
        return out

    def download(self) -> None:
        """Download and unpack every archive of the record into ``root`` (md5-verified)."""
        DCASE_ASC.download(self.root)

    def verify(self) -> None:
        """Verify the downloaded archives' md5 sums."""
        for name, md5 in ARCHIVES.items():
            verify_file(self.root / "archives" / name, md5=md5)


class DcaseEntry(Entry):
    """Entry ``dcase2020_asc``: the unpacked development set at ``root`` (``audio/``,
    ``evaluation_setup/``); the archives' published md5 are checked when they are in
    ``root/archives``. Calling it builds a split (:class:`DcaseASC`)."""

    name = "dcase2020_asc"
    citation = CITATION
    urls = tuple(ZENODO + name for name in ARCHIVES)
    manifest = {f"archives/{name}": f"md5:{md5}" for name, md5 in ARCHIVES.items()}

    def layout(self, root: Path) -> list[Path]:
        setup = [root / "evaluation_setup" / f for f in ("fold1_train.csv", "fold1_evaluate.csv")]
        return setup + (sorted((root / "audio").glob("*.wav")) or [root / "audio"])

    def check_file(self, path: Path) -> None:
        check_list_or_audio(path, ".csv", read_setup_csv, "WAV file")

    def download(self, root: str | os.PathLike[str]) -> Path:
        folder = Path(root)
        for name, md5 in ARCHIVES.items():
            archive = fetch(ZENODO + name, folder / "archives", md5=md5)
            unpack(archive, folder.parent)
        return self.record(folder)

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> DcaseASC:
        return DcaseASC(root, split, **options)

    def __call__(self, root: str | Path, split: str = "train", sample_rate: int = 8000,
                 slice_s: float = 1.0, check_counts: bool = True) -> DcaseASC:
        return DcaseASC(root, split, sample_rate, slice_s, check_counts)


DCASE_ASC = DcaseEntry()


def validation_split(n: int, fraction: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded ``(train_indices, validation_indices)`` over ``n`` training slices."""
    if not 0 < fraction < 1:
        raise DataError(f"validation fraction must be in (0, 1), got {fraction}")
    order = np.random.default_rng(seed).permutation(n)
    k = max(1, round(n * fraction))
    return np.sort(order[k:]), np.sort(order[:k])


def describe(dataset: DcaseASC) -> dict[str, Any]:
    """Counts per class, for results and docs."""
    labels = [dataset.files[f][1] for f, _ in dataset.index]
    return {"slices": len(dataset), "files": len(dataset.files),
            "per_class": {c: labels.count(i) for i, c in enumerate(CLASSES)}}
