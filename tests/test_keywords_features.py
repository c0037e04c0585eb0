"""Keyword features (torch.stft MFCC / mel, delta modulation) against librosa, and the GSC
baselines' Dense counts against NeuroBench's published hand counts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuromark.benchmarks.keywords.features import delta_modulate, delta_spikes, mel_power, mfcc, resample
from neuromark.benchmarks.keywords.models import M5, dense_per_sample, gsc_m5, gsc_snn
from neuromark.metrics.names import build_metrics
from neuromark.runner import Benchmark


def _clip(rate: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    t = np.arange(rate) / rate
    return (0.1 * rng.standard_normal(rate) * np.sin(2 * np.pi * 3 * t)
            + 0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)


@pytest.mark.parametrize("rate,hop", [(48_000, 240), (16_000, 80)])
def test_mel_and_mfcc_match_librosa(rate, hop):
    librosa = pytest.importorskip("librosa")
    y = _clip(rate)
    ref = librosa.feature.melspectrogram(y=y, sr=rate, n_fft=512, hop_length=hop, n_mels=20, fmin=20,
                                         fmax=4000, htk=True, norm=None, center=True, pad_mode="constant")
    ours = mel_power(y, sample_rate=rate, hop_length=hop).numpy()
    assert ours.shape == ref.shape == (20, rate // hop + 1)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-6 * ref.max())
    ref_mfcc = librosa.feature.mfcc(S=librosa.power_to_db(ref, top_db=80.0), n_mfcc=20)  # ortho DCT-II
    np.testing.assert_allclose(mfcc(y, sample_rate=rate, hop_length=hop).numpy(), ref_mfcc, atol=2e-3)
    slaney = librosa.feature.melspectrogram(y=y, sr=rate, n_fft=512, hop_length=hop, n_mels=20, fmin=20,
                                            fmax=4000, center=True, pad_mode="constant")
    with pytest.raises(AssertionError):  # the HTK/unnormalised choice matters: the test can fail
        np.testing.assert_allclose(ours, slaney, rtol=1e-2)


def test_delta_modulation_rule():
    # one channel rising by 0.6 per frame: events every other frame; falling by 2.5 at once
    x = torch.tensor([0.0, 0.6, 1.2, 1.8, 2.4, -0.1])[None, :, None]
    out = delta_modulate(x, 1.0)[0, :, 0].tolist()
    assert out == [0.0, 1.0, 0.0, 1.0, -1.0]  # ref 0 -> 1 (at 1.2) -> 2 (at 2.4) -> 1 (at -0.1)
    spikes = delta_spikes(np.stack([_clip(48_000)] * 2), sample_rate=48_000)
    assert spikes.shape == (2, 200, 20) and set(spikes.unique().tolist()) <= {-1.0, 0.0, 1.0}
    assert 0 < spikes.abs().mean() < 0.5


def test_resample_to_8k():
    y = _clip(16_000)
    assert resample(y, 16_000, 8000).shape == (8000,)


def _framework_dense(model: torch.nn.Module, x: torch.Tensor) -> float:
    metrics = build_metrics(["synaptic_operations"], None, ("eval", "metrics"))
    post = [lambda o: (o.sum(1) if o.dim() == 3 else o).argmax(-1)]
    result = Benchmark(model, [(x, torch.zeros(len(x), dtype=torch.long))], [], post, metrics,
                       quiet=True).run()
    return result.scores["synaptic_operations"].value["Dense"]


def test_gsc_dense_counts_equal_published_hand_counts():
    # NeuroBench GSC: M5 on 8-kHz waveform 1.880e6 (1,269,760 + 374,784 + 172,032 + 61,440 +
    # 2,240), SNN 20-256-256-256-35 over 200 steps 2.903e7 (200 x 145,152)
    torch.manual_seed(0)
    assert _framework_dense(gsc_m5(), torch.randn(2, 1, 8000)) == 1_880_256
    assert _framework_dense(gsc_snn(), torch.randint(-1, 2, (2, 200, 20)).float()) == 200 * 145_152
    assert dense_per_sample(gsc_m5(), torch.zeros(1, 1, 8000)) == 1_880_256
    # the MSWC backbone (M5 on MFCC (20, 201), 256 channels): NeuroBench's 2.59e7
    mswc = M5(20, 200, stride=2, n_channel=256, input_kernel=4, pool_kernel=2)
    assert dense_per_sample(mswc, torch.zeros(1, 20, 201)) == 25_919_488
