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


@cache
def compiled() -> Any:
    """The compiled kernels (numba is imported and the cache loaded on first call)."""
    import numba

    @numba.njit(cache=True, nogil=True, inline="always")
    def row_terms(value, zero, one):  # pragma: no cover - compiled
        """(non-zero indicator, squared spike defect) of one input value."""
        magnitude = abs(value)
        indicator = one if magnitude > 0 else zero
        defect = magnitude - indicator
        return indicator, defect * defect

    @numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
    def linear_rows(x, step, col_nnz, zero, one):  # pragma: no cover - compiled
        """(effective ops, spike residual) of the rows ``x[:, step, :]`` of x (rows, steps,
        in); see :func:`linear_counts`.

        ``zero`` and ``one`` have the input's dtype, so the loop runs in it (a Python
        literal would promote float32 to float64 and halve the vector width). Rows are
        read four at a time: on a batch of time steps they lie far apart in memory, and
        four streams hide more memory latency than one. Each row-group sum is exact in
        ``col_nnz``'s dtype (the caller sees to it) and sums of non-negative terms do not
        depend on their order, so reassociating them (which vectorises the loop) changes
        nothing."""
        rows, cols = x.shape[0], x.shape[2]
        no_ops = col_nnz[0] - col_nnz[0]  # 0 in col_nnz's dtype
        effective = 0.0
        residual = 0.0
        i = 0
        while i + 4 <= rows:
            r0, r1, r2, r3 = x[i, step], x[i + 1, step], x[i + 2, step], x[i + 3, step]
            group_effective = no_ops
            group_residual = zero
            for j in range(cols):
                n0, d0 = row_terms(r0[j], zero, one)
                n1, d1 = row_terms(r1[j], zero, one)
                n2, d2 = row_terms(r2[j], zero, one)
                n3, d3 = row_terms(r3[j], zero, one)
                group_effective += (n0 + n1 + n2 + n3) * col_nnz[j]
                group_residual += d0 + d1 + d2 + d3
            effective += group_effective
            residual += group_residual
            i += 4
        while i < rows:
            row = x[i, step]
            row_effective = no_ops
            row_residual = zero
            for j in range(cols):
                nonzero, defect = row_terms(row[j], zero, one)
                row_effective += nonzero * col_nnz[j]
                row_residual += defect
            effective += row_effective
            residual += row_residual
            i += 1
        return effective, residual

    @numba.njit(cache=True, nogil=True)
    def neuron_step(output, after, before):  # pragma: no cover - compiled
        """(non-zero outputs, changed state elements) of one neuron-layer step, for arrays
        of any shape (``ravel`` is a view of a C-contiguous array, a copy otherwise); a
        state of another size than before (a fresh state) counts every element as changed."""
        values = output.ravel()
        nonzero = 0
        for k in range(values.shape[0]):
            nonzero += values[k] != 0
        if after.size != before.size:
            return nonzero, after.size
        now, then = after.ravel(), before.ravel()
        changed = 0
        for k in range(now.shape[0]):
            changed += now[k] != then[k]
        return nonzero, changed

    return linear_rows, neuron_step


def as_array(x: Tensor) -> np.ndarray | None:
    """A float32/float64 numpy view of a CPU tensor, or None (GPU, other dtypes, or a
    tensor numpy cannot view, such as one with the conjugate bit set)."""
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
    effective, residual = compiled()[0](x, step, col_nnz, *UNITS[x.dtype.char])
    return int(effective), float(residual)


def neuron_counts(output: np.ndarray, after: np.ndarray, before: np.ndarray) -> tuple[int, int]:
    """(non-zero elements of ``output``, elements where ``after`` differs from ``before``
    in flat order); use :data:`NO_STATE` for both states of a layer without a membrane."""
    nonzero, changed = compiled()[1](output, after, before)
    return int(nonzero), int(changed)
