"""Synaptic-operation counting from non-zero masks (NeuroBench paper, Methods).

Definitions, per model execution:
- Dense: every multiplication of an input element by a weight (biases not counted).
- Effective: multiplications whose input AND weight are both non-zero.
- Effective ops are accumulates (ACs) when the layer's input holds only values in
  {-1, 0, 1} (spikes), else multiply-accumulates (MACs).

neurobench 2.3.0 counts effective ops by copying each layer and running extra forward
passes with binarised weights. Here the counts come from mask algebra instead: for a
Linear layer y = W x with W of shape (out, in),
``effective = sum_j nnz(x_j) * nnz(W[:, j])`` and ``dense = in * out`` per sample; a
convolution has the same form with a per-input-element weight count map
(:func:`conv_input_counts`), so both cost one pass over the input per call.

All functions return float64 scalar tensors (exact for counts below 2**53).
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional as F


def spike_stats(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Non-zero indicator of ``x`` (float, same shape) and two 0-d spike statistics.

    ``x`` holds only -1, 0, 1 exactly when ``defect == 0`` and ``peak <= 1``, where
    ``peak = max|x|`` and ``defect = sum(indicator - |x|)``: with |x| <= 1 every term is
    >= 0 and is 0 only for |x| in {0, 1}, so the sum cannot cancel. Seven cheap passes,
    no boolean reductions (which are slow on strided CPU tensors) and no Python sync.
    NaN inputs give a NaN ``defect``.
    """
    if not x.is_floating_point():
        x = x.to(torch.float32)
    magnitude = x.abs()
    indicator = magnitude.ceil().clamp_(max=1.0)
    return indicator, (indicator - magnitude).sum(), magnitude.amax() if x.numel() else \
        torch.zeros((), dtype=x.dtype)


def weight_column_nnz(weight: Tensor) -> Tensor:
    """Non-zero weights per input column of a (out, in) matrix; shape (in,), float64."""
    return (weight != 0).sum(dim=0, dtype=torch.float64)


def linear_effective(indicator: Tensor, col_nnz: Tensor) -> Tensor:
    """Effective ops of y = W x summed over all rows of x (..., in), given the non-zero
    indicator of x (from :func:`spike_stats`) and ``col_nnz`` from :func:`weight_column_nnz`:
    ``sum_j nnz(x[:, j]) * nnz(W[:, j])``."""
    # per-column counts are exact in float32 (rows < 2**24); the dot product is float64
    per_column = indicator.reshape(-1, indicator.shape[-1]).sum(dim=0)
    return per_column.to(torch.float64) @ col_nnz


def linear_dense(x: Tensor, weight: Tensor) -> float:
    """Dense ops of y = W x over all rows of ``x`` (..., in): rows * in * out."""
    rows = x.numel() // x.shape[-1]
    return float(rows * weight.shape[0] * weight.shape[1])


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def conv_input_counts(weight_mask: Tensor, in_shape: tuple[int, ...], stride, padding,
                      dilation, groups: int) -> Tensor:
    """For a convolution with weights ``weight_mask`` (1 where a weight counts, else 0),
    the number of (output, weight) multiplications each input element takes part in:
    shape ``in_shape`` = (C, *spatial), float64.

    A convolution is linear in its input, so summed over all outputs it is
    ``sum(conv(x, m)) = sum(x * M)`` with ``M`` the gradient of ``sum(conv(x, m))`` with
    respect to ``x``. Effective ops of a sample are then ``sum([x != 0] * M)`` with ``m`` the
    weight's non-zero mask, and dense ops ``sum(M)`` with ``m`` all ones: multiplications
    with zero padding fall outside ``x`` and are not counted. Any padding mode, including
    ``"same"``, and strides, dilation and groups are handled by torch's own convolution.
    """
    conv = _CONV[weight_mask.dim() - 2]
    with torch.inference_mode(False), torch.enable_grad():
        ones = torch.ones((1, *in_shape), dtype=torch.float64, device=weight_mask.device,
                          requires_grad=True)
        mask = weight_mask.detach().to(torch.float64).clone()
        conv(ones, mask, None, stride, padding, dilation, groups).sum().backward()
    return ones.grad[0].detach()
