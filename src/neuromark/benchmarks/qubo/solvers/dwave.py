"""Baselines from ``dwave-samplers``: Tabu search and simulated annealing.

- :class:`DWaveTabu` wraps ``dwave.samplers.TabuSampler`` (MST2 multistart tabu search,
  Palubeckis 2004). Its ``timeout`` is an integer number of milliseconds per read, so the
  effective timeout is ``max(1, floor(1000 * timeout_s))`` ms (recorded in ``info``); one
  read; ``target`` maps to ``energy_threshold``.
- :class:`DWaveSA` wraps ``dwave.samplers.SimulatedAnnealingSampler``, which has no
  wall-clock timeout. It is budgeted honestly: ``prepare`` calibrates the time of one sweep
  (untimed, with the loading), then each solve runs reads of a fixed number of sweeps and an
  ``interrupt_function`` stops before a read would cross the deadline.

Both convert Q to a ``dimod.BinaryQuadraticModel`` in ``prepare`` (before the clock starts):
``x^T Q x = sum_i Q_ii x_i + sum_{i<j} 2 Q_ij x_i x_j``. Docs:
https://docs.ocean.dwavesys.com/projects/samplers/
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.solvers.base import Count, SolveResult, check_timeout
from neuromark.benchmarks.qubo.solvers.common import Loaded
from neuromark.errors import require


def to_bqm(Q: Any) -> Any:
    """The ``dimod.BinaryQuadraticModel`` (BINARY) with energy ``x^T Q x`` for symmetric Q."""
    from neuromark.benchmarks.qubo.workloads import check_qubo

    dimod = require("dimod", "qubo")
    coo = check_qubo(Q).tocoo()
    linear = np.zeros(coo.shape[0])
    on_diag = coo.row == coo.col
    np.add.at(linear, coo.row[on_diag], coo.data[on_diag])
    upper = coo.row < coo.col
    return dimod.BinaryQuadraticModel.from_numpy_vectors(
        linear, (coo.row[upper], coo.col[upper], 2.0 * coo.data[upper]), 0.0, "BINARY")


class _DWaveBase:
    name = "dwave"

    def __init__(self) -> None:
        self._loaded: Loaded[Any] = Loaded()

    def prepare(self, Q: Any) -> Any:
        """Build the BQM (untimed), once per Q; returns what :meth:`_build` made of Q."""
        return self._loaded.get(Q, self._build)

    def _build(self, Q: Any) -> Any:
        return to_bqm(Q)

    @staticmethod
    def _result(sampleset: Any, n: int, wall: float, info: dict[str, Any]) -> SolveResult:
        first = sampleset.first
        x = np.array([first.sample[i] for i in range(n)], dtype=np.int8)
        cost = float(first.energy)
        return SolveResult(x=x, cost=cost, trace=[(wall, cost)], info=info)


class DWaveTabu(_DWaveBase):
    """``TabuSampler``, one read, timeout in whole milliseconds (see module docstring)."""

    name = "dwave-tabu"

    def solve(self, Q: Any, timeout_s: float, seed: int, *, target: float | None = None
              ) -> SolveResult:
        timeout_s = check_timeout(timeout_s)
        samplers = require("dwave.samplers", "qubo")
        bqm = self.prepare(Q)
        timeout_ms = max(1, math.floor(timeout_s * 1000 + 1e-9))
        kwargs: dict[str, Any] = {"num_reads": 1, "timeout": timeout_ms, "seed": int(seed) % 2**32}
        if target is not None:
            kwargs["energy_threshold"] = float(target)
        start = time.perf_counter()
        sampleset = samplers.TabuSampler().sample(bqm, **kwargs)
        wall = time.perf_counter() - start
        return self._result(sampleset, Q.shape[0], wall, {"timeout_ms": timeout_ms, "num_reads": 1})


MIN_S_PER_TERM = 1e-10
"""Floor on one sweep's time per variable and per (directed) interaction, seconds: about a
tenth of what this machine measures (0.11 ms per sweep at 1,000 nodes, 25 % density)."""

MAX_STATE_ENTRIES = 10_000_000
"""Cap on ``num_reads * n``: the sampler allocates every read's state before it starts,
so an over-large read count costs time even when the interrupt stops it early (a
mis-calibrated 1-s solve at 1,000 nodes once took 158 s)."""


class DWaveSA(_DWaveBase):
    """``SimulatedAnnealingSampler`` in reads of ``num_sweeps`` sweeps, stopped at the deadline.

    Args:
        num_sweeps: sweeps per read (default 1000, reduced when one read would not fit).
    """

    name = "dwave-sa"

    def __init__(self, num_sweeps: Count = 1000) -> None:
        super().__init__()
        self.num_sweeps = num_sweeps

    def _build(self, Q: Any) -> tuple[Any, float, float]:
        """(BQM, seconds per sweep, per-call overhead): reads of 10 and 210 sweeps are timed
        three times each and the fastest kept (untimed calibration, with the loading).

        A noisy machine can make the 210-sweep read look no slower than the 10-sweep one; the
        sweep time is then floored at :data:`MIN_S_PER_TERM` per variable and interaction,
        so the read count asked of the sampler (all allocated up front) stays bounded.
        """
        bqm = to_bqm(Q)
        samplers = require("dwave.samplers", "qubo")
        sampler = samplers.SimulatedAnnealingSampler()
        sampler.sample(bqm, num_reads=1, num_sweeps=10, seed=0)
        times = {10: math.inf, 210: math.inf}
        for _ in range(3):
            for sweeps in times:
                start = time.perf_counter()
                sampler.sample(bqm, num_reads=1, num_sweeps=sweeps, seed=0)
                times[sweeps] = min(times[sweeps], time.perf_counter() - start)
        floor_s = MIN_S_PER_TERM * (bqm.num_variables + 2 * bqm.num_interactions)
        sweep_s = max((times[210] - times[10]) / 200, floor_s, 1e-9)
        return bqm, sweep_s, max(times[10] - 10 * sweep_s, 0.0)

    def solve(self, Q: Any, timeout_s: float, seed: int, *, target: float | None = None
              ) -> SolveResult:
        timeout_s = check_timeout(timeout_s)
        samplers = require("dwave.samplers", "qubo")
        bqm, sweep_s, overhead_s = self.prepare(Q)
        # The sampler's fixed per-call overhead is spent first; at least 4 reads fit in the
        # rest, each with the same sweeps (at least 1, so tiny budgets overrun: reported).
        left = max(timeout_s - overhead_s, 0.0)
        sweeps = int(max(1, min(self.num_sweeps, 0.2 * left / sweep_s)))
        read_s = sweeps * sweep_s
        start = time.perf_counter()
        deadline = start + timeout_s

        def interrupt() -> bool:
            return time.perf_counter() + 1.2 * read_s + overhead_s > deadline

        max_reads = max(1, min(int(left / read_s) + 1, MAX_STATE_ENTRIES // max(1, Q.shape[0])))
        sampleset = samplers.SimulatedAnnealingSampler().sample(
            bqm, num_reads=max_reads, num_sweeps=sweeps, seed=int(seed) % 2**32,
            interrupt_function=interrupt)
        wall = time.perf_counter() - start
        info = {"num_sweeps": sweeps, "num_reads": len(sampleset), "sweep_s": sweep_s,
                "overhead_s": overhead_s}
        return self._result(sampleset, Q.shape[0], wall, info)
