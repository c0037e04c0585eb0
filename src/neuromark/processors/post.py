"""Postprocessors: model output -> predictions. Frozen dataclasses over pure functions."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


def choose_max_count(spikes: Tensor, time_dim: int = 1) -> Tensor:
    """Class with the most output spikes: sum over ``time_dim`` then argmax over the last
    dimension. (B, T, C) -> (B,)."""
    return spikes.sum(dim=time_dim).argmax(dim=-1)


def argmax_last(logits: Tensor) -> Tensor:
    """Argmax over the last dimension: (B, C) -> (B,)."""
    return logits.argmax(dim=-1)


@dataclass(frozen=True)
class ChooseMaxCount:
    """Sum spikes over time, then argmax over classes: (B, T, C) -> (B,)."""

    time_dim: int = 1

    def __call__(self, spikes: Tensor) -> Tensor:
        return choose_max_count(spikes, self.time_dim)


@dataclass(frozen=True)
class Argmax:
    """Argmax over the last dimension: logits (B, C) -> class indices (B,)."""

    def __call__(self, logits: Tensor) -> Tensor:
        return argmax_last(logits)
