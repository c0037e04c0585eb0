"""Correctness functions: accuracy, MSE, sMAPE and R² over whole arrays, plus the per-sample
values and sufficient statistics that the metric classes accumulate over batches.

The public functions (:func:`accuracy`, :func:`mse`, :func:`smape`, :func:`r2`) take
tensors, numpy arrays or nested lists of the same shape ``(N, ...)`` (N samples) and return
a plain float; the metric classes of :mod:`neuromark.metrics.correctness` are built on the
same helpers, so a class fed every batch and the function fed everything at once agree.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def _tensor(x: Any) -> Tensor:
    return x.detach() if isinstance(x, Tensor) else torch.as_tensor(x)


def _pair(predictions: Any, targets: Any, metric: str, dtype: Any = None) -> tuple[Tensor, Tensor]:
    """Both as tensors (``dtype`` if given) of the same, non-empty shape."""
    p, y = _tensor(predictions), _tensor(targets)
    if dtype is not None:
        p, y = p.to(dtype), y.to(dtype)
    check_same_shape(p, y, metric)
    if y.numel() == 0:
        raise ValueError(f"{metric}: no samples")
    return p, y


def accuracy(predictions: Any, targets: Any) -> float:
    """Fraction of samples whose prediction equals the target in every element.

    Args:
        predictions: predicted classes, shape (N,) or (N, ...).
        targets: true classes, the same shape.

    Returns:
        A float in [0, 1]. Example: ``accuracy([1, 2, 3], [1, 2, 0]) == 2 / 3``.
    """
    return float(per_sample_correct(*_pair(predictions, targets, "accuracy")).mean())


def mse(predictions: Any, targets: Any) -> float:
    """Mean squared error over all elements (float64).

    Args:
        predictions, targets: shape (N, ...), the same for both.

    Returns:
        ``mean((predictions - targets)**2)``. Example: ``mse([[1., 2.]], [[0., 0.]]) == 2.5``.
    """
    return float(per_sample_squared_error(*_pair(predictions, targets, "MSE", torch.float64)).mean())


def smape(predictions: Any, targets: Any) -> float:
    """Symmetric mean absolute percentage error over all elements, in [0, 200].

    ``200 · mean(|y − ŷ| / (|y| + |ŷ|))`` with the conventions of :func:`smape_terms`: 0/0
    counts 0, a NaN or infinite prediction counts 200, huge finite pairs do not overflow.

    Args:
        predictions, targets: any shape, the same for both (e.g. a forecast (T, 1)).

    Returns:
        A float in [0, 200]. Example: ``smape([3.0, 0.0], [1.0, 0.0]) == 50.0``.
    """
    p, y = _pair(predictions, targets, "sMAPE", torch.float64)
    return float(smape_terms(p.reshape(-1), y.reshape(-1)).mean())


def r2(predictions: Any, targets: Any) -> float:
    """Coefficient of determination ``1 − SS_res / SS_tot`` per output dimension, averaged
    over the dimensions.

    Args:
        predictions, targets: shape (N,) or (N, D, ...), the same for both; N >= 2 and every
            target dimension must vary.

    Returns:
        A float (1 is perfect; it can be negative). Example:
        ``r2([1.0, 2.0, 2.0], [1.0, 2.0, 3.0]) == 0.5``.
    """
    n, sum_y, sum_y2, ss_res = r2_sums(*_pair(predictions, targets, "r2", torch.float64))
    if n < 2:
        raise ValueError("r2 needs at least 2 samples")
    return r2_from_sums(n, sum_y, sum_y2, ss_res)


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


def r2_sums(predictions: Tensor, targets: Tensor) -> tuple[int, Tensor, Tensor, Tensor]:
    """Sufficient statistics of R² for one batch, per output dimension: (N, sum y, sum y²,
    sum (y − ŷ)²); sums of these over batches give :func:`r2_from_sums` its inputs."""
    check_same_shape(predictions, targets, "r2")
    y = targets.reshape(len(targets), -1)
    p = predictions.reshape(len(predictions), -1)
    return len(y), y.sum(0), (y * y).sum(0), ((y - p) ** 2).sum(0)


def r2_from_sums(n: int, sum_y: Tensor, sum_y2: Tensor, ss_res: Tensor) -> float:
    """R² per output dimension from sufficient statistics, averaged over dimensions."""
    ss_tot = sum_y2 - sum_y * sum_y / n
    if bool((ss_tot <= 0).any()):
        raise ValueError("r2 is undefined: a target dimension has zero variance")
    return float((1.0 - ss_res / ss_tot).mean())
