"""Sparsity as zero count over total count."""

from __future__ import annotations

from torch import Tensor, nn


def zero_fraction(zeros: int | float, total: int | float) -> float:
    """zeros / total; raises when nothing was counted rather than inventing 0."""
    if total <= 0:
        raise ValueError("no elements were counted")
    return float(zeros) / float(total)


def weight_zero_counts(layers: list[tuple[str, nn.Module]],
                       recurrent_biases: bool = False) -> tuple[int, int]:
    """(zero weights, all weights) over the weight matrices of connection layers.

    Counted tensors are parameters whose name starts with ``weight`` (biases excluded);
    with ``recurrent_biases`` (neurobench 2.3.0's rule) recurrent layers' and cells'
    biases (``bias_ih``, ``bias_hh``) are counted too.
    """
    zeros = total = 0
    for _, module in layers:
        recurrent = recurrent_biases and isinstance(module, (nn.RNNBase, nn.RNNCellBase))
        for pname, param in module.named_parameters(recurse=False):
            if pname.startswith("weight") or (recurrent and pname.startswith("bias")):
                w: Tensor = param.detach()
                total += w.numel()
                zeros += w.numel() - int(w.count_nonzero())
    return zeros, total
