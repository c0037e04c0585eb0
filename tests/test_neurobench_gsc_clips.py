"""NeuroBench's GSC baselines (its M5 and Speech2Spikes checkpoints) on eleven real Speech
Commands clips through our pipeline, and our Speech2Spikes rule on hand-built log energies.
The equality with neurobench 2.3.0's own pre-processing is
tests/test_neurobench_gsc_reference.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from neuromark.benchmarks.keywords.features import delta_modulate

pytest.importorskip("snntorch", reason="NeuroBench's spiking baselines need the snntorch extra")
pytest.importorskip("soundfile", reason="decoding the clips needs the audio extra")

from neuromark.benchmarks.keywords.neurobench_baselines import (  # noqa: E402
    TEST_CLIPS,
    one_second_clips,
    predict,
    words,
)

ROOT = Path(__file__).resolve().parents[1]
CLIPS = ROOT / "tests" / "fixtures" / "realdata" / "speech_commands"
CHECKPOINTS = ROOT / "configs" / "neurobench_v1" / "checkpoints" / "gsc" / "model_data"


def test_speech2spikes_rule_on_hand_built_log_energies():
    # one channel: start 0.4 -> reference round(0.4) = 0; +1.0 exactly is no event (strict),
    # 1.6 is (+1, reference 1), 0.5 is no event (-0.5), -0.2 is (-1.2 < -1: -1, reference 0)
    log_mel = torch.tensor([[0.4], [1.0], [1.6], [0.5], [-0.2]])
    assert delta_modulate(log_mel, 1.0, "speech2spikes")[:, 0].tolist() == [0, 1, 0, -1]
    # ours: the reference is the first value itself, and a change of exactly 1 is an event
    assert delta_modulate(log_mel, 1.0)[:, 0].tolist() == [0, 1, 0, -1]
    assert delta_modulate(torch.tensor([[0.0], [1.0]]), 1.0)[:, 0].tolist() == [1]
    assert delta_modulate(torch.tensor([[0.0], [1.0]]), 1.0, "speech2spikes")[:, 0].tolist() == [0]
    with pytest.raises(ValueError, match="rule"):
        delta_modulate(log_mel, 1.0, "s2s")


def test_the_checkpoints_recognise_real_clips():
    clips, spoken = [], []
    for name, said in TEST_CLIPS.items():
        seconds = one_second_clips(CLIPS / name)
        assert len(seconds) == len(said), name  # one keyword a second
        clips.extend(seconds)
        spoken.extend(said)
    clips = np.stack(clips)
    for arch, ckpt, at_least in (("m5", "m5_ann", 8), ("s2s_snn", "s2s_gsc_snntorch", 7)):
        said = words(predict(arch, CHECKPOINTS / ckpt, clips))
        # NeuroBench reports 86.5 % (M5) and 84.8 % (S2S) on the 11,005-clip test split
        assert sum(a == b for a, b in zip(said, spoken, strict=True)) >= at_least, (arch, said)


def test_bad_clips_are_refused(tmp_path):
    from neuromark.errors import DataError

    with pytest.raises(DataError, match="clips must be"):
        predict("m5", CHECKPOINTS / "m5_ann", np.zeros((2, 8000), dtype=np.float32))
    with pytest.raises(DataError, match="one of"):
        predict("resnet", CHECKPOINTS / "m5_ann", np.zeros((1, 16000), dtype=np.float32))
    bad = tmp_path / "not_audio.wav"
    bad.write_bytes(b"RIFF0000WAVE")
    with pytest.raises(DataError, match="not_audio.wav"):
        one_second_clips(bad)
