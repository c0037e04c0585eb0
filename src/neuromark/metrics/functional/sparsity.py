"""Sparsity as zero count over total count."""

from __future__ import annotations

from torch import Tensor, nn


def zero_fraction(zeros: int | float, total: int | float) -> float:
    """zeros / total; raises when nothing was counted rather than inventing 0."""
    if total <= 0:
        raise ValueError("no elements were counted")
    return float(zeros) / float(total)


def weight_zero_counts(layers: list[tuple[str, nn.Module]]) -> tuple[int, int]:
    """(zero weights, all weights) over the weight matrices of connection layers.

    Counted tensors are parameters whose name starts with ``weight`` (biases excluded).
    """
    zeros = total = 0
    for _, module in layers:
        for pname, param in module.named_parameters(recurse=False):
            if pname.startswith("weight"):
                w: Tensor = param.detach()
                total += w.numel()
                zeros += w.numel() - int(w.count_nonzero())
    return zeros, total
