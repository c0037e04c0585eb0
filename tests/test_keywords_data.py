"""MSWC FSCIL and Speech Commands readers on tiny files written here in the real layouts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.benchmarks.keywords.mswc import KEYWORDS, MSWC, NUM_BASE_CLASSES, read_list
from neuromark.benchmarks.keywords.speech_commands import LABELS, SpeechCommands
from neuromark.data.clips import array_digest, decoded_files
from neuromark.errors import ChecksumError, DataError

sf = pytest.importorskip("soundfile")


def _tone(n: int, f: float, rate: int) -> np.ndarray:
    return (0.2 * np.sin(2 * np.pi * f * np.arange(n) / rate)).astype(np.float32)


def _mswc(tmp_path, *, long_clip: bool = False):
    root = tmp_path / "MSWC"
    rows = {"base_train": [("surrounding", "en"), ("l’amendement", "fr"), ("surrounding", "en")],
            "base_test": [("appearance", "en")]}
    for subset, items in rows.items():
        lines = ["LINK,WORD,LANGUAGE"]  # the header row (its word column reads WORD)
        for i, (word, lang) in enumerate(items):
            rel = f"{word}/common_voice_{subset}_{i}.opus"
            (root / lang / "clips" / word).mkdir(parents=True, exist_ok=True)
            n = 52_000 if long_clip and i == 0 else 30_000 + 1000 * i
            sf.write(root / lang / "clips" / rel, _tone(n, 300 + 50 * i, 48_000), 48_000,
                     format="OGG", subtype="OPUS")
            lines.append(f"{rel},{word},{lang}")
        (root / f"{subset}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "ru" / "clips" / "действительно").mkdir(parents=True)
    rel = "действительно/x.opus"
    sf.write(root / "ru" / "clips" / rel, _tone(48_000, 500, 48_000), 48_000, format="OGG", subtype="OPUS")
    (root / "ru" / "evaluation.csv").write_text(f"LINK,WORD,LANGUAGE\n{rel},действительно,ru\n",
                                               encoding="utf-8")
    return tmp_path


def test_mswc_reads_real_layout(tmp_path):
    root = _mswc(tmp_path)
    train = MSWC(root, "base_train")
    assert len(train) == 3 and train.labels.tolist() == [0, 21, 0]
    audio, label = train[1]
    assert audio.shape == (48_000,) and audio.dtype == np.float32 and label == KEYWORDS.index("l’amendement")
    assert np.all(audio[31_000:] == 0) and np.abs(audio[:20_000]).max() > 0.05  # padded to 1 s
    ev = MSWC(root, "evaluation", language="ru")
    assert ev[0][1] == KEYWORDS.index("действительно") >= NUM_BASE_CLASSES


def test_mswc_csv_quirks(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("LINK,WORD,LANGUAGE\na.opus,l'amendement,fr\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"x.csv:2: .*curly apostrophe"):
        read_list(bad)
    bad.write_text("a.opus,surrounding\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"x.csv:1: expected 3"):
        read_list(bad)
    bad.write_text("\ufeffLINK,WORD,LANGUAGE\na.opus,nieuwe,nl\n", encoding="utf-8")  # BOM
    assert [r.label for r in read_list(bad)] == [KEYWORDS.index("nieuwe")]


def test_mswc_missing_and_long_clips(tmp_path):
    root = _mswc(tmp_path, long_clip=True)
    train = MSWC(root, "base_train")
    with pytest.raises(DataError, match=r"longer than 48000 .*base_train.csv:2"):
        train[0]
    assert MSWC(root, "base_train", long_clips="truncate")[0][0].shape == (48_000,)
    test = MSWC(root, "base_test")
    test.clip_path(0).unlink()
    with pytest.raises(DataError, match=r"appearance/common_voice_base_test_0.opus: clip not found"):
        test[0]
    with pytest.raises(DataError, match="language="):
        MSWC(root, "evaluation")


def test_mswc_decode_cache_checksums(tmp_path):
    root = _mswc(tmp_path)
    train = MSWC(root, "base_train")
    arrays = train.arrays(tmp_path / "cache")
    assert arrays.shape == (3, 48_000)
    np.testing.assert_array_equal(arrays[1], train[1][0])
    array_file, meta_file = decoded_files(tmp_path / "cache", "base_train", train.recipe())
    meta = json.loads(meta_file.read_text())
    assert meta["sha256"] == array_digest(arrays)
    np.testing.assert_array_equal(train.arrays(tmp_path / "cache"), arrays)  # from the cache
    broken = np.load(array_file)
    broken[0, 0] += 1
    np.save(array_file, broken)
    with pytest.raises(ChecksumError, match=r"base_train-[0-9a-f]{16}\.npy"):
        train.arrays(tmp_path / "cache")


def _gsc(tmp_path):
    root = tmp_path / "SpeechCommands" / "speech_commands_v0.02"
    files = {"yes/aa_nohash_0.wav": 12_000, "yes/bb_nohash_0.wav": 16_000, "bed/aa_nohash_1.wav": 17_000,
             "zero/cc_nohash_0.wav": 8000, "backward/dd_nohash_0.wav": 16_000}
    for name, n in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        sf.write(root / name, _tone(n, 440, 16_000), 16_000, subtype="PCM_16")
    (root / "_background_noise_").mkdir()
    sf.write(root / "_background_noise_" / "white_noise.wav", _tone(32_000, 100, 16_000), 16_000)
    (root / "validation_list.txt").write_text("bed/aa_nohash_1.wav\n")
    (root / "testing_list.txt").write_text("zero/cc_nohash_0.wav\nyes/bb_nohash_0.wav\n")
    return tmp_path


def test_speech_commands_splits_and_labels(tmp_path):
    root = _gsc(tmp_path)
    train, val, test = (SpeechCommands(root, s) for s in ("training", "validation", "testing"))
    assert train.files == ["backward/dd_nohash_0.wav", "yes/aa_nohash_0.wav"]  # noise excluded
    assert val.files == ["bed/aa_nohash_1.wav"] and len(test) == 2
    assert train.labels.tolist() == [0, 33] and LABELS[34] == "zero" and len(LABELS) == 35
    audio, label = val[0]
    assert audio.shape == (16_000,) and label == 1  # 17,000 samples truncated to 1 s
    short = train[1][0]
    assert short.shape == (16_000,) and np.all(short[12_000:] == 0)
    assert test.arrays(tmp_path / "cache").shape == (2, 16_000)


def test_speech_commands_errors(tmp_path):
    root = _gsc(tmp_path)
    folder = root / "SpeechCommands" / "speech_commands_v0.02"
    (folder / "testing_list.txt").write_text("zero/missing_nohash_0.wav\n")
    with pytest.raises(DataError, match=r"missing_nohash_0.wav: clip not found \(listed in testing_list"):
        SpeechCommands(root, "testing")
    (folder / "cow").mkdir()
    sf.write(folder / "cow" / "ee_nohash_0.wav", _tone(100, 440, 16_000), 16_000)
    with pytest.raises(DataError, match="'cow' is not one of the 35"):
        SpeechCommands(root, "training")
    with pytest.raises(DataError, match="subset must be one of"):
        SpeechCommands(root, "train")


def test_speech_commands_entry_in_the_classification_task(tmp_path):
    """The speech_commands dataset entry with gsc_m5 (trained 1 epoch on first use), through
    `neuromark run`."""
    from neuromark.cli import main

    root = _gsc(tmp_path)
    (tmp_path / "gsc.yaml").write_text("""task: classification
benchmark: {id: gsc-tiny}
dataset: {name: speech_commands, options: {root: SpeechCommands/speech_commands_v0.02}}
model: {name: gsc_m5, checkpoint: m5.pt}
train: {epochs: 1, batch_size: 2}
eval: {postprocessor: argmax, metrics: [classification_accuracy, footprint, synaptic_operations]}
""")
    assert root == tmp_path
    assert main(["run", str(tmp_path / "gsc.yaml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    scores = json.loads((tmp_path / "out" / "gsc-tiny--gsc_m5.json").read_text())["scores"]
    assert scores["footprint"]["value"] == 109_228  # NeuroBench's published M5 footprint
    assert scores["synaptic_operations"]["value"]["Dense"] == 1_880_256
    assert scores["classification_accuracy"]["value"] in (0.0, 0.5, 1.0)  # 2 test clips
