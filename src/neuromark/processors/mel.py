"""Mel-filterbank energies (MFE) with ``torch.stft``, as in the NeuroBench ASC CPU baseline.

The filterbank follows Slaney's Auditory Toolbox (the mel scale linear below 1 kHz and
logarithmic above, each triangle area-normalised), which is librosa's default
(``librosa.filters.mel(htk=False, norm="slaney")``); the power spectrogram uses a periodic
Hann window and centred frames padded with zeros, as ``librosa.feature.melspectrogram``
does. ``tests/test_system_asc.py`` checks the result against librosa.

Reference: M. Slaney, "Auditory Toolbox", Interval Research Technical Report 1998-010.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

_F_SP = 200.0 / 3  # Hz per mel below 1 kHz
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOG_STEP = math.log(6.4) / 27.0


def hz_to_mel(hz: np.ndarray) -> np.ndarray:
    """Slaney mel scale: linear below 1 kHz, logarithmic above."""
    hz = np.asarray(hz, dtype=np.float64)
    lin = hz / _F_SP
    log = _MIN_LOG_MEL + np.log(np.maximum(hz, 1e-12) / _MIN_LOG_HZ) / _LOG_STEP
    return np.where(hz >= _MIN_LOG_HZ, log, lin)


def mel_to_hz(mel: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hz_to_mel`."""
    mel = np.asarray(mel, dtype=np.float64)
    return np.where(mel >= _MIN_LOG_MEL, _MIN_LOG_HZ * np.exp(_LOG_STEP * (mel - _MIN_LOG_MEL)),
                    _F_SP * mel)


def hz_to_mel_htk(hz: np.ndarray) -> np.ndarray:
    """HTK mel scale: ``2595 log10(1 + f / 700)``."""
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def mel_to_hz_htk(mel: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hz_to_mel_htk`."""
    return 700.0 * (10.0 ** (np.asarray(mel, dtype=np.float64) / 2595.0) - 1.0)


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int, fmin: float = 0.0,
                   fmax: float | None = None, *, htk: bool = False, norm: str | None = "slaney"
                   ) -> np.ndarray:
    """Triangular mel filters, shape ``(n_mels, n_fft // 2 + 1)``: Slaney's mel scale, or
    HTK's with ``htk=True``; each triangle area-normalised (``norm="slaney"``) or peaking
    at 1 (``norm=None``, torchaudio's default)."""
    fmax = sample_rate / 2 if fmax is None else fmax
    if not 0 <= fmin < fmax <= sample_rate / 2:
        raise ValueError(f"mel filterbank: need 0 <= fmin < fmax <= {sample_rate / 2} Hz, "
                         f"got fmin={fmin}, fmax={fmax}")
    if norm not in ("slaney", None):
        raise ValueError(f"mel filterbank: norm must be 'slaney' or None, got {norm!r}")
    to_mel, to_hz = (hz_to_mel_htk, mel_to_hz_htk) if htk else (hz_to_mel, mel_to_hz)
    fft_hz = np.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    edges = to_hz(np.linspace(to_mel(fmin), to_mel(fmax), n_mels + 2))
    widths = np.diff(edges)
    ramps = edges[:, None] - fft_hz[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    if norm == "slaney":
        weights *= (2.0 / (edges[2:] - edges[:-2]))[:, None]
    return weights


def mel_filterbank_energies(audio: Any, *, sample_rate: int = 8000, n_fft: int = 256,
                            hop_length: int = 128, n_mels: int = 40, fmin: float = 0.0,
                            fmax: float | None = None, log: bool = True, eps: float = 1e-6) -> Any:
    """Mel energies of ``audio`` (..., samples) -> (..., n_mels, frames), a float32 tensor.

    ``frames = 1 + samples // hop_length`` (centred frames). With ``log`` the result is
    ``ln(energy + eps)``.
    """
    import torch

    x = torch.as_tensor(audio, dtype=torch.float32)
    shape = x.shape
    window = torch.hann_window(n_fft, periodic=True, dtype=torch.float32)
    spec = torch.stft(x.reshape(-1, shape[-1]), n_fft=n_fft, hop_length=hop_length, window=window,
                      center=True, pad_mode="constant", return_complex=True)
    power = spec.real.square() + spec.imag.square()
    fb = torch.from_numpy(mel_filterbank(sample_rate, n_fft, n_mels, fmin, fmax).astype(np.float32))
    mel = torch.matmul(fb, power)
    if log:
        mel = torch.log(mel + eps)
    return mel.reshape(*shape[:-1], n_mels, mel.shape[-1])


@dataclass(frozen=True)
class MelFilterbankEnergies:
    """Preprocessor ``(audio, targets) -> (mfe, targets)`` over :func:`mel_filterbank_energies`."""

    sample_rate: int = 8000
    n_fft: int = 256
    hop_length: int = 128
    n_mels: int = 40
    fmin: float = 0.0
    fmax: float | None = None
    log: bool = True

    def __call__(self, data: Any, targets: Any = None) -> tuple[Any, Any]:
        return self.features(data), targets

    def features(self, audio: Any) -> Any:
        return mel_filterbank_energies(audio, sample_rate=self.sample_rate, n_fft=self.n_fft,
                                       hop_length=self.hop_length, n_mels=self.n_mels,
                                       fmin=self.fmin, fmax=self.fmax, log=self.log)

    def frames(self, samples: int) -> int:
        return 1 + samples // self.hop_length
