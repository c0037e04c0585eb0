"""Spike-event processors: dense binning, channel pooling, channel jitter.

Frozen dataclasses, as tonic's transforms are, over the pure kernels of
:mod:`neuromark.data.binning` (re-exported here).

The binning convention (no spike dropped; a spike at exactly ``t_max_us`` in the last bin)
and the references for pooling and jitter are in :mod:`neuromark.data.binning`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from neuromark.data.binning import (
    bin_flat,
    bin_samples,
    jitter_samples,
    jitter_units,
    n_bins,
    pool_dense,
    pool_samples,
    pool_units,
)
from neuromark.data.hdf5_spikes import SpikeSamples

__all__ = ["BinSpikes", "ChannelJitter", "PoolChannels", "bin_flat", "jitter_units", "n_bins",
           "pool_dense", "pool_units"]


@dataclass(frozen=True)
class BinSpikes:
    """Dense binning to (T, channels) counts; see the module docstring for the convention.

    Example:
        >>> import numpy as np
        >>> from neuromark.data.event_dtypes import make_spike_events
        >>> BinSpikes(dt_us=1000, t_max_us=3000, channels=4)(make_spike_events([0.0, 0.003], [1, 2]))
        array([[0., 1., 0., 0.],
               [0., 0., 0., 0.],
               [0., 0., 1., 0.]], dtype=float32)
    """

    dt_us: int
    t_max_us: int
    channels: int = 700
    dtype: Any = np.float32

    @property
    def steps(self) -> int:
        return n_bins(self.dt_us, self.t_max_us)

    def __call__(self, events: np.ndarray) -> np.ndarray:
        """One sample's events (SPIKE_EVENT_DTYPE) -> (T, channels)."""
        offsets = np.array([0, events.shape[0]], dtype=np.int64)
        return bin_flat(events["t"], events["unit"], offsets, dt_us=self.dt_us, t_max_us=self.t_max_us,
                        channels=self.channels, dtype=self.dtype)[0]

    def bin_samples(self, samples: SpikeSamples) -> np.ndarray:
        """All samples of a file -> (N, T, channels), in one vectorised pass."""
        return bin_samples(replace(samples, channels=self.channels), self.dt_us, self.t_max_us,
                           self.dtype)


@dataclass(frozen=True)
class PoolChannels:
    """Sum ``factor`` neighbouring channels (700 -> 70 with factor 10).

    Called on events (SPIKE_EVENT_DTYPE), it maps ``unit -> unit // factor``; called on dense
    (..., C) frames, it sums channel groups; as a preprocessor ``(data, targets)`` it pools
    ``data`` and passes ``targets`` through.
    """

    factor: int = 10

    def __call__(self, data: Any, targets: Any = None) -> Any:
        if isinstance(data, np.ndarray) and data.dtype.names is not None:
            out = data.copy()
            out["unit"] = pool_units(data["unit"], self.factor)
            pooled: Any = out
        else:
            pooled = pool_dense(data, self.factor)
        return pooled if targets is None else (pooled, targets)

    def pool_samples(self, samples: SpikeSamples) -> SpikeSamples:
        """Pooled copy of a whole file's samples (channels divided by ``factor``)."""
        return pool_samples(samples, self.factor)


@dataclass(frozen=True)
class ChannelJitter:
    """Seeded channel jitter (augmentation): shift units by N(0, sigma^2) channels, rounded.

    Randomness comes only from ``rng`` (an explicit ``np.random.Generator``).
    ``per="sample"`` shifts all spikes of a sample together; ``per="spike"`` independently.
    Spikes shifted outside the channel range are removed.
    """

    rng: np.random.Generator
    sigma: float = 20.0
    channels: int = 700
    per: Literal["sample", "spike"] = "sample"

    def __call__(self, events: np.ndarray) -> np.ndarray:
        offsets = np.array([0, events.shape[0]], dtype=np.int64)
        moved, keep = jitter_units(events["unit"], offsets, sigma=self.sigma, channels=self.channels,
                                   rng=self.rng, per=self.per)
        out = events[keep].copy()
        out["unit"] = moved[keep]
        return out

    def jitter_samples(self, samples: SpikeSamples) -> SpikeSamples:
        """Jittered copy of a whole file's samples."""
        return jitter_samples(samples, self.rng, self.sigma, self.per)
