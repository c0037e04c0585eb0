"""Numba kernels of the one-flip tabu search (general QUBO, CSR matrix, incremental deltas).

Cost ``E(x) = x^T Q x`` with symmetric Q. With the local field ``h_i = sum_{j != i} Q_ij x_j``
flipping variable i changes the cost by ``d_i = (1 - 2 x_i) (Q_ii + 2 h_i)``; a flip of k
updates ``h_j += (x_k' - x_k) Q_jk`` on the neighbours j of k only (O(degree)).

The search is the classic tabu search for QUBO (Glover, Kochenberger & Alidaee, "Adaptive
memory tabu search for binary quadratic programs", Manag. Sci. 44(3), 1998; Palubeckis,
"Multistart tabu search strategies for the unconstrained binary quadratic optimization
problem", Ann. Oper. Res. 131, 2004): best non-tabu flip each step, aspiration when a move
beats the best cost, random tenure, and a perturbed restart from the best solution after a
stall. Random numbers come from xorshift64* (Vigna 2016) held in the state array, so a run
is reproducible from its seed regardless of how the driver chunks it.

State ``st`` (int64): 0 iteration, 1 last improvement, 2 restarts, 3 rng state, 4 tenure,
5 stall limit, 6 perturbation flips.
"""

from __future__ import annotations

import numpy as np
from numba import njit

IT, LAST, RESTARTS, RNG, TENURE, STALL, PERTURB = range(7)


@njit(cache=True, nogil=True)
def _rand(st: np.ndarray) -> np.uint64:
    s = np.uint64(st[RNG])
    s ^= s >> np.uint64(12)
    s ^= s << np.uint64(25)
    s ^= s >> np.uint64(27)
    st[RNG] = np.int64(s)
    return (s * np.uint64(2685821657736338717)) >> np.uint64(11)


@njit(cache=True, nogil=True)
def local_fields(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, x: np.ndarray,
                 h: np.ndarray, diag: np.ndarray) -> float:
    """Fill ``h`` (off-diagonal local fields) and ``diag``; return the cost of ``x``."""
    n = x.shape[0]
    cost = 0.0
    for i in range(n):
        acc = 0.0
        d = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j == i:
                d += data[p]
            elif x[j]:
                acc += data[p]
        h[i] = acc
        diag[i] = d
        if x[i]:
            cost += d + acc
    return cost


@njit(cache=True, nogil=True)
def _flip(k: int, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, x: np.ndarray,
          h: np.ndarray) -> None:
    step = 1.0 if x[k] == 0 else -1.0
    x[k] = 1 - x[k]
    for p in range(indptr[k], indptr[k + 1]):
        j = indices[p]
        if j != k:
            h[j] += step * data[p]


@njit(cache=True, nogil=True)
def tabu_run(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, diag: np.ndarray,
             x: np.ndarray, h: np.ndarray, tabu: np.ndarray, best_x: np.ndarray,
             costs: np.ndarray, st: np.ndarray, n_iters: int, target: float) -> bool:
    """Run up to ``n_iters`` tabu steps in place; ``costs`` = [current, best].

    Returns True when the best cost reached ``target`` (then it stops early).
    """
    n = x.shape[0]
    eps = 1e-9
    cur = costs[0]
    best = costs[1]
    for _ in range(n_iters):
        it = st[IT]
        best_d = np.inf
        best_k = -1
        # Scan from a random offset; the first strict minimum wins (cheap random tie-break).
        start = np.int64(_rand(st) % np.uint64(n))
        for t in range(n):
            i = start + t
            if i >= n:
                i -= n
            d = (1.0 - 2.0 * x[i]) * (diag[i] + 2.0 * h[i])
            if d < best_d - eps and (tabu[i] <= it or cur + d < best - eps):
                best_d = d
                best_k = i
        if best_k < 0:  # everything tabu: release the oldest
            best_k = int(np.argmin(tabu))
            best_d = (1.0 - 2.0 * x[best_k]) * (diag[best_k] + 2.0 * h[best_k])
        _flip(best_k, indptr, indices, data, x, h)
        cur += best_d
        tabu[best_k] = it + st[TENURE] + np.int64(_rand(st) % np.uint64(st[TENURE] // 2 + 1))
        st[IT] = it + 1
        if cur < best - eps:
            best = cur
            best_x[:] = x
            st[LAST] = it + 1
            if best <= target + eps:
                costs[0] = cur
                costs[1] = best
                return True
        elif it + 1 - st[LAST] > st[STALL]:
            # Perturbed restart from the best solution: flip a few random variables.
            x[:] = best_x
            for _r in range(st[PERTURB]):
                k = np.int64(_rand(st) % np.uint64(n))
                x[k] = 1 - x[k]
            cur = local_fields(indptr, indices, data, x, h, diag)
            tabu[:] = 0
            st[LAST] = it + 1
            st[RESTARTS] += 1
    costs[0] = cur
    costs[1] = best
    return False
