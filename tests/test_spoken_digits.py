"""The espeak-ng spoken-digit corpus: the generator's recipe and determinism (the shd
family's generator, speaking through ``neuromark.synth.speech``), the shipped files and their
reading, tonic."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from neuromark.benchmarks.shd import generator as gen
from neuromark.benchmarks.shd import spoken_digits as sd
from neuromark.errors import ChecksumError, DataError, MissingExtraError
from neuromark.synth import speech

HAVE_ESPEAK = shutil.which("espeak-ng") is not None


def test_reader_side_does_not_import_the_generator_or_processors() -> None:
    import subprocess
    import sys

    code = ("import sys, neuromark.benchmarks.shd.spoken_digits as sd; "
            "sd.KEYS, sd.SPLITS, sd.shipped_corpus; "
            "bad = [m for m in sys.modules if m.startswith(('neuromark.processors', 'neuromark.synth'))]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_generator_recipe_is_unchanged() -> None:
    """The recipe hash is recorded in the shipped SHA256SUMS; moving code must not change it."""
    import hashlib
    import json

    if not (sd.SHIPPED_DIR / "SHA256SUMS").is_file():
        pytest.skip("the shipped corpus is not present")
    recipe = gen._recipe(gen.SPEAKERS, range(10))
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    assert f"# recipe {digest}" in (sd.SHIPPED_DIR / "SHA256SUMS").read_text().splitlines()


def test_keys_follow_shd_class_order() -> None:
    assert len(sd.KEYS) == 20
    assert sd.KEYS[0] == "english-zero" and sd.KEYS[9] == "english-nine"
    assert sd.KEYS[10] == "german-null" and sd.KEYS[15] == "german-fünf"


def test_speakers_are_distinct_and_test_speakers_held_out() -> None:
    speakers = gen.SPEAKERS
    assert len(speakers) == 24
    assert len({(s.variant, s.pitch, s.speed) for s in speakers}) == 24
    assert [s.id for s in speakers] == list(range(24))
    test = [s for s in speakers if s.split == "test"]
    assert len(test) == 6
    for split in ("train", "test"):
        assert {s.gender for s in speakers if s.split == split} == {"male", "female"}
    assert all(0 <= s.pitch <= 99 and 80 <= s.speed <= 450 for s in speakers)


def test_utterances_cover_every_digit_language_and_speaker() -> None:
    items = gen.utterances()
    assert len(items) == 480
    counts = np.bincount([u.label for u in items])
    assert counts.tolist() == [24] * 20
    five = [u for u in items if u.label == 15]
    assert {u.text for u in five} == {"fünf"} and {u.language for u in five} == {"de"}


def test_trim_silence_keeps_a_margin() -> None:
    rate = 1000  # 10-ms margin = 10 samples
    audio = np.zeros(100)
    audio[40:50] = 1.0
    audio[30] = 0.005  # below 1 % of the peak: silence
    out = speech.trim_silence(audio, rate)
    assert out.size == 10 + 10 + 10  # samples 30..59
    assert out[10] == 1.0 and out[0] == 0.005


def test_padded_length_has_a_fast_inverse_fft() -> None:
    from scipy.fft import next_fast_len

    n = gen._padded_length(34000)
    assert n >= 34000 and n // 2 + 1 == next_fast_len(17001, real=True)


def test_missing_espeak_says_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(speech.shutil, "which", lambda name: None)
    with pytest.raises(MissingExtraError, match="apt-get install -y espeak-ng"):
        speech.espeak_binary()
    with pytest.raises(MissingExtraError, match=r"the spoken-digit corpus needs it.*shipped_corpus\(\)"):
        gen.build_corpus(tmp_path / "corpus", speakers=[gen.SPEAKERS[0]], digits=[7], jobs=1)
    assert not (tmp_path / "corpus").exists()  # refused before any file is written


ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # FIPS 180-2
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256(b"")


def test_verify_names_the_corrupted_file(tmp_path: Path) -> None:
    (tmp_path / "train.h5").write_bytes(b"abc")
    (tmp_path / "test.h5").write_bytes(b"")
    (tmp_path / "SHA256SUMS").write_text(f"{ABC_SHA256}  train.h5\n{EMPTY_SHA256}  test.h5\n# recipe x\n")
    sd.verify(tmp_path)  # sha256("abc") by hand from FIPS 180-2
    (tmp_path / "train.h5").write_bytes(b"abd")
    with pytest.raises(ChecksumError, match="train.h5"):
        sd.verify(tmp_path)
    (tmp_path / "train.h5").unlink()
    with pytest.raises(DataError, match="train.h5: missing"):
        sd.verify(tmp_path)


def test_verify_requires_both_splits_to_be_listed(tmp_path: Path) -> None:
    (tmp_path / "train.h5").write_bytes(b"abc")
    (tmp_path / "test.h5").write_bytes(b"anything: not covered by the sums")
    (tmp_path / "SHA256SUMS").write_text(f"{ABC_SHA256}  train.h5\n")
    with pytest.raises(DataError, match=r"SHA256SUMS: does not list test\.h5"):
        sd.verify(tmp_path)
    (tmp_path / "SHA256SUMS").write_text("# recipe x\n")
    with pytest.raises(DataError, match=r"does not list train\.h5, test\.h5"):
        sd.verify(tmp_path)
    (tmp_path / "SHA256SUMS").write_text(f"{ABC_SHA256}  train.h5\n{EMPTY_SHA256}\n")
    with pytest.raises(DataError, match=r"SHA256SUMS:2: expected '<sha256>  <file name>'"):
        sd.verify(tmp_path)


def test_missing_soundfile_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "soundfile", None)  # import soundfile -> ImportError
    with pytest.raises(MissingExtraError, match=r"neuromark\[audio\]"):
        gen.synthesise("one", "en", gen.SPEAKERS[0])


@pytest.mark.skipif(not HAVE_ESPEAK, reason="espeak-ng is not installed")
def test_small_corpus_is_byte_identical_and_cached(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    from neuromark.data.hdf5_spikes import read_shd_file

    speakers = [gen.SPEAKERS[0], gen.SPEAKERS[3]]  # one training, one held-out speaker
    a = gen.build_corpus(tmp_path / "a", speakers=speakers, digits=[7], jobs=1)
    b = gen.build_corpus(tmp_path / "b", speakers=speakers, digits=[7], jobs=1)
    for split in ("train", "test"):
        assert a[split].read_bytes() == b[split].read_bytes()
    mtime = a["train"].stat().st_mtime_ns
    gen.build_corpus(tmp_path / "a", speakers=speakers, digits=[7], jobs=1)  # cached: untouched
    assert a["train"].stat().st_mtime_ns == mtime
    train, test = read_shd_file(a["train"]), read_shd_file(a["test"])
    assert train.labels.tolist() == [7, 17] and test.labels.tolist() == [7, 17]
    assert set(train.speakers.tolist()) == {0} and set(test.speakers.tolist()) == {3}
    assert train.keys == sd.KEYS
    assert all(train.counts() > 500)


def _shipped_or_skip() -> dict[str, Path]:
    if not (sd.SHIPPED_DIR / "SHA256SUMS").is_file():
        pytest.skip("the shipped corpus is not present")
    return sd.shipped_corpus()


def test_shipped_corpus_layout_and_split() -> None:
    from neuromark.data.hdf5_spikes import read_shd_file

    paths = _shipped_or_skip()
    train, test = read_shd_file(paths["train"]), read_shd_file(paths["test"])
    assert len(train) == 360 and len(test) == 120
    assert np.bincount(train.labels).tolist() == [18] * 20
    assert np.bincount(test.labels).tolist() == [6] * 20
    assert not set(train.speakers.tolist()) & set(test.speakers.tolist())
    assert train.times.max() < 1.2 and train.units.max() <= 699
    assert sum(p.stat().st_size for p in paths.values()) <= 20 * 2**20


def test_shipped_corpus_reads_with_tonic(tmp_path: Path) -> None:
    tonic = pytest.importorskip("tonic")
    from neuromark.data.hdf5_spikes import read_shd_file

    paths = _shipped_or_skip()
    folder = tmp_path / "SHD"
    folder.mkdir()
    shutil.copy(paths["test"], folder / "shd_test.h5")
    (folder / "shd_test.h5.zip").write_bytes(b"")  # tonic checks that the archive exists
    data = tonic.datasets.SHD(str(tmp_path), train=False)
    ours = read_shd_file(paths["test"])
    assert len(data) == len(ours)
    events, target = data[5]
    times, units = ours.spikes(5)
    assert target == ours.labels[5]
    assert np.array_equal(events["x"], units)
    expected = np.floor(np.asarray(times, dtype=np.float64) * 1e6).astype(np.int64)  # tonic truncates to µs
    assert np.array_equal(events["t"], expected)
