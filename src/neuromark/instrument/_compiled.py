"""The numba kernels behind :mod:`neuromark.instrument.kernels` (imported on first use).

They live at module level so that numba's on-disk cache (``cache=True``) can reuse them
between processes; kernels defined inside a function, or calling one defined there, are
recompiled by every process.
"""

from __future__ import annotations

import numpy as np

from neuromark._numba import numba


@numba.njit(cache=True, nogil=True, inline="always")
def row_terms(value, zero, one):  # pragma: no cover - compiled
    """(non-zero indicator, squared spike defect) of one input value."""
    magnitude = abs(value)
    indicator = one if magnitude > 0 else zero
    defect = magnitude - indicator
    return indicator, defect * defect


@numba.njit(cache=True, nogil=True, inline="always")
def row_sums(row, cols, col_nnz, zero, one, no_ops):  # pragma: no cover - compiled
    """(effective ops, squared spike residual) of one input row: its non-zero inputs
    weighted by ``col_nnz``, and the sum of :func:`row_terms`' defects."""
    row_effective = no_ops
    row_residual = zero
    for j in range(cols):
        nonzero, defect = row_terms(row[j], zero, one)
        row_effective += nonzero * col_nnz[j]
        row_residual += defect
    return row_effective, row_residual


@numba.njit(cache=True, nogil=True, inline="always")
def row_done(effective, defect, row, group, per_sample, sample):  # pragma: no cover
    """Add one row's (effective ops, spike residual) to its sample's running ``sample``
    (effective, residual, ACs, MACs); the sample's ops become ACs or MACs with its last
    row (row + 1 a multiple of ``group``, the rows per sample), NaN ones neither. Samples
    are also written to ``per_sample`` (samples, 2) when it has rows."""
    s_effective, s_residual, acs, macs = sample
    s_effective += effective
    s_residual += defect
    if (row + 1) % group == 0:
        if per_sample.shape[0] > 0:
            per_sample[row // group, 0] = s_effective
            per_sample[row // group, 1] = s_residual
        if s_residual == 0:
            acs += s_effective
        elif s_residual > 0:
            macs += s_effective
        s_effective = 0.0
        s_residual = 0.0
    return s_effective, s_residual, acs, macs


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def linear_rows(x, step, col_nnz, zero, one, group, per_sample):  # pragma: no cover - compiled
    """(effective ops, spike residual, per-sample ACs, per-sample MACs) of the rows
    ``x[:, step, :]`` of x (rows, steps, in), each ``group`` successive rows one sample;
    see :func:`linear_counts`.

    ``zero`` and ``one`` have the input's dtype, so the loop runs in it (a Python
    literal would promote float32 to float64 and halve the vector width). Rows are
    read four at a time: on a batch of time steps they lie far apart in memory, and
    four streams hide more memory latency than one. Each row-group sum is exact in
    ``col_nnz``'s dtype (the caller sees to it) and sums of non-negative terms do not
    depend on their order, so reassociating them (which vectorises the loop) changes
    nothing. The pass keeps each row's residual; only when the call's samples are
    of both kinds (some binary, some not), or ``per_sample`` has rows, does a second
    pass (:func:`sample_rows`) split the effective ops by sample."""
    rows, cols = x.shape[0], x.shape[2]
    no_ops = col_nnz[0] - col_nnz[0]  # 0 in col_nnz's dtype
    effective = 0.0
    residual = 0.0
    binary = 0  # samples whose residual is 0, and whose residual is > 0
    other = 0
    running = 0.0
    i = 0
    while i + 4 <= rows:
        r0, r1, r2, r3 = x[i, step], x[i + 1, step], x[i + 2, step], x[i + 3, step]
        group_effective = no_ops
        q0 = q1 = q2 = q3 = zero
        for j in range(cols):
            n0, d0 = row_terms(r0[j], zero, one)
            n1, d1 = row_terms(r1[j], zero, one)
            n2, d2 = row_terms(r2[j], zero, one)
            n3, d3 = row_terms(r3[j], zero, one)
            group_effective += (n0 + n1 + n2 + n3) * col_nnz[j]
            q0 += d0
            q1 += d1
            q2 += d2
            q3 += d3
        effective += group_effective
        residual += (q0 + q1) + (q2 + q3)
        for k, q in enumerate((q0, q1, q2, q3)):
            running += q
            if (i + k + 1) % group == 0:
                binary += running == 0
                other += running > 0
                running = 0.0
        i += 4
    while i < rows:
        row_effective, row_residual = row_sums(x[i, step], cols, col_nnz, zero, one, no_ops)
        effective += row_effective
        residual += row_residual
        running += row_residual
        if (i + 1) % group == 0:
            binary += running == 0
            other += running > 0
            running = 0.0
        i += 1
    if per_sample.shape[0] == 0 and (binary == 0 or other == 0):
        # one kind only (NaN samples, if any, fail the run): the call's split
        return effective, residual, effective if other == 0 else 0.0, \
            effective if binary == 0 else 0.0
    acs, macs = sample_rows(x, step, col_nnz, zero, one, group, per_sample)
    return effective, residual, acs, macs


@numba.njit(cache=True, nogil=True)
def sample_rows(x, step, col_nnz, zero, one, group, per_sample):  # pragma: no cover
    """(ACs, MACs) of the rows ``x[:, step, :]`` split per sample of ``group`` rows (one
    row at a time; see :func:`row_done`)."""
    rows, cols = x.shape[0], x.shape[2]
    no_ops = col_nnz[0] - col_nnz[0]
    sample = (0.0, 0.0, 0.0, 0.0)
    for i in range(rows):
        row_effective, row_residual = row_sums(x[i, step], cols, col_nnz, zero, one, no_ops)
        sample = row_done(row_effective, row_residual, i, group, per_sample, sample)
    return sample[2], sample[3]

#: Elements counted per float32 partial sum: far below 2**24, so every partial is exact.
CHUNK = 1 << 16


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def count_nonzero(values):  # pragma: no cover - compiled
    """Non-zero elements of a 1-d array, summed as float32 per chunk (exact; the loop
    vectorises) and as an integer over chunks. Chunks are slices indexed from 0, which
    numba knows are in bounds; an index from ``range(start, end)`` would not vectorise."""
    total = 0
    for start in range(0, values.shape[0], CHUNK):
        chunk = values[start:start + CHUNK]
        partial = np.float32(0)
        for k in range(chunk.shape[0]):
            partial += np.float32(1) if chunk[k] != 0 else np.float32(0)
        total += int(partial)
    return total


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def count_differences(now, then):  # pragma: no cover - compiled
    """Elements where two equally long 1-d arrays differ (NaN never equals itself); summed
    like :func:`count_nonzero`."""
    total = 0
    for start in range(0, now.shape[0], CHUNK):
        a, b = now[start:start + CHUNK], then[start:start + CHUNK]
        partial = np.float32(0)
        for k in range(a.shape[0]):
            partial += np.float32(1) if a[k] != b[k] else np.float32(0)
        total += int(partial)
    return total


@numba.njit(cache=True, nogil=True)
def neuron_step(output, after, before):  # pragma: no cover - compiled
    """(non-zero outputs, changed state elements) of one neuron-layer step, for arrays
    of any shape (``ravel`` is a view of a C-contiguous array, a copy otherwise); a
    state of another size than before (a fresh state) counts every element as changed."""
    nonzero = count_nonzero(output.ravel())
    if after.size != before.size:
        return nonzero, after.size
    return nonzero, count_differences(after.ravel(), before.ravel())


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def step_rows(x, col_nnz, zero, one, out):  # pragma: no cover - compiled
    """Every time step's counts of a whole batch ``x`` (B, T, in) at once, into ``out``
    (T, 4) float64: per step t, summed over the rows ``x[:, t]`` (one row per sample),
    the effective ops, the spike residual, and the effective ops of the rows whose residual
    is 0 (ACs) and > 0 (MACs); a NaN row is neither (its step's residual is NaN). The
    same sums as :func:`linear_rows` with ``group`` 1, one step at a time: each row's sums
    are exact in ``col_nnz``'s dtype and sums of exact integers do not depend on order.
    Samples are read in memory order, one after another."""
    batch, steps, cols = x.shape
    no_ops = col_nnz[0] - col_nnz[0]
    out[:] = 0.0
    for b in range(batch):
        for t in range(steps):
            effective, residual = row_sums(x[b, t], cols, col_nnz, zero, one, no_ops)
            out[t, 0] += effective
            out[t, 1] += residual
            if residual == 0:
                out[t, 2] += effective
            elif residual > 0:
                out[t, 3] += effective
