"""QUBO cost ``x^T Q x`` and the independent-set check."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from neuromark.errors import ModelOutputError


def as_solution(x: Any, n: int, who: str = "solution") -> np.ndarray:
    """Check that ``x`` is a binary vector of length ``n``; return it as int8.

    Raises :class:`ModelOutputError` naming ``who`` for a wrong length or non-binary values.
    """
    arr = np.asarray(x).reshape(-1) if np.ndim(x) <= 1 else np.asarray(x)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ModelOutputError(f"{who}: expected a binary vector of length {n}, got shape "
                               f"{np.shape(x)}")
    if arr.size and not np.all((arr == 0) | (arr == 1)):
        bad = int(np.flatnonzero((arr != 0) & (arr != 1))[0])
        raise ModelOutputError(f"{who}: entries must be 0 or 1; x[{bad}] = {arr[bad].item()!r}")
    return arr.astype(np.int8)


def energy(Q: Any, x: Any) -> float:
    """The QUBO cost ``x^T Q x`` of a binary vector ``x`` (length n) for Q of shape (n, n).

    Example:
        >>> energy(np.array([[-1.0, 4.0], [4.0, -1.0]]), [1, 0])
        -1.0
    """
    n = Q.shape[0]
    xv = as_solution(x, n).astype(np.float64)
    if sp.issparse(Q):
        return float(xv @ (Q @ xv))
    return float(xv @ np.asarray(Q, dtype=np.float64) @ xv)


def is_independent_set(edges: np.ndarray, x: Any) -> bool:
    """True when no edge (rows of ``edges``, shape (m, 2)) has both ends in ``x``."""
    xv = np.asarray(x).astype(bool)
    if len(edges) == 0:
        return True
    return not bool(np.any(xv[edges[:, 0]] & xv[edges[:, 1]]))
