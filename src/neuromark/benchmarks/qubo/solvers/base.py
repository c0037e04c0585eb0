"""The ``Solver`` protocol, its result type, its option types, and the timing harness shared
by all solvers.

A solver gets a symmetric QUBO ``Q`` (scipy.sparse CSR, shape (n, n), cost ``x^T Q x``), a
wall-clock timeout in seconds and a seed, and returns a :class:`SolveResult` with the best
solution, its cost and the best-cost trace over time. ``prepare(Q)`` (optional) loads the
workload into the solver (format conversion, JIT warm-up); it runs before the clock starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

import numpy as np
from pydantic import Field

from neuromark.errors import ConfigError

# Option types: a solver's signature is its options schema (neuromark.components), so the
# bounds live in the annotations and a config's ``workers: -5`` fails at validation.
#: Parallel searches: a count (1..1024) or "auto".
Workers = Annotated[int, Field(ge=1, le=1024)] | Literal["auto"]
#: A count of at least one (sweeps, iterations, variables).
Count = Annotated[int, Field(ge=1)]
#: A finite duration in seconds, > 0.
Seconds = Annotated[float, Field(gt=0)]
#: A finite duration in seconds, >= 0.
SecondsOrZero = Annotated[float, Field(ge=0)]
#: An inverse temperature, > 0.
Beta = Annotated[float, Field(gt=0)]


@dataclass
class SolveResult:
    """What a solver returns.

    Attributes:
        x: best binary vector found, int8 of shape (n,).
        cost: its cost ``x^T Q x`` as reported by the solver (the harness re-checks it).
        trace: ``[(t_s, best_cost), ...]``: seconds since the solve started, best cost so
            far; non-increasing costs, increasing times.
        info: solver-specific figures (iterations, restarts, effective settings).
    """

    x: np.ndarray
    cost: float
    trace: list[tuple[float, float]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Solver(Protocol):
    """A QUBO solver: ``solve(Q, timeout_s, seed) -> SolveResult``.

    ``target`` (optional) is a cost at which the solver may stop early (time to solution).
    """

    name: str

    def solve(self, Q: Any, timeout_s: float, seed: int, *, target: float | None = None
              ) -> SolveResult: ...


def check_timeout(timeout_s: Any, key: str = "timeout_s") -> float:
    """A positive, finite timeout in seconds, else :class:`ConfigError` naming ``key``."""
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float, np.floating)) \
            or not np.isfinite(timeout_s) or timeout_s <= 0:
        raise ConfigError(f"{key}: timeout must be a positive number of seconds, got {timeout_s!r}")
    return float(timeout_s)


def allowed_overrun(timeout_s: float) -> float:
    """The grace a solver has past its timeout: max(5% of it, 2 ms), in seconds."""
    return max(0.05 * timeout_s, 0.002)

