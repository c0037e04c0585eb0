"""Training loop for the torch spike classifiers (LIF SNN / RSNN, LSTM).

Loss: cross entropy of the maximum over time of the readout (Cramer et al. 2020, eq. 9),
or of its mean over time (``train.readout: mean``), plus, for the SNNs, the spike-count
regularisers of eqs. 10-11; optimiser Adamax (Kingma and Ba 2015, Sec. 7.1) as in the paper,
or Adam, optionally with weight decay and a cosine learning-rate schedule (Loshchilov and
Hutter 2017, without restarts). Augmentation, drawn afresh every epoch: channel jitter
(Cramer et al. 2020, one Gaussian shift per sample) and a time stretch (every spike time of
a sample multiplied by one factor drawn uniformly from [1 - s, 1 + s]; a speaker's speaking
rate; spikes stretched past ``t_max`` are dropped). All randomness is seeded: torch's global
seed for the weight initialisation and dropout, a ``torch.Generator`` for the batch order
and a numpy ``Generator`` for the augmentation.

Batches stream (:func:`epoch_batches`): the training split's spikes are held as flat arrays
(the split's ``held_spikes()``, e.g. :meth:`SampleSplit.held_spikes`: 4 bytes per SHD spike), and each
batch is gathered, augmented and binned on its own by the streaming loader's compiled kernel
(:func:`~neuromark.data.spike_stream.bin_batch`), so the dense frames in memory are
O(batch), never (N, T, C). The augmentation draws are those of binning the whole split
(per epoch, one stretch factor then one jitter shift per sample, in file order), so a seed
trains the same weights as the former whole-split loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from neuromark._progress import progress
from neuromark.data.binning import bin_samples, n_bins, pool_samples
from neuromark.data.hdf5_spikes import SpikeSamples
from neuromark.data.spike_stream import HeldSpikes, bin_batch
from neuromark.devices import deterministic_algorithms
from neuromark.networks.lif import (
    SpikingClassifier,
    max_over_time,
    mean_over_time,
    spike_count_regularisers,
)

#: Readout reductions over time by ``train.readout``.
READOUTS = {"max": max_over_time, "mean": mean_over_time}


@dataclass
class SampleSplit:
    """Some samples of a binned spike file (e.g. its training speakers), with the file's
    binning: usable wherever a binned spike-file training split is, for
    :func:`fit_torch_model` and the SVM. ``frames()`` is (N, T, C // pool) float32."""

    samples: SpikeSamples
    dt_us: int
    t_max_us: int
    pool: int
    path: Path | None = None

    @classmethod
    def of(cls, data: Any, indices: Any) -> SampleSplit:
        """Samples ``indices`` of ``data`` (a BinnedSpikes), with its binning."""
        return cls(data.samples.subset(indices), data.dt_us, data.t_max_us, data.pool, data.path)

    def __len__(self) -> int:
        return len(self.samples)

    @property
    def channels(self) -> int:
        """Channels of the file (before pooling)."""
        return self.samples.channels

    @property
    def targets(self) -> np.ndarray:
        """(N,) labels."""
        return self.samples.labels

    def held_spikes(self) -> HeldSpikes:
        """These samples' spikes (their flat arrays), gathered per batch in training."""
        return HeldSpikes.flat(self.samples.times, self.samples.units, self.samples.offsets)

    @property
    def input_shape(self) -> tuple[int, int]:
        return n_bins(self.dt_us, self.t_max_us), self.samples.channels // self.pool

    def frames(self, samples: SpikeSamples | None = None) -> np.ndarray:
        samples = self.samples if samples is None else samples
        if self.pool > 1:
            samples = pool_samples(samples, self.pool)
        return bin_samples(samples, self.dt_us, self.t_max_us, np.float32)


def stretch_samples(samples: SpikeSamples, rng: np.random.Generator, stretch: float,
                    t_max_s: float) -> SpikeSamples:
    """Copy of ``samples`` with each sample's spike times (s) multiplied by one factor drawn
    from U[1 - stretch, 1 + stretch]; spikes moved past ``t_max_s`` are dropped."""
    factors = stretch_factors(rng, stretch, len(samples))
    times, keep = stretch_times(samples.times, samples.offsets, factors, t_max_s)
    return replace(samples, times=times[keep], units=samples.units[keep],
                   offsets=kept_offsets(samples.offsets, keep))


def stretch_factors(rng: np.random.Generator, stretch: float, n: int) -> np.ndarray:
    """(n,) time-stretch factors drawn from U[1 - stretch, 1 + stretch]."""
    if not 0 <= stretch < 1:
        raise ValueError(f"stretch must be in [0, 1), got {stretch}")
    return rng.uniform(1.0 - stretch, 1.0 + stretch, n)


def stretch_times(times: np.ndarray, offsets: np.ndarray, factors: np.ndarray, t_max_s: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(float64 times (S,) s of each sample times its factor, keep (S,): not past ``t_max_s``)."""
    stretched = times * np.repeat(factors, np.diff(offsets))
    return stretched, stretched <= t_max_s


def kept_offsets(offsets: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """(N+1,) sample boundaries after removing the spikes where ``keep`` is False."""
    kept = np.zeros(keep.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep, out=kept[1:])
    return kept[offsets]


@dataclass
class EpochAugmentation:
    """One epoch's augmentation draws for every sample of the split, in file order: time-stretch
    factors (N,) and channel-jitter shifts (N,) int64 (None when off). Drawn in this order
    from the numpy generator, as binning the whole split did (stretch, then
    :func:`~neuromark.data.binning.jitter_units` with one shift per sample)."""

    factors: np.ndarray | None
    shifts: np.ndarray | None

    @classmethod
    def draw(cls, cfg: Any, n: int, rng: np.random.Generator) -> EpochAugmentation:
        factors = stretch_factors(rng, cfg.time_stretch, n) if cfg.time_stretch > 0 else None
        shifts = (np.rint(rng.normal(0.0, cfg.jitter_sigma, n)).astype(np.int64)
                  if cfg.jitter_sigma > 0 else None)
        return cls(factors, shifts)

    def apply(self, rows: np.ndarray, times: np.ndarray, units: np.ndarray, offsets: np.ndarray,
              *, t_max_s: float, channels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Spikes of samples ``rows`` (gathered flat arrays) stretched and jittered; spikes
        stretched past ``t_max_s`` or shifted off the channels 0..channels-1 are dropped."""
        keep = None
        if self.factors is not None:
            times, keep = stretch_times(times, offsets, self.factors[rows], t_max_s)
        if self.shifts is not None:
            units = units.astype(np.int64) + np.repeat(self.shifts[rows], np.diff(offsets))
            inside = (units >= 0) & (units < channels)
            keep = inside if keep is None else keep & inside
        if keep is None or keep.all():
            return times, units, offsets
        return times[keep], units[keep], kept_offsets(offsets, keep)


def batch_frames(data: Any, spikes: HeldSpikes, rows: np.ndarray,
                 augmentation: EpochAugmentation | None = None) -> np.ndarray:
    """(B, T, C // pool) float32 counts of samples ``rows`` of ``data`` (BinnedSpikes or
    :class:`SampleSplit`; ``spikes`` its ``held_spikes()``), augmented when asked, binned by
    the streaming loader's kernel with ``data``'s binning and late-spike rule."""
    times, units, offsets = spikes.gather(rows)
    if augmentation is not None:
        times, units, offsets = augmentation.apply(rows, times, units, offsets,
                                                   t_max_s=data.t_max_us / 1e6, channels=data.channels)
    frames, _ = bin_batch(times, units, offsets, dt_us=data.dt_us, t_max_us=data.t_max_us,
                          channels=data.channels, pool=data.pool, late=getattr(data, "late", "error"),
                          name=str(data.path or "<memory>"), first=rows)
    return frames


def epoch_batches(data: Any, cfg: Any, rng: np.random.Generator, order: torch.Generator
                  ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """One training epoch: ``(frames (B, T, C // pool) float32, labels (B,) int64)`` tensors in
    the order of ``torch.randperm(N, generator=order)``, each batch binned on its own (with
    this epoch's augmentation drawn from ``rng`` first). ``data``: BinnedSpikes or
    :class:`SampleSplit`; ``cfg``: the ``train:`` section (batch size, augmentation)."""
    labels = torch.as_tensor(data.targets, dtype=torch.long)
    augmentation = (EpochAugmentation.draw(cfg, len(labels), rng)
                    if cfg.time_stretch > 0 or cfg.jitter_sigma > 0 else None)
    spikes = data.held_spikes()
    perm = torch.randperm(len(labels), generator=order)
    for start in range(0, len(perm), cfg.batch_size):
        idx = perm[start:start + cfg.batch_size]
        frames = batch_frames(data, spikes, idx.numpy(), augmentation)
        yield torch.from_numpy(frames), labels[idx]


def spike_counts(data: Any, batch_size: int = 256) -> np.ndarray:
    """(N, C // pool) float32 spike counts per channel (frames summed over time) of ``data``'s
    samples in file order, binned ``batch_size`` samples at a time (the SVM's input)."""
    spikes = data.held_spikes()
    return np.concatenate([batch_frames(data, spikes, np.arange(start, min(len(data), start + batch_size)))
                           .sum(axis=1) for start in range(0, len(data), batch_size)])


def batch_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor, settings: Any
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, logits) of one batch: CE of the max-over-time readout (+ SNN regularisers);
    ``settings`` is the ``train:`` section (its ``regularisers``)."""
    logits = READOUTS[getattr(settings, "readout", "max")](model(x))
    loss = nn.functional.cross_entropy(logits, y)
    if isinstance(model, SpikingClassifier) and model.last_hidden_spikes is not None:
        reg = settings.regularisers
        lower, upper = spike_count_regularisers(
            model.last_hidden_spikes, lower_strength=reg.lower_strength,
            lower_threshold=reg.lower_threshold, upper_strength=reg.upper_strength,
            upper_threshold=reg.upper_threshold)
        loss = loss + lower + upper
    return loss, logits


def fit_torch_model(new_model: Callable[[], nn.Module], cfg: Any, data: Any, rng: np.random.Generator,
                    *, quiet: bool = True, label: str = "", device: Any = "cpu"
                    ) -> tuple[nn.Module, dict[str, Any]]:
    """Train an SNN/RSNN/LSTM on ``device``; returns (model in eval mode, on the CPU, info).

    The model is built on the CPU after seeding (the same initial weights on every device),
    then moved; each batch is copied to ``device`` from pinned memory when it is CUDA. Losses
    and hits add up on the device (no host sync per batch) in float64, as the CPU loop always
    did. With ``cfg.deterministic``, torch's deterministic algorithms are on while training.

    Args:
        new_model: builds the untrained model (called after seeding torch with ``cfg.seed``,
            so the initial weights are reproducible).
        cfg: the ``train:`` section (:class:`~neuromark.networks.spike_classifiers.TrainSettings`).
        data: the training split (a binned spike-file split or a :class:`SampleSplit`),
            streamed batch by batch (:func:`epoch_batches`).
        rng: the augmentation's generator (time stretch, channel jitter).
    """
    with deterministic_algorithms(getattr(cfg, "deterministic", False)):
        return _fit(new_model, cfg, data, rng, quiet=quiet, label=label, device=torch.device(device))


def _fit(new_model: Callable[[], nn.Module], cfg: Any, data: Any, rng: np.random.Generator, *,
         quiet: bool, label: str, device: Any) -> tuple[nn.Module, dict[str, Any]]:
    torch.manual_seed(cfg.seed)
    order = torch.Generator().manual_seed(cfg.seed)
    model = new_model().to(device)
    pin = device.type == "cuda"
    optimiser_cls = torch.optim.Adamax if cfg.optimizer == "adamax" else torch.optim.Adam
    optimiser = optimiser_cls(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps = cfg.epochs * -(-len(data.targets) // cfg.batch_size)
    schedule = (torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, steps)
                if cfg.schedule == "cosine" else None)
    losses: list[float] = []
    accuracies: list[float] = []
    epochs: Any = progress(range(cfg.epochs), desc=f"train {label}", unit="epoch", quiet=quiet)
    model.train(True)
    for _ in epochs:
        total = torch.zeros((), dtype=torch.float64, device=device)
        correct = torch.zeros((), dtype=torch.int64, device=device)
        seen = 0
        for x, y in epoch_batches(data, cfg, rng, order):
            if pin:
                x, y = x.pin_memory(), y.pin_memory()
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimiser.zero_grad()
            loss, logits = batch_loss(model, x, y, cfg)
            loss.backward()
            optimiser.step()
            if schedule is not None:
                schedule.step()
            total += loss.detach().to(torch.float64) * len(y)
            correct += (logits.argmax(-1) == y).sum()
            seen += len(y)
        losses.append(float(total) / seen)
        accuracies.append(int(correct) / seen)
        epochs.set_postfix(loss=f"{losses[-1]:.3f}", acc=f"{accuracies[-1]:.2f}")
    model.train(False)
    return model.cpu(), {"epochs": cfg.epochs, "loss": losses, "train_accuracy": accuracies}
