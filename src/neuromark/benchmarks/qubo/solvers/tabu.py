"""neuromark's tabu search for QUBO: numba one-flip tabu, multi-start over threads.

General QUBO (any symmetric Q), no MIS-specific moves. The numba kernels
(:mod:`.tabu_kernel`) release the GIL, so ``workers`` independent searches run in parallel
threads; the driver runs them in short chunks, checking the wall clock between chunks, so
that it returns within the timeout. Compiling the kernels (cached on disk by numba) happens
in :meth:`TabuSearch.prepare`, i.e. while the workload is loaded into the SUT, before the
clock starts.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.solvers.base import Count, Seconds, SecondsOrZero, Workers
from neuromark.benchmarks.qubo.solvers.common import CSR, MultiStartSolver, SharedBest, rng_state


class TabuSearch(MultiStartSolver[CSR]):
    """One-flip tabu search with perturbed restarts (see :mod:`.tabu_kernel`).

    Args:
        workers: parallel independent searches ("auto": 2 when 2+ cores and the timeout is at
            least ``parallel_from_s``).
        tenure: tabu tenure base (default min(20, n // 4) + 1, as in Palubeckis' MST2).
        stall: iterations without improvement before a restart (default max(2000, 10 n)).
        perturb: variables flipped at a restart (default max(2, n // 50)).
        chunk_s: target duration of one kernel call between clock checks, in seconds.
    """

    name = "neuromark-tabu"

    def __init__(self, workers: Workers = "auto", tenure: Count | None = None,
                 stall: Count | None = None, perturb: Count | None = None, chunk_s: Seconds = 2e-4,
                 parallel_from_s: SecondsOrZero = 0.005) -> None:
        super().__init__(workers, chunk_s, parallel_from_s)
        self.tenure = tenure
        self.stall = stall
        self.perturb = perturb

    def _plan(self, loaded: CSR, deadline: float, shared: SharedBest, seed: int,
              target: float | None) -> tuple[Any, Any]:
        """One search per worker (:func:`_search`); info: iterations, restarts, settings."""
        indptr, indices, data = loaded
        n = len(indptr) - 1
        args = (indptr, indices, data, deadline, shared)
        settings = dict(tenure=self.tenure or min(20, n // 4) + 1,
                        stall=self.stall or max(2000, 10 * n),
                        perturb=self.perturb or max(2, n // 50))

        def info(outs: list[Any]) -> dict[str, Any]:
            return {"iterations": int(sum(o[2] for o in outs)),
                    "restarts": int(sum(o[3] for o in outs)), **settings}

        return (lambda w: _search(*args, seed=seed, worker=w, chunk_s=self.chunk_s, **settings)), info


def _search(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, deadline: float,
            shared: SharedBest, *, seed: int, worker: int, chunk_s: float, tenure: int, stall: int,
            perturb: int) -> tuple[np.ndarray, float, int, int]:
    """One worker: chunks of the kernel until the deadline, target or a peer's success."""
    from neuromark.benchmarks.qubo.solvers import tabu_kernel as tk

    n = len(indptr) - 1
    x = np.zeros(n, dtype=np.int8)
    if worker > 0:  # worker 0 starts from all-zeros, the others from random points
        x = (np.random.default_rng([int(seed), worker]).random(n) < 0.5).astype(np.int8)
    h = np.zeros(n)
    diag = np.zeros(n)
    tabu = np.zeros(n, dtype=np.int64)
    cur = tk.local_fields(indptr, indices, data, x, h, diag)
    best_x = x.copy()
    costs = np.array([cur, cur])
    st = np.zeros(7, dtype=np.int64)
    st[tk.RNG] = rng_state(seed, worker)
    st[tk.TENURE], st[tk.STALL], st[tk.PERTURB] = tenure, stall, perturb
    target = shared.target
    shared.offer(cur, time.perf_counter(), best_x)
    chunk = 16
    while not shared.done:
        now = time.perf_counter()
        left = deadline - now
        if left <= 0:
            break
        reached = tk.tabu_run(indptr, indices, data, diag, x, h, tabu, best_x, costs, st,
                              chunk, target)
        after = time.perf_counter()
        shared.offer(costs[1], after, best_x)
        if reached:
            break
        # Aim each chunk at chunk_s, and never past the remaining time.
        per_iter = max((after - now) / chunk, 1e-9)
        want = min(chunk_s, (deadline - after) * 0.5)
        chunk = int(min(max(want / per_iter, 1), chunk * 4))
    return best_x, float(costs[1]), int(st[tk.IT]), int(st[tk.RESTARTS])

