"""Training loop for the torch spike classifiers (LIF SNN / RSNN, LSTM).

Loss: cross entropy of the maximum over time of the readout (Cramer et al. 2020, eq. 9),
plus, for the SNNs, the spike-count regularisers of eqs. 10-11; optimiser Adamax (Kingma
and Ba 2015, Sec. 7.1), as in the paper. All randomness is seeded: torch's global seed for
the weight initialisation, a ``torch.Generator`` for the batch order and a numpy
``Generator`` for the channel jitter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from neuromark._progress import progress
from neuromark.baselines.shd_snn import SpikingClassifier, max_over_time, spike_count_regularisers
from neuromark.data.binning import jitter_samples


def batch_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor, settings: Any
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, logits) of one batch: CE of the max-over-time readout (+ SNN regularisers);
    ``settings`` is the ``train:`` section (its ``regularisers``)."""
    logits = max_over_time(model(x))
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
                    *, quiet: bool = True, label: str = "") -> tuple[nn.Module, dict[str, Any]]:
    """Train an SNN/RSNN/LSTM; returns (model in eval mode, info).

    Args:
        new_model: builds the untrained model (called after seeding torch with ``cfg.seed``,
            so the initial weights are reproducible).
        cfg: the ``train:`` section (:class:`~neuromark.baselines.spike_classifiers.TrainSettings`).
        data: the training split (:class:`~neuromark.data.binned.BinnedSpikes`): its
            ``samples`` are jittered (channels, before pooling) and binned by ``frames``.
        rng: the channel jitter's generator.
    """
    torch.manual_seed(cfg.seed)
    order = torch.Generator().manual_seed(cfg.seed)
    # Without jitter the frames are binned once here; with it, afresh every epoch below.
    fixed = None if cfg.jitter_sigma > 0 else data.frames()
    model = new_model()
    optimiser_cls = torch.optim.Adamax if cfg.optimizer == "adamax" else torch.optim.Adam
    optimiser = optimiser_cls(model.parameters(), lr=cfg.lr)
    y_all = torch.as_tensor(data.samples.labels, dtype=torch.long)
    losses: list[float] = []
    accuracies: list[float] = []
    epochs: Any = progress(range(cfg.epochs), desc=f"train {label}", unit="epoch", quiet=quiet)
    model.train(True)
    for _ in epochs:
        frames = data.frames(jitter_samples(data.samples, rng, cfg.jitter_sigma)) if fixed is None else fixed
        x_all = torch.as_tensor(frames)
        perm = torch.randperm(len(y_all), generator=order)
        total, correct, seen = 0.0, 0, 0
        for start in range(0, len(perm), cfg.batch_size):
            idx = perm[start:start + cfg.batch_size]
            x, y = x_all[idx], y_all[idx]
            optimiser.zero_grad()
            loss, logits = batch_loss(model, x, y, cfg)
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(idx)
            correct += int((logits.argmax(-1) == y).sum())
            seen += len(idx)
        losses.append(total / seen)
        accuracies.append(correct / seen)
        epochs.set_postfix(loss=f"{losses[-1]:.3f}", acc=f"{accuracies[-1]:.2f}")
    model.train(False)
    return model, {"epochs": cfg.epochs, "loss": losses, "train_accuracy": accuracies}
