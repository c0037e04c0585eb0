"""Identity of an instance by its content, never its file name.

A **graph fingerprint** (an MIS instance: a DIMACS graph, or a ``.qs``/MQLib QUBO of MIS form,
which reads back as its graph) is ``graph:n=<vertices>:m=<edges>:sha256=<hex>``, the hash of
the canonical edge list: every edge once as ``"u v\\n"`` with 1-based ``u < v``, sorted by
``(u, v)``, in ASCII. The same graph written in another order, with ``v u`` for ``u v``, in
another format (DIMACS or QOBLIB's ``.qs``) or under another name has the same fingerprint; a
graph with one edge more or less, or its vertices renumbered, has another.

A **QUBO fingerprint** (any other QUBO) is ``qubo:n=<variables>:nnz=<entries>:sha256=<hex>``,
the hash of the canonical coefficient list: the upper triangle of the symmetric, minimised
``Q`` (``x^T Q x + offset``, :class:`~.library.Instance`), each non-zero entry once as
``"i j v\\n"`` (1-based ``i <= j``, ``v`` written by Python's ``repr`` of the float: the
shortest text that reads back to the same double), sorted by ``(i, j)``, then one line
``"offset c\\n"``.
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
    order = np.lexsort((hi, lo))
    digest = hashlib.sha256()
    for u, v in zip(lo[order].tolist(), hi[order].tolist()):
        digest.update(f"{u} {v}\n".encode("ascii"))
    return Fingerprint("graph", int(n), int(len(e)), digest.hexdigest())


def qubo_fingerprint(Q: Any, offset: float = 0.0) -> Fingerprint:
    """The fingerprint of the symmetric QUBO ``Q`` (minimise ``x^T Q x + offset``)."""
    upper = sp.triu(sp.csr_matrix(Q), k=0).tocoo()
    keep = upper.data != 0
    rows, cols, vals = upper.row[keep] + 1, upper.col[keep] + 1, upper.data[keep]
    order = np.lexsort((cols, rows))
    digest = hashlib.sha256()
    for i, j, v in zip(rows[order].tolist(), cols[order].tolist(), vals[order].tolist()):
        digest.update(f"{i} {j} {float(v)!r}\n".encode("ascii"))
    digest.update(f"offset {float(offset)!r}\n".encode("ascii"))
    return Fingerprint("qubo", int(Q.shape[0]), int(keep.sum()), digest.hexdigest())


def instance_fingerprint(instance: Any) -> Fingerprint:
    """The fingerprint of a :class:`~.library.Instance`: its graph's for an MIS instance
    (DIMACS and ``.qs`` forms of one graph agree), else its QUBO's."""
    if instance.edges is not None:
        return graph_fingerprint(instance.n, instance.edges)
    return qubo_fingerprint(instance.Q, instance.offset)
