"""neuromark's own QUBO solver: wall-clock simulated annealing in numba, over both cores.

General QUBO (any symmetric Q), no MIS-specific moves: Metropolis one-flip sweeps with
incremental local fields (:mod:`.sa_kernel`), a geometric inverse-temperature schedule, a
greedy descent at the end of every anneal, and ``workers`` independent anneals in parallel
threads (the kernels release the GIL).

Two schedules:

- **fixed timeout** (no ``target``): the schedule position is the elapsed fraction of the
  time budget, so one anneal per worker spans exactly the budget on any machine and load;
- **time to solution** (``target`` given): anneals of 64, 128, 256, ... sweeps (restarts
  with doubling lengths, an anytime schedule), stopping as soon as the target cost is reached.

The kernels are compiled (or loaded from numba's disk cache) in :meth:`Annealer.prepare`,
i.e. while the workload is loaded into the SUT, before the clock starts.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.solvers.base import Beta, Count, Seconds, SecondsOrZero, Workers
from neuromark.benchmarks.qubo.solvers.common import CSR, MultiStartSolver, SharedBest, rng_state


def default_beta_range(Q: Any) -> tuple[float, float]:
    """(hot, cold) inverse temperatures from the sizes of single-flip moves in Q.

    The terms ``t = {|Q_ii|} U {2|Q_ij|}`` (nonzero) are the sizes of the elementary cost
    changes. With few distinct sizes (integer-weighted QUBOs such as MIS or max-cut) the
    smallest, ``t_min``, is a real move: hot accepts it with probability 1/2
    (``ln 2 / t_min``), cold with 1% (``ln 100 / t_min``). With continuous weights the 10th
    and 1st percentiles stand in for it. Same spirit as dwave-samplers' default range, whose
    hot end (the largest possible delta) wastes most of a short anneal on MIS QUBOs.
    """
    csr = Q.tocsr()
    terms = np.abs(csr.data.copy())
    coo = csr.tocoo()
    terms[coo.row != coo.col] *= 2.0
    terms = terms[terms > 0]
    if terms.size == 0:
        return 1.0, 1.0
    if np.unique(terms).size <= 16:
        hot_ref = cold_ref = float(terms.min())
    else:
        hot_ref, cold_ref = (float(v) for v in np.percentile(terms, [10, 1]))
    return math.log(2.0) / hot_ref, math.log(100.0) / cold_ref


class Annealer(MultiStartSolver[tuple[CSR, tuple[float, float]]]):
    """Simulated annealing on the wall clock (see module docstring).

    Args:
        workers: parallel independent anneals ("auto": 2 when 2+ cores and the timeout is
            at least ``parallel_from_s``).
        beta_range: (hot, cold) inverse temperatures; default :func:`default_beta_range`.
        first_sweeps: length of the first anneal in time-to-solution mode (then doubled).
        chunk_s: target duration of one kernel call between clock checks, seconds.
    """

    name = "neuromark-sa"

    def __init__(self, workers: Workers = "auto", beta_range: tuple[Beta, Beta] | None = None,
                 first_sweeps: Count = 64, chunk_s: Seconds = 2e-4, parallel_from_s: SecondsOrZero = 0.004
                 ) -> None:
        super().__init__(workers, chunk_s, parallel_from_s)
        self.beta_range = beta_range
        self.first_sweeps = first_sweeps

    def _load(self, Q: Any, arrays: CSR) -> tuple[CSR, tuple[float, float]]:
        """(arrays, betas): ``beta_range``, else :func:`default_beta_range` of Q."""
        import scipy.sparse as sp

        return arrays, self.beta_range or default_beta_range(sp.csr_matrix(Q))

    def _plan(self, loaded: tuple[CSR, tuple[float, float]], deadline: float, shared: SharedBest,
              seed: int, target: float | None) -> tuple[Any, Any]:
        """Chained anneals per worker (:func:`_worker`); info: sweeps, anneals, betas, schedule."""
        arrays, betas = loaded
        kwargs = dict(arrays=arrays, betas=betas, deadline=deadline, shared=shared,
                      seed=seed, first_sweeps=self.first_sweeps, chunk_s=self.chunk_s)

        def info(outs: list[Any]) -> dict[str, Any]:
            return {"sweeps": int(sum(o[2] for o in outs)), "anneals": int(sum(o[3] for o in outs)),
                    "beta_range": list(betas), "schedule": "time" if target is None else "doubling"}

        return (lambda w: _worker(worker=w, **kwargs)), info


def _worker(*, arrays: CSR, betas: tuple[float, float], deadline: float, shared: SharedBest,
            seed: int, worker: int, first_sweeps: int, chunk_s: float
            ) -> tuple[np.ndarray, float, int, int]:
    """One worker: chained anneals until the deadline, the target, or a peer's success."""
    from neuromark.benchmarks.qubo.solvers import sa_kernel as sk
    from neuromark.benchmarks.qubo.solvers import tabu_kernel as tk

    indptr, indices, data = arrays
    n = len(indptr) - 1
    b0, b1 = betas
    x = np.zeros(n, dtype=np.int8)
    h, diag = np.zeros(n), np.zeros(n)
    cur = tk.local_fields(indptr, indices, data, x, h, diag)
    best_x = x.copy()
    costs = np.array([cur, cur])
    st = np.zeros(7, dtype=np.int64)
    st[tk.RNG] = rng_state(seed, worker)
    target = shared.target
    by_time = not np.isfinite(target)
    # A greedy descent first: a sound answer within microseconds, whatever happens next.
    sk.descend(indptr, indices, data, diag, x, h, costs)
    costs[1] = costs[0]
    best_x[:] = x
    shared.offer(costs[1], time.perf_counter(), best_x)
    x[:] = 0
    costs[0] = tk.local_fields(indptr, indices, data, x, h, diag)
    sweeps_done, anneals, length = 0, 0, first_sweeps
    sweep_s = 0.0  # measured seconds per sweep
    while not shared.done:
        # One anneal: position p in [0, 1] runs over the time left (fixed timeout) or over
        # ``length`` sweeps (time to solution).
        t_begin = time.perf_counter()
        span = deadline - t_begin
        if span <= 0:
            break
        anneals += 1
        p, k = 0.0, 1
        while p < 1.0 and not shared.done:
            now = time.perf_counter()
            if now >= deadline:
                break
            if by_time:  # the clock says where in the schedule we are
                p = (now - t_begin) / span
                dp = k * sweep_s / span if sweep_s else 1.0 / 1e4
            else:
                dp = k / length
            q = min(1.0, p + dp)
            beta_a = b0 * (b1 / b0) ** p
            beta_b = b0 * (b1 / b0) ** (q - (q - p) / max(k, 1))
            reached = sk.anneal(indptr, indices, data, diag, x, h, best_x, costs, st,
                                beta_a, beta_b, k, target)
            after = time.perf_counter()
            sweeps_done += k
            measured = (after - now) / k
            sweep_s = measured if sweep_s == 0.0 else 0.7 * sweep_s + 0.3 * measured
            shared.offer(costs[1], after, best_x)
            if reached:
                break
            p = q
            left = deadline - after
            k = int(max(1, min(chunk_s, 0.5 * left) / max(sweep_s, 1e-9)))
            if not by_time:
                k = min(k, max(1, int(round((1.0 - p) * length))))
        sk.descend(indptr, indices, data, diag, x, h, costs)
        if costs[0] < costs[1] - 1e-9:
            costs[1] = costs[0]
            best_x[:] = x
        shared.offer(costs[1], time.perf_counter(), best_x)
        if not by_time:
            length *= 2
        # The next anneal starts from scratch (hot phase randomises anyway).
        x[:] = 0
        costs[0] = tk.local_fields(indptr, indices, data, x, h, diag)
    return best_x, float(costs[1]), sweeps_done, anneals
