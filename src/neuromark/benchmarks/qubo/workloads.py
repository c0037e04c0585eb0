"""Maximum-independent-set (MIS) QUBO workloads, identical to NeuroBench's.

Graph: ``networkx.gnm_random_graph(n, m=int(0.5 * density * n**2), seed=seed)``; Q is
symmetric with -1 on the diagonal and +4 at (u, v) and (v, u) for each edge, so that
``x^T Q x = -|S| + 8 * (edges inside S)`` (NeuroBench system track, QUBO workload;
Yik et al., "The neurobench framework for benchmarking neuromorphic computing algorithms
and systems", Nat. Commun. 2025).

The edges are drawn with the exact random stream of ``gnm_random_graph`` (Python's
Mersenne Twister, ``choice`` = ``_randbelow`` by rejection on ``getrandbits(k)``), but
vectorised with numpy's MT19937 seeded from the same state, so that a 5000-node 25% graph
(3.1 million edges) loads in about a second without building a networkx graph. Tests check
the edge sets against ``networkx`` itself.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from neuromark.errors import ConfigError, DataError, require

EDGE_PENALTY = 4.0


def num_edges(n: int, density: float) -> int:
    """Edges of the (n, density) workload: ``int(0.5 * density * n**2)``, capped at n(n-1)/2."""
    return min(int(0.5 * density * n**2), n * (n - 1) // 2)


def _check_params(n: int, density: float, seed: int) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ConfigError(f"workload size n must be an integer >= 1, got {n!r}")
    if not isinstance(density, (int, float)) or not (0.0 < float(density) <= 1.0) \
            or not math.isfinite(density):
        raise ConfigError(f"workload density must be in (0, 1], got {density!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"workload seed must be an integer >= 0, got {seed!r}")


def gnm_edges(n: int, m: int, seed: int, chunk_attempts: int = 1 << 20,
              max_flag_pairs: int = 1 << 26) -> np.ndarray:
    """Edges of ``networkx.gnm_random_graph(n, m, seed=seed)`` in insertion order.

    Returns an int32 array of shape (m', 2) with m' = m, or all pairs when m reaches
    n(n-1)/2 (networkx then returns the complete graph), or none for n == 1. Attempts are
    replayed in chunks of ``chunk_attempts`` (u, v) draws, keeping memory at a few tens of MB
    beyond the result (plus one byte per node pair while n^2 <= ``max_flag_pairs``, else a
    sorted key array).
    """
    max_edges = n * (n - 1) / 2.0
    if n == 1 or m <= 0:
        return np.zeros((0, 2), dtype=np.int32)
    if m >= max_edges:
        u, v = np.triu_indices(n, k=1)
        return np.stack([u, v], axis=1).astype(np.int32)
    state = random.Random(seed).getstate()[1]
    bitgen = np.random.MT19937()
    bitgen.state = {"bit_generator": "MT19937",
                    "state": {"key": np.array(state[:624], dtype=np.uint32), "pos": state[624]}}
    k = n.bit_length()  # random.choice -> _randbelow(n): getrandbits(k) until < n
    accept = n / float(1 << k)
    accepted: list[np.ndarray] = []  # edge keys u * n + v (u < v), in insertion order
    # Keys drawn so far: a flag per pair when that fits in 64 MB, else a sorted array.
    flags = np.zeros(n * n, dtype=bool) if n * n <= max_flag_pairs else None
    seen = np.zeros(0, dtype=np.int64)
    total = 0
    pending = np.zeros(0, dtype=np.int64)  # an odd choice left over from the last chunk
    while total < m:
        # Expected attempts to collect the missing edges (coupon collector), plus slack.
        want = max_edges * (math.log1p(-total / max_edges) - math.log1p(-m / max_edges))
        attempts = min(int(want * n / (n - 1) * 1.05) + 1024, chunk_attempts)
        raw = bitgen.random_raw(int(2 * attempts / accept) + 64)
        choices = (raw >> np.uint64(32 - k)).astype(np.int64)
        del raw
        choices = np.concatenate([pending, choices[choices < n]])
        usable = len(choices) // 2 * 2
        pending = choices[usable:]
        u, v = choices[:usable:2], choices[1:usable:2]
        loop = u != v
        key = np.minimum(u, v)[loop] * n + np.maximum(u, v)[loop]
        del choices, u, v, loop
        _, first = np.unique(key, return_index=True)  # first occurrence within the chunk
        key = key[np.sort(first)]
        if flags is not None:  # drop edges drawn in earlier chunks
            key = key[~flags[key]]
        elif seen.size:
            order = np.argsort(key, kind="stable")
            pos = np.minimum(np.searchsorted(seen, key[order]), seen.size - 1)
            fresh = np.empty(len(key), dtype=bool)
            fresh[order] = seen[pos] != key[order]
            key = key[fresh]
        key = key[: m - total]
        accepted.append(key)
        total += len(key)
        if total < m:
            if flags is not None:
                flags[key] = True
            else:
                seen = np.sort(np.concatenate([seen, key]))  # disjoint: no dedupe needed
    keys = np.concatenate(accepted)
    return np.stack([keys // n, keys % n], axis=1).astype(np.int32)


def mis_qubo(n: int, edges: np.ndarray) -> sp.csr_matrix:
    """The MIS QUBO of a graph: CSR (n, n), symmetric, -1 diagonal, +4 per edge entry."""
    u, v = edges[:, 0].astype(np.int32), edges[:, 1].astype(np.int32)
    diag = np.arange(n, dtype=np.int32)
    rows = np.concatenate([diag, u, v])
    cols = np.concatenate([diag, v, u])
    data = np.concatenate([np.full(n, -1.0), np.full(2 * len(u), EDGE_PENALTY)])
    q = sp.csr_matrix((data, (rows, cols)), shape=(n, n))
    q.sort_indices()
    return q


@dataclass
class Workload:
    """One MIS workload.

    Attributes:
        Q: scipy.sparse CSR (n, n), symmetric QUBO matrix; cost = x^T Q x.
        edges: int32 (m, 2), edges in the order networkx inserts them.
        n, density, seed: the workload parameters.
        label: a library instance's name ("" for a generated workload).
    """

    Q: sp.csr_matrix
    edges: np.ndarray
    n: int
    density: float
    seed: int
    _graph: Any = field(default=None, repr=False)
    label: str = ""

    @property
    def graph(self) -> Any:
        """The graph as a ``networkx.Graph`` (built on first use; needs the qubo extra)."""
        if self._graph is None:
            nx = require("networkx", "qubo")
            graph = nx.Graph()
            graph.add_nodes_from(range(self.n))
            graph.add_edges_from(map(tuple, self.edges.tolist()))
            self._graph = graph
        return self._graph

    @property
    def name(self) -> str:
        """``mis-<n>-<density>-s<seed>``, e.g. ``mis-1000-0.05-s0``, or the ``label`` of a
        library instance (``C125-9``)."""
        return self.label or f"mis-{self.n}-{self.density:g}-s{self.seed}"


def mis_workload(n: int, density: float, seed: int = 0) -> Workload:
    """The NeuroBench MIS workload (n nodes, edge density, graph seed).

    Example:
        >>> w = mis_workload(100, 0.05, 0)
        >>> w.Q.nnz - w.n  # two entries per edge
        500
    """
    _check_params(n, density, seed)
    n, seed, density = int(n), int(seed), float(density)
    edges = gnm_edges(n, num_edges(n, density), seed)
    return Workload(Q=mis_qubo(n, edges), edges=edges, n=n, density=density, seed=seed)


def check_qubo(Q: Any, name: str = "Q") -> sp.csr_matrix:
    """Validate a QUBO matrix and return it as float64 CSR.

    Raises :class:`DataError` for a non-square, non-symmetric or non-finite matrix.
    """
    if not sp.issparse(Q):
        arr = np.asarray(Q)
        if arr.ndim != 2:
            raise DataError(f"{name} must be a square 2-D matrix, got shape {arr.shape}")
        Q = sp.csr_matrix(arr)
    Q = sp.csr_matrix(Q, dtype=np.float64)
    if Q.shape[0] != Q.shape[1]:
        raise DataError(f"{name} must be square, got shape {Q.shape}")
    if Q.shape[0] < 1:
        raise DataError(f"{name} must have at least one variable, got shape {Q.shape}")
    if not np.all(np.isfinite(Q.data)):
        bad = np.flatnonzero(~np.isfinite(Q.data))[0]
        row = int(np.searchsorted(Q.indptr, bad, side="right") - 1)
        raise DataError(f"{name} has a non-finite entry at ({row}, {int(Q.indices[bad])}): "
                        f"{Q.data[bad]}")
    diff = abs(Q - Q.T)
    if diff.nnz and diff.max() > 1e-9 * max(1.0, abs(Q).max()):
        coo = diff.tocoo()
        i = int(np.argmax(coo.data))
        raise DataError(f"{name} must be symmetric; Q[{coo.row[i]}, {coo.col[i]}] != "
                        f"Q[{coo.col[i]}, {coo.row[i]}] (upper-triangular input? use Q + Q.T "
                        f"with halved off-diagonal entries)")
    Q.sort_indices()
    return Q
