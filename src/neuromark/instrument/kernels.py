"""Fused one-pass counting kernels (numba) for the per-call probes on CPU tensors.

Between two layers of a running network the caches are cold for anything else: on the
reference network each extra torch op or binding call in a hook costs 5-15 us, however
small its tensor. So a probe does one call per layer and step: a kernel that reads the
layer's input or output once, while the layer has just left it in cache, and returns
exact integers. numba is imported on first use (``import neuromark`` stays light) and
``cache=True`` keeps the compiled code on disk between runs.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from torch import Tensor

#: (0, 1) in each input dtype (by numpy type character: float32, float64); they type the
#: kernels' per-row sums. Keys are characters because comparing dtypes is slower.
UNITS = {"f": (np.float32(0), np.float32(1)), "d": (np.float64(0), np.float64(1))}
#: An empty state, for neuron layers without a membrane.
NO_STATE = np.zeros(0, np.float32)
#: The Linear kernel's ``per_sample`` operand when per-sample values are not wanted.
NO_SAMPLES = np.zeros((0, 2), np.float64)


@cache
def compiled() -> Any:
    """The compiled kernels (numba is imported and its cache loaded on first call)."""
    from neuromark.instrument import _compiled

    return _compiled.linear_rows, _compiled.neuron_step, _compiled.step_rows


def as_array(x: Tensor) -> np.ndarray | None:
    """A float32/float64 numpy view of a CPU tensor, or None (GPU, other dtypes, or a
    tensor numpy cannot view, such as one with the conjugate bit set)."""
    if not x.is_cpu or x.requires_grad:  # numpy() would raise: ~25 us per call, per step
        return None
    try:
        array = x.numpy()
    except (TypeError, RuntimeError):
        return None
    return array if array.dtype.char in UNITS else None


def column_counts_array(col_nnz: Tensor, row_sum_bound: int) -> np.ndarray:
    """A weight's non-zero counts per input column as the Linear kernel's operand: float32
    when 4 * ``row_sum_bound`` (in * out bounds one row's sum; the kernel sums rows four
    at a time) is exact in float32, else float64."""
    dtype = np.float32 if 4 * row_sum_bound < 2**24 else np.float64
    return col_nnz.detach().cpu().numpy().astype(dtype)


def linear_counts(x: np.ndarray, step: int, col_nnz: np.ndarray) -> tuple[int, float]:
    """One pass over the Linear input ``x[:, step, :]`` of ``x`` (rows, steps, in).

    Returns (effective ops, residual): effective ops = sum over rows and columns j of
    [x != 0] * col_nnz[j], an exact integer; residual = sum (|x| - [x != 0])**2, which is
    0 exactly when every value is -1, 0 or 1 (every term is >= 0 and a non-zero term is
    at least 2**-48 in float32, whose spacing near 1 is 2**-24, so the sum cannot vanish)
    and NaN when the input holds NaN.
    """
    effective, residual, _, _ = compiled()[0](x, step, col_nnz, *UNITS[x.dtype.char], 1,
                                              NO_SAMPLES)
    return int(effective), float(residual)


def linear_sample_counts(x: np.ndarray, step: int, col_nnz: np.ndarray,
                         group: int) -> tuple[int, int, np.ndarray]:
    """The per-sample MAC/AC split of the same pass, each ``group`` successive rows of
    ``x[:, step, :]`` one sample: (ACs, MACs, per-sample (effective, residual) (S, 2)).
    A sample's effective ops are ACs when its residual is 0, MACs when it is positive."""
    rows = x.shape[0]
    if group < 1 or rows % group:
        raise ValueError(f"{rows} rows do not split into samples of {group} rows")
    per_sample = np.zeros((rows // group, 2), np.float64)
    _, _, acs, macs = compiled()[0](x, step, col_nnz, *UNITS[x.dtype.char], group, per_sample)
    return int(acs), int(macs), per_sample


def neuron_counts(output: np.ndarray, after: np.ndarray, before: np.ndarray) -> tuple[int, int]:
    """(non-zero elements of ``output``, elements where ``after`` differs from ``before``
    in flat order); use :data:`NO_STATE` for both states of a layer without a membrane."""
    nonzero, changed = compiled()[1](output, after, before)
    return int(nonzero), int(changed)
