"""The full cochlea: audio -> RMS normalisation -> Hann window -> basilar membrane ->
Meddis hair cell -> bushy cells -> spikes on 700 channels (Cramer et al. 2020, Sec. III-A).

Example:
    >>> cochlea = Cochlea()
    >>> audio, rate = read_audio("digit.flac")          # doctest: +SKIP
    >>> spikes = cochlea(audio, rate, seed=0)           # doctest: +SKIP
    >>> spikes.times[:3], spikes.units[:3]              # doctest: +SKIP

Output spike times are in seconds on the model's grid (half the audio rate, as in
lauscher), sorted by (time, channel).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from math import gcd
from pathlib import Path

import numpy as np

from neuromark.errors import DataError, require
from neuromark.processors.cochlea.params import BasilarMembraneParams, CochleaParams

#: Audio rate of the recordings behind SHD; the basilar membrane's channels reach 22.5 kHz.
SHD_SAMPLE_RATE = 48_000


@dataclass(frozen=True)
class CochleaSpikes:
    """Spikes of one clip: ``times`` (S,) float64 seconds, ``units`` (S,) uint16 channels."""

    times: np.ndarray
    units: np.ndarray
    channels: int
    duration: float  # seconds of audio converted

    def counts(self) -> np.ndarray:
        """Spikes per channel, shape (channels,)."""
        return np.bincount(self.units, minlength=self.channels)


def read_audio(path: str | os.PathLike[str]) -> tuple[np.ndarray, int]:
    """Read a WAV/FLAC/OGG file with soundfile: (float64 mono samples in [-1, 1], rate in Hz).

    Multi-channel files are mixed down to mono by averaging the channels.
    """
    soundfile = require("soundfile", "audio")
    file = Path(path)
    try:
        data, rate = soundfile.read(str(file), dtype="float64", always_2d=True)
    except (RuntimeError, soundfile.LibsndfileError) as exc:
        raise DataError(f"{file}: cannot read audio (expected WAV, FLAC or OGG): {exc}") from exc
    if data.shape[0] == 0:
        raise DataError(f"{file}: the audio file holds no samples")
    return data.mean(axis=1), int(rate)


def resample(audio: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Polyphase resampling (scipy.signal.resample_poly) from ``rate`` to ``target`` Hz."""
    if rate == target:
        return audio
    from scipy.signal import resample_poly

    g = gcd(int(rate), int(target))
    return resample_poly(audio, target // g, rate // g)


def hann_ramps(audio: np.ndarray, ramp_samples: int | None = None) -> np.ndarray:
    """Hann ramp-up over the first half and ramp-down over the last half (lauscher's
    window), or over ``ramp_samples`` at each end (at most half the clip)."""
    n = audio.shape[0]
    half = n // 2 if ramp_samples is None else min(int(ramp_samples), n // 2)
    ramp = np.hanning(2 * half)[:half]
    out = audio.copy()
    out[:half] *= ramp
    if half:
        out[-half:] *= ramp[::-1]
    return out


_TRANSFER_CACHE: dict[tuple[BasilarMembraneParams, int, int], np.ndarray] = {}


def _transfer(p: BasilarMembraneParams, n: int, rate: int, cache: bool) -> np.ndarray:
    from neuromark.processors.cochlea.basilar_membrane import transfer_matrix

    key = (p, n, rate)
    if key in _TRANSFER_CACHE:
        return _TRANSFER_CACHE[key]
    matrix = transfer_matrix(p, n, rate)
    if cache:
        _TRANSFER_CACHE.clear()  # keep one (~200 MB for one second at 48 kHz)
        _TRANSFER_CACHE[key] = matrix
    return matrix


def clear_cache() -> None:
    """Forget the cached basilar-membrane transfer matrix."""
    _TRANSFER_CACHE.clear()


@dataclass(frozen=True)
class Cochlea:
    """Audio-to-spike converter, the model of Cramer et al. (2022), Sec. III-A.

    Args:
        params: model parameters (default: lauscher 1.0.1's constants, 700 channels;
            ``params.constants("paper")`` for Table II's, see :mod:`.params`).
        sample_rate: audio is resampled to this rate first (None: keep the input rate).
        pad_to: zero-pad the windowed clip to this many seconds (None: no padding). Clips of
            one length share one basilar-membrane transfer matrix, which is then cached.
        cache_transfer: keep the last transfer matrix for the next clip of the same length.
    """

    params: CochleaParams = field(default_factory=CochleaParams)
    sample_rate: int | None = None
    pad_to: float | None = None
    cache_transfer: bool = True

    @property
    def channels(self) -> int:
        return self.params.basilar_membrane.channels

    def prepare(self, audio: np.ndarray, sample_rate: int) -> tuple[np.ndarray, int]:
        """Resample, RMS-normalise, window and pad: (conditioned audio, its rate)."""
        audio = np.asarray(audio, dtype=np.float64)
        if audio.ndim != 1 or audio.size < 4:
            raise DataError(f"audio must be a 1-D array of at least 4 samples, got shape {audio.shape}")
        if not np.isfinite(audio).all():
            raise DataError("audio contains NaN or infinite samples")
        rate = int(sample_rate)
        if self.sample_rate is not None:
            audio, rate = resample(audio, rate, self.sample_rate), self.sample_rate
        rms = float(np.sqrt(np.mean(audio**2)))
        if rms == 0.0:
            raise DataError("audio is silent (RMS 0); the RMS normalisation needs a non-zero signal")
        ramp = None if self.params.ramp_s is None else int(round(self.params.ramp_s * rate))
        audio = hann_ramps(audio * (self.params.rms_level / rms), ramp)
        if self.pad_to is not None:
            n = int(round(self.pad_to * rate))
            if audio.size > n:
                raise DataError(f"audio lasts {audio.size / rate:.3f} s, longer than pad_to={self.pad_to} s")
            audio = np.pad(audio, (0, n - audio.size))
        return audio, rate

    def __call__(self, audio: np.ndarray, sample_rate: int, *, seed: int | np.random.Generator = 0
                 ) -> CochleaSpikes:
        """Spikes for one mono clip ``audio`` (n_samples,) at ``sample_rate`` Hz."""
        require("numba", "audio")
        from neuromark.processors.cochlea.basilar_membrane import membrane_velocity
        from neuromark.processors.cochlea.bushy_cell import bushy_spikes
        from neuromark.processors.cochlea.hair_cell import firing_probability

        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        audio, rate = self.prepare(audio, sample_rate)
        p = self.params
        transfer = _transfer(p.basilar_membrane, audio.size, rate, self.cache_transfer)
        velocity, out_rate = membrane_velocity(audio, rate, p.basilar_membrane, transfer)
        prob = firing_probability(velocity, out_rate, p.hair_cell, out=velocity)
        raster = bushy_spikes(prob, out_rate, p.bushy_cell, rng)
        del prob
        sample, unit = np.nonzero(raster.T)  # row-major over (time, channel): sorted by time, then unit
        return CochleaSpikes(sample / float(out_rate), unit.astype(np.uint16), self.channels,
                             audio.size / float(rate))
