"""Synaptic-operation counting from non-zero masks (NeuroBench paper, Methods).

Definitions, per model execution:
- Dense: every multiplication of an input element by a weight (biases not counted).
- Effective: multiplications whose input AND weight are both non-zero.
- Effective ops are accumulates (ACs) when the layer's input holds only values in
  {-1, 0, 1} (spikes), else multiply-accumulates (MACs); decided per sample and call
  (neuromark's default) or per call over the whole batch (neurobench 2.3.0).

neurobench 2.3.0 counts effective ops by copying each layer and running extra forward
passes with binarised weights. Here the counts come from mask algebra instead: for a
Linear layer y = W x with W of shape (out, in),
``effective = sum_j nnz(x_j) * nnz(W[:, j])`` and ``dense = in * out`` per sample; a
convolution has the same form with a per-input-element weight count map
(:func:`conv_input_counts`), so both cost one pass over the input per call.

Counts are float64 (exact below 2**53).
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional as F


def masked_counts(rows: Tensor, weight_counts: Tensor,
                  group: int | None = None) -> tuple[Tensor, Tensor]:
    """(effective ops, spike residual) of ``rows`` (R, K) against ``weight_counts`` (K,),
    the non-zero weights each input element meets, as 0-d tensors (no host sync); with
    ``group``, per sample of ``group`` successive rows, as (R / group,) tensors.

    effective = sum over rows of ``[x != 0] @ weight_counts``; residual =
    ``sum (|x| - [x != 0])**2``, which is 0 exactly when every value is -1, 0 or 1 (every
    term is >= 0 and a non-zero term is >= 2**-48 in float32, whose spacing near 1 is
    2**-24, so the sum cannot vanish or cancel) and NaN for NaN input.
    """
    if rows.dtype not in (torch.float32, torch.float64):
        rows = rows.to(torch.float32)
    magnitude = rows.abs()
    indicator = magnitude.sign()  # 1 where x != 0 (NaN -> 0)
    counts = weight_counts.to(rows.device, torch.float64)
    if group is not None:
        if group < 1 or rows.shape[0] % group:
            raise ValueError(f"{rows.shape[0]} rows do not split into samples of {group} rows")
        samples = rows.shape[0] // group
        columns = indicator.reshape(samples, group, -1).sum(dim=1, dtype=torch.float64)
        defect = (magnitude - indicator).reshape(samples, -1)
        return columns @ counts, torch.linalg.vecdot(defect, defect)
    # per-column counts are exact in float32 (rows < 2**24); the dot product is float64
    columns = indicator.sum(dim=0, dtype=torch.float64)
    defect = (magnitude - indicator).reshape(-1)
    return columns @ counts, torch.dot(defect, defect)


def weight_column_nnz(weight: Tensor) -> Tensor:
    """Non-zero weights per input column of a (out, in) matrix; shape (in,), float64."""
    return (weight != 0).sum(dim=0, dtype=torch.float64)


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
