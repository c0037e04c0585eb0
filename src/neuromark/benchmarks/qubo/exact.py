"""Exact solvers: maximum independent set by branch and bound, and brute force for tiny QUBOs.

The MIS optimum of the workload QUBO is ``-alpha(G)`` (the edge penalty 8 > 1 makes every
optimum an independent set). :func:`exact_mis` is a branch and bound on vertex bitsets
(Python ints): vertices of degree 0 or 1 are taken greedily (always safe: Xiao & Nagamochi,
"Exact algorithms for maximum independent set", Inf. Comput. 255, 2017, reduction rules),
otherwise it branches on a vertex of maximum degree (take it and drop its neighbours, or
drop it), pruning with a greedy clique-cover upper bound (an independent set has at most
one vertex per clique). Fast below ~100 nodes at the workload densities; exponential in
general.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from neuromark.errors import ConfigError


def _adjacency(n: int, edges: np.ndarray) -> list[int]:
    adj = [0] * n
    for u, v in edges.tolist():
        adj[u] |= 1 << v
        adj[v] |= 1 << u
    return adj


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _clique_cover_bound(cand: int, adj: list[int]) -> int:
    """Number of cliques in a greedy clique cover of ``cand`` (an upper bound on alpha)."""
    cliques = 0
    rest = cand
    while rest:
        low = rest & -rest
        v = low.bit_length() - 1
        clique_common = adj[v] & rest  # vertices adjacent to every member so far
        rest ^= low
        while clique_common:
            w_low = clique_common & -clique_common
            w = w_low.bit_length() - 1
            rest &= ~w_low
            clique_common &= adj[w] & ~w_low
        cliques += 1
    return cliques


def exact_mis(n: int, edges: np.ndarray, max_n: int = 200) -> np.ndarray:
    """A maximum independent set as an int8 indicator vector of shape (n,).

    ``edges``: int array (m, 2). Raises :class:`ConfigError` for n > ``max_n`` (the search
    is exponential; raise ``max_n`` knowingly).
    """
    if n > max_n:
        raise ConfigError(f"exact_mis: n = {n} is above max_n = {max_n}; the exact search is "
                          f"exponential, use a heuristic solver or raise max_n")
    adj = _adjacency(n, np.asarray(edges).reshape(-1, 2))
    best: list[int] = [0, 0]  # size, mask

    def search(cand: int, chosen: int, size: int) -> None:
        # Reductions: take every vertex of degree <= 1 within cand.
        changed = True
        while changed:
            changed = False
            for v in _bits(cand):
                if not (cand >> v) & 1:
                    continue
                nb = adj[v] & cand
                if nb & (nb - 1) == 0:  # degree 0 or 1
                    chosen |= 1 << v
                    size += 1
                    cand &= ~(nb | (1 << v))
                    changed = True
        if not cand:
            if size > best[0]:
                best[0], best[1] = size, chosen
            return
        if size + _clique_cover_bound(cand, adj) <= best[0]:
            return
        v = max(_bits(cand), key=lambda u: bin(adj[u] & cand).count("1"))
        search(cand & ~(adj[v] | (1 << v)), chosen | (1 << v), size + 1)
        search(cand & ~(1 << v), chosen, size)

    search((1 << n) - 1, 0, 0)
    x = np.zeros(n, dtype=np.int8)
    x[_bits(best[1])] = 1
    return x


def brute_force(Q: Any, max_n: int = 22) -> tuple[np.ndarray, float]:
    """Minimise ``x^T Q x`` over all 2^n vectors (dense or sparse Q, n <= ``max_n``).

    Returns (x int8 of shape (n,), cost). For tests of heuristic solvers on general QUBOs.
    """
    q = np.asarray(Q.todense() if hasattr(Q, "todense") else Q, dtype=np.float64)
    n = q.shape[0]
    if n > max_n:
        raise ConfigError(f"brute_force: n = {n} is above max_n = {max_n}")
    best_cost, best_x = np.inf, np.zeros(n, dtype=np.int8)
    block = min(n, 16)
    low = np.array(list(itertools.product((0, 1), repeat=block)), dtype=np.float64)[:, ::-1]
    for high in itertools.product((0, 1), repeat=n - block):
        xs = np.concatenate([low, np.tile(np.array(high[::-1], dtype=np.float64),
                                          (len(low), 1))], axis=1)
        costs = np.einsum("ki,ij,kj->k", xs, q, xs)
        k = int(np.argmin(costs))
        if costs[k] < best_cost - 1e-12:
            best_cost, best_x = float(costs[k]), xs[k].astype(np.int8)
    return best_x, best_cost
