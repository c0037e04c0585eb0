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


@dataclass(frozen=True)
class CountTask:
    """A task on the corpus as counts: ``steps = t_max_us // dt_us`` bins of ``dt_us`` µs,
    ``groups`` channel groups, counts clipped at ``clip``, the first ``classes`` classes
    (None: all)."""

    name: str
    dt_us: int
    t_max_us: int
    groups: int
    clip: int
    classes: int | None

    @property
    def steps(self) -> int:
        return self.t_max_us // self.dt_us

    def describe(self) -> dict:
        """The task's features, as the results record them (``details.sut.task``)."""
        return {"name": self.name, "dt_us": self.dt_us, "steps": self.steps,
                "channel_groups": self.groups, "clip": self.clip, "classes": self.classes,
                "inputs": self.steps * self.groups}


#: The one task every shipped system runs (issue 57.2): what the smallest chip, Xylo Audio 2,
#: holds (16 input channels, 8 output neurons): 16 channel groups in 20-ms bins over 0.84 s
#: (42 steps), counts clipped at 15 events, the corpus's first 8 classes (english-zero ...
#: english-seven). Xylo takes the (42, 16) raster step by step; the CPU and Akida MLPs take
#: the same counts flattened (672 inputs).
SPOKEN_DIGITS_8 = CountTask("spoken_digits_8", dt_us=20_000, t_max_us=840_000, groups=16, clip=15,
                            classes=8)


def keep_classes(split: CountSplit, classes: int | None) -> CountSplit:
    """The samples of ``split`` whose class is below ``classes`` (None: all)."""
    if classes is None:
        return split
    keep = split.y < classes
    return CountSplit(split.x[keep], split.y[keep], None if split.spikes is None else split.spikes[keep])


def task_counts(task: CountTask, *, train_samples: int | None = None,
                test_samples: int | None = None) -> tuple[CountSplit, CountSplit, list[str]]:
    """(train, test, class names) of ``task``: :func:`spoken_digit_counts` with the task's
    features, then its class filter (``*_samples``: first samples before the filter)."""
    train, test, keys = spoken_digit_counts(dt_us=task.dt_us, t_max_us=task.steps * task.dt_us,
                                            groups=task.groups, clip=task.clip,
                                            train_samples=train_samples, test_samples=test_samples)
    train, test = keep_classes(train, task.classes), keep_classes(test, task.classes)
    if not len(train.y) or not len(test.y):
        raise ConfigError(f"sut.options: no sample of the first {task.classes} classes in the "
                          "first train_samples / samples of the corpus")
    return train, test, keys[:task.classes] if task.classes else keys


def chip_front_end(test: CountSplit, *, dt_us: int, t_max_us: int, groups: int, clip: int) -> dict:
    """The encoders before the chip (issue 47.4): the cochlea that made the corpus (48 kHz,
    700 channels, a clip of ``t_max_us``), then the spike counts, as one block of
    :mod:`neuromark.processors.encoder_cost`."""
    cochlea = Cochlea(CochleaParams(basilar_membrane=BasilarMembraneParams(channels=SHD_CHANNELS)))
    parts = [cochlea_cost(cochlea, int(round(t_max_us * 1e-6 * SHD_SAMPLE_RATE)), SHD_SAMPLE_RATE),
             spike_count_frames_cost(SHD_CHANNELS, dt_us, t_max_us, groups, clip, test.spikes_per_sample)]
    return chain(" + ".join(p.encoder for p in parts), parts)
