"""Identity of an instance by its content, never its file name.

A **graph fingerprint** (an MIS instance: a DIMACS graph, or a ``.qs``/MQLib QUBO of MIS form,
which reads back as its graph) is ``graph:n=<vertices>:m=<edges>:sha256=<hex>``, the hash of
the canonical edge list: every edge once as the pair ``(u, v)`` with 1-based ``u < v``, sorted
by ``(u, v)``, each number a little-endian signed 64-bit integer (16 bytes per edge; binary,
so that a graph of millions of edges hashes in about a second). The same graph written in
another order, with ``v u`` for ``u v``, in another format (DIMACS or QOBLIB's ``.qs``) or under
another name has the same fingerprint; a graph with one edge more or less, or its vertices
renumbered, has another.

A **QUBO fingerprint** (any other QUBO) is ``qubo:n=<variables>:nnz=<entries>:sha256=<hex>``,
the hash of the canonical coefficient list: the upper triangle of the symmetric, minimised
``Q`` (``x^T Q x + offset``, :class:`~.library.Instance`), each non-zero entry once as
``(i, j, v)`` (1-based ``i <= j`` as little-endian int64, ``v`` as a little-endian IEEE float64),
sorted by ``(i, j)``, then the offset as a float64 (``-0.0`` written as ``0.0``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

#: What a fingerprint string looks like.
PATTERN = re.compile(r"^(graph:n=\d+:m=\d+|qubo:n=\d+:nnz=\d+):sha256=[0-9a-f]{64}$")


@dataclass(frozen=True)
class Fingerprint:
    """An instance's identity: ``kind`` (``graph`` or ``qubo``), its size ``n``, its count
    ``m`` (edges, or upper-triangle entries of a QUBO) and the SHA-256 of its canonical
    list (see the module docstring)."""

    kind: str
    n: int
    m: int
    sha256: str

    def __str__(self) -> str:
        count = "m" if self.kind == "graph" else "nnz"
        return f"{self.kind}:n={self.n}:{count}={self.m}:sha256={self.sha256}"

    def describe(self) -> str:
        """``34 vertices, 78 edges`` (or ``N variables, K entries``) in words."""
        if self.kind == "graph":
            return f"{self.n} vertices, {self.m} edges"
        return f"{self.n} variables, {self.m} coefficients"

    @classmethod
    def parse(cls, text: str) -> Fingerprint:
        """The fingerprint a string of :meth:`__str__` names; ValueError otherwise."""
        if not PATTERN.match(text):
            raise ValueError(f"not an instance fingerprint: {text!r} (expected "
                             f"graph:n=N:m=M:sha256=HEX or qubo:n=N:nnz=K:sha256=HEX)")
        head, n, m, digest = text.split(":")
        return cls(head, int(n.split("=")[1]), int(m.split("=")[1]), digest.split("=")[1])


def graph_fingerprint(n: int, edges: np.ndarray) -> Fingerprint:
    """The fingerprint of an undirected graph of ``n`` vertices with 0-based ``edges``
    (shape (m, 2), any order, either orientation)."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    lo, hi = np.minimum(e[:, 0], e[:, 1]) + 1, np.maximum(e[:, 0], e[:, 1]) + 1
    base = int(max(n, int(hi.max()) if hi.size else 0)) + 1  # one sortable key per edge
    keys = np.sort(lo * base + hi)
    pairs = np.stack([keys // base, keys % base], axis=1).astype("<i8")
    return Fingerprint("graph", int(n), int(len(e)), hashlib.sha256(pairs.tobytes()).hexdigest())


def qubo_fingerprint(Q: Any, offset: float = 0.0) -> Fingerprint:
    """The fingerprint of the symmetric QUBO ``Q`` (minimise ``x^T Q x + offset``)."""
    upper = sp.triu(sp.csr_matrix(Q), k=0).tocoo()
    keep = upper.data != 0
    rows, cols, vals = upper.row[keep] + 1, upper.col[keep] + 1, upper.data[keep]
    order = np.lexsort((cols, rows))
    entries = np.zeros(len(order), dtype=[("i", "<i8"), ("j", "<i8"), ("v", "<f8")])
    entries["i"], entries["j"], entries["v"] = rows[order], cols[order], vals[order]
    digest = hashlib.sha256(entries.tobytes())
    digest.update(np.array([float(offset) + 0.0], dtype="<f8").tobytes())
    return Fingerprint("qubo", int(Q.shape[0]), int(keep.sum()), digest.hexdigest())


def instance_fingerprint(instance: Any) -> Fingerprint:
    """The fingerprint of a :class:`~.library.Instance`: its graph's for an MIS instance
    (DIMACS and ``.qs`` forms of one graph agree), else its QUBO's."""
    if instance.edges is not None:
        return graph_fingerprint(instance.n, instance.edges)
    return qubo_fingerprint(instance.Q, instance.offset)
