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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from neuromark._progress import progress
from neuromark.baselines.shd_snn import (
    SpikingClassifier,
    max_over_time,
    mean_over_time,
    spike_count_regularisers,
)
from neuromark.data.binning import bin_samples, jitter_samples, n_bins, pool_samples
from neuromark.data.hdf5_spikes import SpikeSamples
from neuromark.devices import deterministic_algorithms

#: Readout reductions over time by ``train.readout``.
READOUTS = {"max": max_over_time, "mean": mean_over_time}


@dataclass
class SampleSplit:
    """Some samples of a binned spike file (e.g. its training speakers), with the file's
    binning: usable wherever a training split (:class:`~neuromark.data.binned.BinnedSpikes`)
    is, for :func:`fit_torch_model` and the SVM. ``frames()`` is (N, T, C // pool) float32."""

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
    if not 0 <= stretch < 1:
        raise ValueError(f"stretch must be in [0, 1), got {stretch}")
    counts = samples.counts()
    factor = np.repeat(rng.uniform(1.0 - stretch, 1.0 + stretch, len(samples)), counts)
    times = samples.times * factor
    keep = times <= t_max_s
    sample = np.repeat(np.arange(len(samples)), counts)
    offsets = np.zeros(len(samples) + 1, dtype=np.int64)
    np.cumsum(np.bincount(sample[keep], minlength=len(samples)), out=offsets[1:])
    return replace(samples, times=times[keep], units=samples.units[keep], offsets=offsets)


def augment(data: Any, cfg: Any, rng: np.random.Generator) -> np.ndarray:
    """(N, T, C) frames of the training split with this epoch's jitter and stretch."""
    samples = data.samples
    if cfg.time_stretch > 0:
        samples = stretch_samples(samples, rng, cfg.time_stretch, data.t_max_us / 1e6)
    if cfg.jitter_sigma > 0:
        samples = jitter_samples(samples, rng, cfg.jitter_sigma)
    return data.frames(samples)


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
        cfg: the ``train:`` section (:class:`~neuromark.baselines.spike_classifiers.TrainSettings`).
        data: the training split (:class:`~neuromark.data.binned.BinnedSpikes` or
            :class:`SampleSplit`): its
            ``samples`` are jittered (channels, before pooling) and binned by ``frames``.
        rng: the channel jitter's generator.
    """
    with deterministic_algorithms(getattr(cfg, "deterministic", False)):
        return _fit(new_model, cfg, data, rng, quiet=quiet, label=label, device=torch.device(device))


def _fit(new_model: Callable[[], nn.Module], cfg: Any, data: Any, rng: np.random.Generator, *,
         quiet: bool, label: str, device: Any) -> tuple[nn.Module, dict[str, Any]]:
    torch.manual_seed(cfg.seed)
    order = torch.Generator().manual_seed(cfg.seed)
    # Without augmentation the frames are binned once here; with it, afresh every epoch below.
    fixed = None if cfg.jitter_sigma > 0 or cfg.time_stretch > 0 else data.frames()
    model = new_model().to(device)
    pin = device.type == "cuda"
    optimiser_cls = torch.optim.Adamax if cfg.optimizer == "adamax" else torch.optim.Adam
    optimiser = optimiser_cls(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    y_all = torch.as_tensor(data.samples.labels, dtype=torch.long)
    steps = cfg.epochs * -(-len(y_all) // cfg.batch_size)
    schedule = (torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, steps)
                if cfg.schedule == "cosine" else None)
    losses: list[float] = []
    accuracies: list[float] = []
    epochs: Any = progress(range(cfg.epochs), desc=f"train {label}", unit="epoch", quiet=quiet)
    model.train(True)
    for _ in epochs:
        frames = augment(data, cfg, rng) if fixed is None else fixed
        x_all = torch.as_tensor(frames)
        perm = torch.randperm(len(y_all), generator=order)
        total = torch.zeros((), dtype=torch.float64, device=device)
        correct = torch.zeros((), dtype=torch.int64, device=device)
        seen = 0
        for start in range(0, len(perm), cfg.batch_size):
            idx = perm[start:start + cfg.batch_size]
            x, y = x_all[idx], y_all[idx]
            if pin:
                x, y = x.pin_memory(), y.pin_memory()
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimiser.zero_grad()
            loss, logits = batch_loss(model, x, y, cfg)
            loss.backward()
            optimiser.step()
            if schedule is not None:
                schedule.step()
            total += loss.detach().to(torch.float64) * len(idx)
            correct += (logits.argmax(-1) == y).sum()
            seen += len(idx)
        losses.append(float(total) / seen)
        accuracies.append(int(correct) / seen)
        epochs.set_postfix(loss=f"{losses[-1]:.3f}", acc=f"{accuracies[-1]:.2f}")
    model.train(False)
    return model.cpu(), {"epochs": cfg.epochs, "loss": losses, "train_accuracy": accuracies}
