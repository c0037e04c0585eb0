"""NeuroBench's GSC baselines on real Speech Commands clips: the predictions through our
pipeline (our resampler, our Speech2Spikes encoder) equal those through neurobench 2.3.0's
own pre-processing (torchaudio's ``Resample`` as its examples/gsc/benchmark_ann.py applies
it; its ``S2SPreProcessor``) on the same decoded clips and the same loaded checkpoints.
A reference, never a dependency: skipped unless neurobench and torchaudio import;
``scripts/reference_checks.sh`` runs it in a scratch venv."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.reference

if os.environ.get("NEUROMARK_REQUIRE_REFERENCE"):  # scripts/reference_checks.sh: must run
    import torchaudio
    from neurobench.processors.preprocessors import S2SPreProcessor
else:
    torchaudio = pytest.importorskip("torchaudio")
    S2SPreProcessor = pytest.importorskip("neurobench.processors.preprocessors").S2SPreProcessor
    pytest.importorskip("snntorch")
    pytest.importorskip("soundfile")

from neuromark.benchmarks.keywords.neurobench_baselines import (  # noqa: E402
    FEATURES,
    one_second_clips,
    predict,
    spike_counts,
)
from neuromark.networks.neurobench_v1 import load_baseline  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLIPS = ROOT / "tests" / "fixtures" / "realdata" / "speech_commands"
CHECKPOINTS = ROOT / "configs" / "neurobench_v1" / "checkpoints" / "gsc" / "model_data"
FILES = ["yes_1000ms.wav", "no_1000ms.wav", "armkit/down.wav", "armkit/yes.wav",
         "armkit/right_left_up.wav", "armkit/yes_no_go_stop.wav"]


def all_clips() -> np.ndarray:
    return np.concatenate([one_second_clips(CLIPS / f) for f in FILES])


def test_m5_predictions_equal_neurobench_preprocessing():
    clips = all_clips()
    ours = predict("m5", CHECKPOINTS / "m5_ann", clips)
    net = load_baseline("m5", CHECKPOINTS / "m5_ann")
    resample = torchaudio.transforms.Resample(orig_freq=16000, new_freq=8000)
    with torch.inference_mode():
        theirs = net(resample(torch.from_numpy(clips)[:, None, :])).argmax(dim=-1).reshape(-1)
    assert ours.tolist() == theirs.tolist()


def test_s2s_predictions_and_spikes_equal_neurobench_preprocessing():
    clips = all_clips()
    ours = predict("s2s_snn", CHECKPOINTS / "s2s_gsc_snntorch", clips)
    waveforms = torch.from_numpy(clips)[:, :, None]  # NeuroBench's SpeechCommands: (B, 16000, 1)
    spikes, _ = S2SPreProcessor()((waveforms, torch.zeros(len(clips))))
    ours_spikes = FEATURES["s2s_snn"](clips)
    assert tuple(spikes.shape) == tuple(ours_spikes.shape) == (len(clips), 200, 20)
    assert torch.equal(spikes.float(), ours_spikes)  # event for event (9,091 events here)
    net = load_baseline("s2s_snn", CHECKPOINTS / "s2s_gsc_snntorch")
    with torch.inference_mode():
        theirs = spike_counts(net, spikes.float()).argmax(dim=-1)
    assert ours.tolist() == theirs.tolist()
