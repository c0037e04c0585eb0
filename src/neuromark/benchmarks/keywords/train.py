"""Training of the keyword models (and FSCIL backbones): :func:`fit_classifier` (Adam,
StepLR, cross entropy or the spike-count MSE), the seeded initialisation, the time-shift
augmentation and batched embedding / prediction. Re-exported by
:mod:`neuromark.benchmarks.keywords.models`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn


def fit_classifier(model: nn.Module, x: Tensor, y: Tensor, *, epochs: int, batch_size: int, lr: float,
                   weight_decay: float = 1e-4, step_size: int = 20, gamma: float = 0.1, seed: int = 0,
                   classes: int | None = None,
                   augment: Callable[[Tensor, torch.Generator], Tensor] | None = None,
                   log: Callable[[str], None] | None = None,
                   loss: str = "ce", rates: tuple[float, float] = (0.25, 0.025)) -> dict[str, Any]:
    """Train ``model`` in place on features ``x`` (N, ...) and labels ``y`` (N,): Adam,
    StepLR(step_size, gamma), cross entropy of ``model.logits``; the batch order from a
    seeded ``torch.Generator`` (weights are initialised by the caller). With ``classes``,
    the loss covers only logits ``0..classes-1`` (the base classes). ``loss="mse_count"``
    (spiking readouts): mean squared error between each output's spike count and a target
    count, ``rates[0] * T`` for the true class and ``rates[1] * T`` for the others (the rule
    of snnTorch's ``mse_count_loss`` that NeuroBench's GSC SNN is trained with).
    Returns ``{"loss": [...], "train_accuracy": [...], "train_seconds"}`` per epoch."""
    start = time.perf_counter()
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=step_size, gamma=gamma)
    info: dict[str, Any] = {"loss": [], "train_accuracy": []}
    n = len(y)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(n, generator=gen)
        total, correct = 0.0, 0
        for i in range(0, n, batch_size):
            idx = order[i:i + batch_size]
            xb = x[idx] if augment is None else augment(x[idx], gen)
            logits = model.logits(xb)
            if classes is not None:
                logits = logits[:, :classes]
            if loss == "mse_count":
                steps = xb.shape[1]
                target = torch.full_like(logits, rates[1] * steps)
                target[torch.arange(len(idx)), y[idx]] = rates[0] * steps
                value = nn.functional.mse_loss(logits, target)
            else:
                value = nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad()
            value.backward()
            opt.step()
            total += value.item() * len(idx)
            correct += int((logits.argmax(-1) == y[idx]).sum())
        sched.step()
        info["loss"].append(total / n)
        info["train_accuracy"].append(correct / n)
        if log is not None:
            log(f"epoch {epoch + 1}/{epochs}: loss {total / n:.4f}, train accuracy {correct / n:.4f}")
    model.eval()
    info["train_seconds"] = time.perf_counter() - start
    return info


@torch.inference_mode()
def embed(model: nn.Module, x: Tensor, batch_size: int = 256) -> Tensor:
    """``model.features`` of all of ``x``, batch by batch, in eval mode: (N, F)."""
    model.eval()
    return torch.cat([model.features(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])


@torch.inference_mode()
def predict(model: nn.Module, x: Tensor, batch_size: int = 256) -> Tensor:
    """``model.logits`` of all of ``x``: (N, K)."""
    model.eval()
    return torch.cat([model.logits(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])


def init_seeded(model_factory: Callable[[], nn.Module], seed: int) -> nn.Module:
    """A model built under a fork of torch's RNG seeded with ``seed`` (global state kept)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return model_factory()


def time_shift(max_shift: int, axis: int) -> Callable[[Tensor, torch.Generator], Tensor]:
    """Augmentation: roll each sample by a random number of steps in [-max_shift, max_shift]
    along ``axis`` of the batch (-1: frames of (B, C, frames) MFCC; 1: time of (B, T, C))."""

    def shift(x: Tensor, gen: torch.Generator) -> Tensor:
        if max_shift <= 0:
            return x
        shifts = torch.randint(-max_shift, max_shift + 1, (len(x),), generator=gen).tolist()
        dim = axis - 1 if axis > 0 else axis
        return torch.stack([torch.roll(s, k, dims=dim) for s, k in zip(x, shifts, strict=True)])

    return shift
