"""Binning kernels for spike files: dense binning, channel pooling, channel jitter.

Pure functions on flat arrays (all samples at once, vectorised with ``np.bincount``) and on
:class:`~neuromark.data.hdf5_spikes.SpikeSamples`. They live in ``data`` because readers
need them; :mod:`neuromark.processors.spike_transforms` wraps them in frozen dataclasses, as tonic's
transforms do.

Binning convention (explicit, no spike dropped): with window ``dt_us`` and maximum time
``t_max_us`` (both integer microseconds) there are ``T = ceil(t_max_us / dt_us)`` bins;
bin ``k`` holds ``k * dt_us <= t < (k + 1) * dt_us``. A spike at exactly ``t_max_us`` goes
in the last bin (tonic's ``ToFrame`` drops it). A spike after ``t_max_us``, a negative time
or a unit >= channels raises :class:`~neuromark.errors.DataError` naming the file and the
sample. Times are the event dtype's int64 microseconds (floor of seconds * 1e6).

Pooling 700 -> 70 channels (sum over 10 neighbouring channels) and channel jitter
(sigma_u = 20 channels) follow Cramer et al. (2020), IEEE TNNLS,
https://doi.org/10.1109/TNNLS.2020.3044364 (Secs. IV-V).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from neuromark.data.event_dtypes import seconds_to_us
from neuromark.data.hdf5_spikes import SpikeSamples, sample_index
from neuromark.errors import ConfigError, DataError

#: Largest dense block (elements) counted by one ``np.bincount`` call.
_CHUNK_ELEMENTS = 1 << 17


def n_bins(dt_us: int, t_max_us: int) -> int:
    """Number of time bins ``ceil(t_max_us / dt_us)`` (at least 1)."""
    if dt_us <= 0 or t_max_us <= 0:
        raise ValueError(f"dt_us and t_max_us must be positive, got {dt_us} and {t_max_us}")
    return max(1, math.ceil(t_max_us / dt_us))


def check_binning(batch_size: int, dt_us: int, t_max_us: int, pool: int, channels: int) -> None:
    """ConfigError naming the argument: batch_size, dt_us >= 1, t_max_us >= dt_us, pool
    dividing channels."""
    for arg, value in (("batch_size", batch_size), ("dt_us", dt_us), ("t_max_us", t_max_us),
                       ("pool", pool)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ConfigError(f"{arg} must be an integer, got {value!r}")
    if batch_size <= 0:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if dt_us <= 0:
        raise ConfigError(f"dt_us must be > 0 (bin width in microseconds), got {dt_us}")
    if t_max_us < dt_us:
        raise ConfigError(f"t_max_us must be >= dt_us={dt_us} (at least one bin), got {t_max_us}")
    if pool < 1 or channels % pool:
        raise ConfigError(f"pool={pool} must be >= 1 and divide channels={channels}")


def bin_flat(t_us: np.ndarray, units: np.ndarray, offsets: np.ndarray, *, dt_us: int, t_max_us: int,
             channels: int, dtype: Any = np.float32, name: str = "<memory>", seconds: bool = False
             ) -> np.ndarray:
    """Bin flat spike arrays of N samples into dense counts of shape (N, T, channels).

    Args:
        t_us: (S,) int64 spike times in microseconds, all samples concatenated (or float
            seconds when ``seconds`` is True; converted chunk by chunk with
            :func:`~neuromark.data.event_dtypes.seconds_to_us`, which saves memory).
        units: (S,) channel indices.
        offsets: (N+1,) sample boundaries into ``t_us``/``units``.
        dt_us, t_max_us: bin width and maximum time in microseconds (see module docstring).
        channels: number of channels (units must be below it).
        dtype: output dtype; integer dtypes are checked for overflow.
        name: file name used in error messages.

    Raises:
        DataError: a time < 0 or > t_max_us, a unit outside 0..channels-1, or a count that
            does not fit ``dtype``, naming the file and the sample.
    """
    n = offsets.shape[0] - 1
    steps = n_bins(dt_us, t_max_us)
    times = np.asarray(t_us)
    units = np.asarray(units)
    out = np.empty((n, steps, channels), dtype=dtype)
    per_sample = steps * channels
    chunk = max(1, _CHUNK_ELEMENTS // per_sample)
    info = np.iinfo(dtype) if np.issubdtype(np.dtype(dtype), np.integer) else None
    for start in range(0, n, chunk):
        # Small chunks keep the int64 counts of np.bincount in cache; one pass per chunk.
        stop = min(n, start + chunk)
        lo, hi = offsets[start], offsets[stop]
        index = seconds_to_us(times[lo:hi]) if seconds else times[lo:hi].astype(np.int64)
        unit = units[lo:hi]
        bad = (index < 0) | (index > t_max_us)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            sample = int(sample_index(offsets, lo + pos))
            if index[pos] < 0:
                raise DataError(f"{name}: sample {sample}: spike time {index[pos]} us is negative")
            raise DataError(f"{name}: sample {sample}: spike at {index[pos]} us is after t_max_us="
                            f"{t_max_us} ({int(np.count_nonzero(bad))} such spike(s) in samples "
                            f"{start}..{stop - 1}); raise t_max_us, or drop and count them with "
                            "late='drop' (data set option)")
        bad = (unit >= channels) | (unit < 0) if unit.dtype.kind == "i" else unit >= channels
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            sample = int(sample_index(offsets, lo + pos))
            raise DataError(f"{name}: sample {sample}: unit {int(unit[pos])} is not "
                            f"below channels={channels}")
        index //= dt_us
        np.minimum(index, steps - 1, out=index)
        index *= channels
        index += unit
        if stop - start > 1:
            index += np.repeat(np.arange(0, (stop - start) * per_sample, per_sample, dtype=np.int64),
                               np.diff(offsets[start:stop + 1]))
        counts = np.bincount(index, minlength=(stop - start) * per_sample)
        if info is not None and counts.size and counts.max() > info.max:
            worst = start + int(np.argmax(counts) // per_sample)
            raise DataError(f"{name}: sample {worst}: {int(counts.max())} spikes in one bin do not fit "
                            f"{np.dtype(dtype).name}; use a wider dtype")
        out[start:stop] = counts.reshape(stop - start, steps, channels)
    return out


def pool_units(units: np.ndarray, factor: int) -> np.ndarray:
    """Channel index after summing ``factor`` neighbouring channels: ``unit // factor``."""
    return (np.asarray(units) // factor).astype(np.asarray(units).dtype)


def pool_dense(frames: Any, factor: int) -> Any:
    """Sum groups of ``factor`` neighbouring channels of (..., C) numpy or torch frames."""
    channels = frames.shape[-1]
    if channels % factor:
        raise ValueError(f"{channels} channels are not divisible by the pooling factor {factor}")
    return frames.reshape(*frames.shape[:-1], channels // factor, factor).sum(-1)


def jitter_units(units: np.ndarray, offsets: np.ndarray, *, sigma: float, channels: int,
                 rng: np.random.Generator, per: Literal["sample", "spike"] = "sample"
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Shift channel indices by rounded Gaussian offsets (std ``sigma`` channels).

    ``per="sample"`` draws one shift per sample (all its spikes move together, the channel
    augmentation of Cramer et al. 2020); ``per="spike"`` draws one per spike.
    Returns ``(new_units, keep)``: spikes shifted outside 0..channels-1 are removed
    (``keep`` is False for them), since no such channel exists.
    """
    n = offsets.shape[0] - 1
    counts = np.diff(offsets)
    if per == "sample":
        shift = np.repeat(np.rint(rng.normal(0.0, sigma, n)).astype(np.int64), counts)
    elif per == "spike":
        shift = np.rint(rng.normal(0.0, sigma, int(offsets[-1]))).astype(np.int64)
    else:
        raise ValueError(f"per must be 'sample' or 'spike', got {per!r}")
    moved = np.asarray(units, dtype=np.int64) + shift
    keep = (moved >= 0) & (moved < channels)
    return moved, keep


def bin_samples(samples: SpikeSamples, dt_us: int, t_max_us: int, dtype: Any = np.float32
                ) -> np.ndarray:
    """All samples of a file -> (N, T, samples.channels) counts, in one vectorised pass."""
    return bin_flat(samples.times, samples.units, samples.offsets, dt_us=dt_us, t_max_us=t_max_us,
                    channels=samples.channels, dtype=dtype, name=samples.name, seconds=True)


def pool_samples(samples: SpikeSamples, factor: int) -> SpikeSamples:
    """Pooled copy of a whole file's samples (channels divided by ``factor``)."""
    if samples.channels % factor:
        raise ValueError(f"{samples.channels} channels are not divisible by {factor}")
    return replace(samples, units=pool_units(samples.units, factor), channels=samples.channels // factor)


def drop_late(samples: SpikeSamples, t_max_us: int) -> tuple[SpikeSamples, int]:
    """``samples`` without the spikes after ``t_max_us`` (times floored to µs as binned),
    and how many were dropped (the ``late="drop"`` rule of the streaming loader)."""
    keep = seconds_to_us(samples.times) <= t_max_us
    dropped = int(keep.size - np.count_nonzero(keep))
    if not dropped:
        return samples, 0
    sample = np.repeat(np.arange(len(samples)), samples.counts())
    offsets = np.zeros(len(samples) + 1, dtype=np.int64)
    np.cumsum(np.bincount(sample[keep], minlength=len(samples)), out=offsets[1:])
    return replace(samples, times=samples.times[keep], units=samples.units[keep], offsets=offsets), dropped


def jitter_samples(samples: SpikeSamples, rng: np.random.Generator, sigma: float,
                   per: Literal["sample", "spike"] = "sample") -> SpikeSamples:
    """Jittered copy of a whole file's samples (see :func:`jitter_units`)."""
    moved, keep = jitter_units(samples.units, samples.offsets, sigma=sigma,
                               channels=samples.channels, rng=rng, per=per)
    sample = np.repeat(np.arange(len(samples)), samples.counts())
    kept_counts = np.bincount(sample[keep], minlength=len(samples))
    offsets = np.zeros(len(samples) + 1, dtype=np.int64)
    np.cumsum(kept_counts, out=offsets[1:])
    return replace(samples, times=samples.times[keep], units=moved[keep].astype(np.uint16),
                   offsets=offsets)
