"""The spoken-digit corpus as the small integer inputs neuromorphic chips take.

The corpus is the registry's data set :data:`CORPUS` (``spoken_digits``: the shipped,
checksummed espeak-ng corpus, 700 cochlea channels, SHD layout), looked up by name: each
split it returns is a spike file (its ``path``), read whole. Each utterance becomes spike
counts ``(T, G)``: ``T = t_max_us / dt_us`` time bins and ``G`` groups of neighbouring
channels (channel ``u`` joins group ``u * G // 700``, so groups differ by at most one
channel), clipped at ``clip`` spikes (the largest count the chip's input takes). Spikes after
``t_max_us`` are dropped (the corpus ends at 0.834 s; the default window is 0.85 s).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neuromark.data.hdf5_spikes import SHD_CHANNELS, SpikeSamples, read_shd_file
from neuromark.errors import ConfigError
from neuromark.processors.cochlea.model import SHD_SAMPLE_RATE, Cochlea
from neuromark.processors.cochlea.params import BasilarMembraneParams, CochleaParams
from neuromark.processors.encoder_cost import chain, cochlea_cost, spike_count_frames_cost
from neuromark.registry import datasets

#: The registry's data set the chips are trained and tested on: a spike-file data set in the
#: SHD layout, called with ``split=`` ("train", "test"), its split's file at ``.path``.
CORPUS = "spoken_digits"


@dataclass(frozen=True)
class CountSplit:
    """One split as counts: ``x`` (N, T, G) int16 spike counts, ``y`` (N,) int64 labels;
    ``spikes``: (N,) cochlea spikes per utterance before binning (None: not known)."""

    x: np.ndarray
    y: np.ndarray
    spikes: np.ndarray | None = None

    @property
    def spikes_per_sample(self) -> float | None:
        """The mean of ``spikes`` (None when unknown or empty)."""
        return None if self.spikes is None or not len(self.spikes) else float(np.mean(self.spikes))


def spike_counts(samples: SpikeSamples, *, dt_us: int, t_max_us: int, groups: int,
                 clip: int) -> np.ndarray:
    """(N, T, groups) int16 counts of ``samples`` (see the module)."""
    if dt_us < 1 or t_max_us < dt_us:
        raise ConfigError(f"need 1 <= dt_us <= t_max_us, got dt_us={dt_us}, t_max_us={t_max_us}")
    if not 1 <= groups <= samples.channels:
        raise ConfigError(f"groups must lie in 1..{samples.channels}, got {groups}")
    steps = t_max_us // dt_us
    n = len(samples)
    t_us = np.floor(samples.times * 1e6).astype(np.int64)
    keep = t_us < steps * dt_us
    sample = np.repeat(np.arange(n), samples.counts())[keep]
    step = t_us[keep] // dt_us
    group = samples.units[keep].astype(np.int64) * groups // samples.channels
    flat = (sample * steps + step) * groups + group
    counts = np.bincount(flat, minlength=n * steps * groups).reshape(n, steps, groups)
    return np.minimum(counts, clip).astype(np.int16)


def spoken_digit_counts(*, dt_us: int, t_max_us: int, groups: int, clip: int,
                        train_samples: int | None = None, test_samples: int | None = None
                        ) -> tuple[CountSplit, CountSplit, list[str]]:
    """(train, test, class names) of the shipped spoken-digit corpus (:data:`CORPUS`) as
    counts; ``*_samples`` keep the first samples of a split (None: all)."""
    corpus = datasets.get(CORPUS)
    out = []
    keys: list[str] = []
    for split, limit in (("train", train_samples), ("test", test_samples)):
        samples = read_shd_file(corpus(split=split).path, channels=SHD_CHANNELS)
        if limit is not None and limit < len(samples):
            samples = samples.subset(np.arange(limit))
        keys = keys or list(samples.keys)
        out.append(CountSplit(spike_counts(samples, dt_us=dt_us, t_max_us=t_max_us, groups=groups,
                                           clip=clip), samples.labels.astype(np.int64),
                              np.asarray(samples.counts(), dtype=np.int64)))
    return out[0], out[1], keys


def chip_front_end(test: CountSplit, *, dt_us: int, t_max_us: int, groups: int, clip: int) -> dict:
    """The encoders before the chip (issue 47.4): the cochlea that made the corpus (48 kHz,
    700 channels, a clip of ``t_max_us``), then the spike counts, as one block of
    :mod:`neuromark.processors.encoder_cost`."""
    cochlea = Cochlea(CochleaParams(basilar_membrane=BasilarMembraneParams(channels=SHD_CHANNELS)))
    parts = [cochlea_cost(cochlea, int(round(t_max_us * 1e-6 * SHD_SAMPLE_RATE)), SHD_SAMPLE_RATE),
             spike_count_frames_cost(SHD_CHANNELS, dt_us, t_max_us, groups, clip, test.spikes_per_sample)]
    return chain(" + ".join(p.encoder for p in parts), parts)
