"""The espeak-ng keyword corpora: real layouts read by the real readers, deterministic,
checksummed, speaker-disjoint lists (small subsets; espeak-ng required)."""

from __future__ import annotations

import shutil
from collections import Counter

import numpy as np
import pytest

from neuromark.benchmarks.keywords.generator import (
    GSCSize,
    MSWCSize,
    build_speech_commands,
    mswc_specs,
    render,
    verify,
)
from neuromark.benchmarks.keywords.mswc import KEYWORDS, NUM_BASE_CLASSES
from neuromark.benchmarks.keywords.speech_commands import SpeechCommands
from neuromark.errors import ChecksumError

pytest.importorskip("soundfile")
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")


def test_mswc_corpus_structure():
    size = MSWCSize(base_train=4, base_val=1, base_test=2, evaluation=6, clips_per_voice=2)
    specs, lists = mswc_specs(size)
    assert len(specs) == NUM_BASE_CLASSES * 7 + 100 * 6
    assert len(lists["base_train"]) == 400 and len(lists["base_val"]) == 100
    assert sorted(k for k in lists if k.endswith("evaluation")) == sorted(
        f"{c}/evaluation" for c in ("fa", "eo", "pt", "eu", "pl", "cy", "nl", "ru", "es", "it"))
    row = lists["fa/evaluation"][0].split(",")
    assert row[1] == KEYWORDS[100] and row[2] == "fa" and row[0].startswith(KEYWORDS[100] + "/")
    train_variants = {s.voice.variant for s in specs if "base_train" in s.path}
    test_variants = {s.voice.variant for s in specs if "base_test" in s.path}
    assert not train_variants & test_variants  # base test speakers are held out
    assert {s.voice.voice for s in specs if "/rw/" in s.path} == {"sw"}  # Kinyarwanda: Swahili
    assert max(Counter((s.text, s.voice) for s in specs).values()) == 2  # 2 clips per espeak call


def test_render_is_seeded():
    rng = np.random.default_rng(0)
    speech = np.concatenate([np.zeros(2000), np.sin(np.arange(30_000) / 5) * rng.uniform(0.5, 1, 30_000),
                             np.zeros(2000)])
    specs, _ = mswc_specs(MSWCSize(1, 0, 1, 2))
    a, b = render(specs[0], speech, 22_050, 48_000), render(specs[0], speech, 22_050, 48_000)
    c = render(specs[1], speech, 22_050, 48_000)
    assert a.shape == (48_000,) and np.array_equal(a, b) and not np.array_equal(a, c)
    long = render(specs[0], np.tile(speech, 3), 22_050, 48_000)  # 3 s squeezed into the clip
    assert long.shape == (48_000,)


@needs_espeak
def test_speech_commands_corpus(tmp_path):
    size = GSCSize(speakers=3, repeats=1, words=("yes", "zero"))
    root = build_speech_commands(tmp_path / "gsc", size, jobs=1)
    splits = {s: SpeechCommands(root, s) for s in ("training", "validation", "testing")}
    assert [len(d) for d in splits.values()] == [2, 2, 2]
    speakers = {s: {f.split("/")[1].split("_")[0] for f in d.files} for s, d in splits.items()}
    assert len(set.union(*speakers.values())) == 3  # one speaker per split: disjoint
    audio, label = splits["testing"][0]
    assert audio.shape == (16_000,) and np.abs(audio).max() > 0.05 and label in (33, 34)
    first = (root / splits["training"].files[0]).read_bytes()
    shutil.rmtree(root)
    build_speech_commands(tmp_path / "gsc", size, jobs=1)
    assert (root / splits["training"].files[0]).read_bytes() == first  # deterministic
    mtime = (root / "SHA256SUMS").stat().st_mtime_ns
    build_speech_commands(tmp_path / "gsc", size, jobs=1)
    assert (root / "SHA256SUMS").stat().st_mtime_ns == mtime  # verified and reused
    with open(root / splits["training"].files[0], "r+b") as handle:
        handle.seek(100)
        handle.write(b"\x01\x02")
    with pytest.raises(ChecksumError, match="sha256 differs"):
        verify(root)
