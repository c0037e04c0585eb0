"""Numba kernels of simulated annealing for general QUBO (CSR matrix, incremental deltas).

Metropolis single-flip dynamics (Kirkpatrick, Gelatt & Vecchi, "Optimization by simulated
annealing", Science 220, 1983) in sequential sweeps, with the local fields of
:mod:`.tabu_kernel`: flipping i changes ``x^T Q x`` by ``d_i = (1 - 2 x_i)(Q_ii + 2 h_i)``
and a flip updates only the neighbours' fields. The inverse temperature follows a geometric
schedule from ``beta_from`` to ``beta_to`` within a call; the driver chains calls so that the
schedule spans the wall-clock budget.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from neuromark.benchmarks.qubo.solvers.tabu_kernel import _flip, _rand


@njit(cache=True, nogil=True)
def anneal(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, diag: np.ndarray,
           x: np.ndarray, h: np.ndarray, best_x: np.ndarray, costs: np.ndarray, st: np.ndarray,
           beta_from: float, beta_to: float, n_sweeps: int, target: float) -> bool:
    """``n_sweeps`` Metropolis sweeps in place; ``costs`` = [current, best]; True at target."""
    n = x.shape[0]
    cur = costs[0]
    best = costs[1]
    ratio = (beta_to / beta_from) ** (1.0 / max(n_sweeps - 1, 1))
    beta = beta_from
    for _s in range(n_sweeps):
        for i in range(n):
            d = (1.0 - 2.0 * x[i]) * (diag[i] + 2.0 * h[i])
            if d > 0.0:
                u = (_rand(st) >> np.uint64(11)) * (1.0 / 2.0**42)
                if u >= math.exp(-beta * d):
                    continue
            _flip(i, indptr, indices, data, x, h)
            cur += d
            if cur < best - 1e-9:
                best = cur
                best_x[:] = x
                if best <= target + 1e-9:
                    costs[0] = cur
                    costs[1] = best
                    return True
        beta *= ratio
    costs[0] = cur
    costs[1] = best
    return False


@njit(cache=True, nogil=True)
def descend(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, diag: np.ndarray,
            x: np.ndarray, h: np.ndarray, costs: np.ndarray) -> None:
    """Greedy one-flip descent to a local minimum (sweeps until no flip improves)."""
    n = x.shape[0]
    cur = costs[0]
    improved = True
    while improved:
        improved = False
        for i in range(n):
            d = (1.0 - 2.0 * x[i]) * (diag[i] + 2.0 * h[i])
            if d < -1e-9:
                _flip(i, indptr, indices, data, x, h)
                cur += d
                improved = True
    costs[0] = cur
