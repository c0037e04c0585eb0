"""Keyword-spotting features with ``torch.stft``: MFCC, the log-mel spectrogram and our
delta-modulation spike encoder, plus polyphase resampling.

- :func:`mel_power`: power spectrogram (periodic Hann window, centred frames padded with
  zeros) through a mel filterbank (HTK mel scale, unnormalised triangles by default, as
  torchaudio's ``MelSpectrogram`` that the NeuroBench baselines use).
- :func:`mfcc`: ``10 log10(max(mel, 1e-10))``, floored at ``max - top_db`` per clip,
  then the orthonormal DCT-II (librosa's ``feature.mfcc`` with ``htk=True, norm=None``;
  checked against librosa in ``tests/test_keywords_features.py``).
- :func:`delta_spikes`: ``ln(mel + 1e-6)`` and a delta modulator per mel channel: the
  reference starts at the first frame; at each later frame the channel emits +1 when the
  log energy has risen by at least ``threshold`` above the reference, -1 when it has
  fallen by at least ``threshold``, and the reference moves by ``threshold`` in that
  direction (at most one event per step, the rest carried over). The first frame only sets
  the reference, so ``T = frames - 1`` (200 steps for 1 s at 5 ms). Written from the
  description of Speech2Spikes (Stewart et al., NICE 2023: log-mel, then delta
  modulation), not from its code.
  With ``rule="speech2spikes"`` the encoder follows NeuroBench 2.3.0's ``S2SPreProcessor``
  as its documentation and the Speech2Spikes paper describe it: frames padded by
  reflection (torchaudio's ``MelSpectrogram`` default), the reference starting at the first
  frame's log energy ROUNDED to an integer, an event only when the change EXCEEDS the
  threshold (strictly), and the first frame's step dropped (T = frames - 1 again).

Shapes: audio (..., samples) -> features (..., channels, frames) for the spectral
functions; :func:`delta_spikes` returns (..., T, n_mels), time first, for step-wise SNNs.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from neuromark.processors.mel import mel_filterbank


def mel_power(audio: Any, *, sample_rate: int, n_fft: int = 512, hop_length: int = 240,
              n_mels: int = 20, fmin: float = 20.0, fmax: float | None = 4000.0, htk: bool = True,
              norm: str | None = None, pad_mode: str = "constant") -> Any:
    """Mel power spectrogram, (..., samples) -> (..., n_mels, 1 + samples // hop_length);
    ``pad_mode``: how centred frames are padded (``constant``: zeros; ``reflect``)."""
    import torch

    if isinstance(audio, torch.Tensor):
        x = audio.float()
    else:  # a copy: the decoded arrays are read-only memory maps
        x = torch.tensor(np.asarray(audio), dtype=torch.float32)
    shape = x.shape
    window = torch.hann_window(n_fft, periodic=True, dtype=torch.float32)
    spec = torch.stft(x.reshape(-1, shape[-1]), n_fft=n_fft, hop_length=hop_length, window=window,
                      center=True, pad_mode=pad_mode, return_complex=True)
    power = spec.real.square() + spec.imag.square()
    fb = mel_filterbank(sample_rate, n_fft, n_mels, fmin, fmax, htk=htk, norm=norm)
    mel = torch.matmul(torch.from_numpy(fb.astype(np.float32)), power)
    return mel.reshape(*shape[:-1], n_mels, mel.shape[-1])


def dct_matrix(n_mfcc: int, n_mels: int) -> np.ndarray:
    """Orthonormal DCT-II rows, (n_mfcc, n_mels)."""
    k = np.arange(n_mfcc)[:, None]
    n = np.arange(n_mels)[None, :]
    basis = np.cos(np.pi / n_mels * (n + 0.5) * k) * np.sqrt(2.0 / n_mels)
    basis[0] /= np.sqrt(2.0)
    return basis


def mfcc(audio: Any, *, sample_rate: int, n_mfcc: int = 20, n_fft: int = 512, hop_length: int = 240,
         n_mels: int = 20, fmin: float = 20.0, fmax: float | None = 4000.0, htk: bool = True,
         top_db: float | None = 80.0) -> Any:
    """MFCC, (..., samples) -> (..., n_mfcc, frames), float32 (defaults: NeuroBench's MSWC
    settings at 48 kHz: 20 coefficients, 5-ms hop, 20 HTK mels over 20-4000 Hz)."""
    import torch

    mel = mel_power(audio, sample_rate=sample_rate, n_fft=n_fft, hop_length=hop_length, n_mels=n_mels,
                    fmin=fmin, fmax=fmax, htk=htk)
    db = 10.0 * torch.log10(torch.clamp(mel, min=1e-10))
    if top_db is not None:
        peak = db.amax(dim=(-2, -1), keepdim=True)
        db = torch.maximum(db, peak - top_db)
    return torch.matmul(torch.from_numpy(dct_matrix(n_mfcc, n_mels).astype(np.float32)), db)


#: Delta-modulation rules: ours, and NeuroBench's Speech2Spikes (see the module notes).
DELTA_RULES = ("neuromark", "speech2spikes")


def delta_modulate(signal: Any, threshold: float = 1.0, rule: str = "neuromark") -> Any:
    """Delta modulation over the last-but-one axis: (..., frames, C) -> (..., frames - 1, C)
    in {-1, 0, 1} (see the module notes for the two ``rule`` s)."""
    import torch

    x = torch.as_tensor(signal, dtype=torch.float32)
    if threshold <= 0:
        raise ValueError(f"delta modulation: threshold must be positive, got {threshold}")
    if rule not in DELTA_RULES:
        raise ValueError(f"delta modulation: rule must be one of {', '.join(DELTA_RULES)}, got {rule!r}")
    s2s = rule == "speech2spikes"
    reference = torch.round(x[..., 0, :]) if s2s else x[..., 0, :].clone()
    out = torch.zeros_like(x[..., 1:, :])
    for t in range(0 if s2s else 1, x.shape[-2]):
        diff = x[..., t, :] - reference
        if s2s:
            event = (diff > threshold).float() - (diff < -threshold).float()
        else:
            event = (diff >= threshold).float() - (diff <= -threshold).float()
        reference = reference + threshold * event
        if t >= 1:
            out[..., t - 1, :] = event
    return out


def delta_spikes(audio: Any, *, sample_rate: int, n_fft: int = 512, hop_length: int = 240,
                 n_mels: int = 20, fmin: float = 20.0, fmax: float | None = 4000.0,
                 threshold: float = 1.0, eps: float = 1e-6, rule: str = "neuromark") -> Any:
    """Delta-modulated log-mel spikes, (..., samples) -> (..., T, n_mels) in {-1, 0, 1};
    ``rule="speech2spikes"``: NeuroBench's Speech2Spikes (reflect padding, see the module)."""
    mel = mel_power(audio, sample_rate=sample_rate, n_fft=n_fft, hop_length=hop_length, n_mels=n_mels,
                    fmin=fmin, fmax=fmax, pad_mode="reflect" if rule == "speech2spikes" else "constant")
    import torch

    return delta_modulate(torch.log(mel + eps).transpose(-1, -2), threshold, rule)


def resample(audio: np.ndarray, rate: int, new_rate: int) -> np.ndarray:
    """Polyphase resampling along the last axis (``scipy.signal.resample_poly``), float32."""
    if rate == new_rate:
        return np.asarray(audio, dtype=np.float32)
    from scipy.signal import resample_poly

    ratio = Fraction(new_rate, rate)
    return resample_poly(audio, ratio.numerator, ratio.denominator, axis=-1).astype(np.float32)


@dataclass(frozen=True)
class KeywordFeatures:
    """A named feature recipe applied to clips ``(B, samples)`` at ``sample_rate``.

    kind: ``waveform`` ((B, 1, samples) after resampling to ``target_rate``), ``mfcc``
    ((B, n_mfcc, frames)) or ``delta_mel`` ((B, T, n_mels) spikes; ``delta_rule``: ours or
    NeuroBench's ``speech2spikes``).
    """

    kind: str
    sample_rate: int
    target_rate: int | None = None
    n_fft: int = 512
    hop_length: int = 240
    n_mels: int = 20
    n_mfcc: int = 20
    fmin: float = 20.0
    fmax: float = 4000.0
    threshold: float = 1.0
    delta_rule: str = "neuromark"

    def time_step_s(self) -> tuple[float, str] | None:
        """One feature frame per hop for frame features (``delta_mel``, ``mfcc``); None for
        ``waveform`` (:mod:`neuromark.metrics.execution_rate`)."""
        if self.kind == "waveform":
            return None
        return (self.hop_length / self.sample_rate,
                f"{self.kind} frames: hop {self.hop_length} samples at {self.sample_rate} Hz")

    def __call__(self, clips: Any) -> Any:
        import torch

        if self.kind == "waveform":
            audio = np.asarray(clips, dtype=np.float32)
            if self.target_rate:
                audio = resample(audio, self.sample_rate, self.target_rate)
            return torch.from_numpy(np.ascontiguousarray(audio))[..., None, :]
        if self.kind == "mfcc":
            return mfcc(clips, sample_rate=self.sample_rate, n_mfcc=self.n_mfcc, n_fft=self.n_fft,
                        hop_length=self.hop_length, n_mels=self.n_mels, fmin=self.fmin, fmax=self.fmax)
        if self.kind == "delta_mel":
            return delta_spikes(clips, sample_rate=self.sample_rate, n_fft=self.n_fft,
                                hop_length=self.hop_length, n_mels=self.n_mels, fmin=self.fmin,
                                fmax=self.fmax, threshold=self.threshold, rule=self.delta_rule)
        raise ValueError(f"unknown keyword feature kind {self.kind!r} (waveform, mfcc, delta_mel)")
