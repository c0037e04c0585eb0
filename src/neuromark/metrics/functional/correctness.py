"""Per-sample correctness values: accuracy, squared error, sMAPE, and R² statistics."""

from __future__ import annotations

import torch
from torch import Tensor


def check_same_shape(predictions: Tensor, targets: Tensor, metric: str) -> None:
    if predictions.shape != targets.shape:
        raise ValueError(f"{metric}: predictions of shape {tuple(predictions.shape)} do not fit "
                         f"targets of shape {tuple(targets.shape)}")


def per_sample_correct(predictions: Tensor, targets: Tensor) -> Tensor:
    """1.0 where the predicted class equals the target, shape (N,)."""
    check_same_shape(predictions, targets, "classification_accuracy")
    return (predictions == targets).reshape(len(targets), -1).all(dim=1).to(torch.float64)


def per_sample_squared_error(predictions: Tensor, targets: Tensor) -> Tensor:
    """Mean squared error of each sample over its elements, shape (N,)."""
    check_same_shape(predictions, targets, "MSE")
    diff = (predictions.to(torch.float64) - targets.to(torch.float64)).reshape(len(targets), -1)
    return (diff * diff).mean(dim=1)


def smape_terms(predictions: Tensor, targets: Tensor) -> Tensor:
    """Elementwise sMAPE terms 200·|y−ŷ|/(|y|+|ŷ|) in [0, 200].

    0/0 (both zero) counts as 0, a perfect prediction; NaN or infinite predictions count as
    200, the bound, so that the metric stays within [0, 200].
    """
    check_same_shape(predictions, targets, "sMAPE")
    y = targets.to(torch.float64)
    p = predictions.to(torch.float64)
    finite = torch.isfinite(p)
    p = torch.where(finite, p, torch.zeros_like(p))
    ratio = _abs_ratio(y, p)
    overflow = ~torch.isfinite(ratio)
    if bool(overflow.any()):
        # huge finite values: scale each pair by its larger magnitude first
        scale = torch.maximum(y.abs(), p.abs())
        scale = torch.where(scale == 0, torch.ones_like(scale), scale)
        ratio = torch.where(overflow, _abs_ratio(y / scale, p / scale), ratio)
    return torch.where(finite, 200.0 * ratio, torch.full_like(ratio, 200.0))


def _abs_ratio(y: Tensor, p: Tensor) -> Tensor:
    """|y - p| / (|y| + |p|), with 0/0 = 0."""
    denom = y.abs() + p.abs()
    return (y - p).abs() / torch.where(denom == 0, torch.ones_like(denom), denom)


def per_sample_smape(predictions: Tensor, targets: Tensor) -> Tensor:
    """Mean sMAPE term of each sample, shape (N,)."""
    return smape_terms(predictions, targets).reshape(len(targets), -1).mean(dim=1)


def r2_from_sums(n: int, sum_y: Tensor, sum_y2: Tensor, ss_res: Tensor) -> float:
    """R² per output dimension from sufficient statistics, averaged over dimensions."""
    ss_tot = sum_y2 - sum_y * sum_y / n
    if bool((ss_tot <= 0).any()):
        raise ValueError("r2 is undefined: a target dimension has zero variance")
    return float((1.0 - ss_res / ss_tot).mean())
