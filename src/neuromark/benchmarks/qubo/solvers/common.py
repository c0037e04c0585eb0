"""Pieces shared by neuromark's numba solvers: CSR arrays, the shared best, kernel warm-up,
and their driver :class:`MultiStartSolver`.

Below the solver modules (:mod:`.anneal`, :mod:`.tabu`): it imports neither; each solver
warms its own threaded path through :func:`warm_threads`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Generic, TypeVar

import numpy as np

from neuromark.benchmarks.qubo.solvers.base import SolveResult, Workers, check_timeout
from neuromark.errors import ConfigError, require

CSR = tuple[np.ndarray, np.ndarray, np.ndarray]

T = TypeVar("T")
_NOTHING = object()


class Loaded(Generic[T]):
    """What a solver's ``prepare(Q)`` built for the Q it holds, reused while the same Q
    object comes back (identity: the Q is held, so ``is`` cannot match a recycled object)."""

    def __init__(self) -> None:
        self.Q: Any = _NOTHING
        self.value: T | None = None

    def get(self, Q: Any, build: Callable[[Any], T]) -> T:
        """``build(Q)`` for a Q other than the held one, else what was built for it."""
        if self.Q is not Q:
            self.value = build(Q)
            self.Q = Q
        return self.value  # type: ignore[return-value]


def csr_arrays(Q: Any) -> CSR:
    """(indptr int64, indices int64, data float64) of Q after validation."""
    from neuromark.benchmarks.qubo.workloads import check_qubo

    csr = check_qubo(Q)
    return csr.indptr.astype(np.int64), csr.indices.astype(np.int64), csr.data.astype(np.float64)


def usable_cores() -> int:
    """CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_count(workers: int | str, timeout_s: float, parallel_from_s: float) -> int:
    """Processes to use: ``workers`` when given, else 2 on >= 2 cores for timeouts of at
    least ``parallel_from_s`` seconds (shorter ones do not repay the start-up), else 1."""
    if workers != "auto":
        return max(1, int(workers))
    return 2 if usable_cores() >= 2 and timeout_s >= parallel_from_s else 1


def rng_state(seed: int, worker: int) -> int:
    """A non-zero xorshift64* state for (seed, worker)."""
    mix = np.random.SeedSequence([int(seed), int(worker)]).generate_state(1, dtype=np.uint64)[0]
    return int(mix >> np.uint64(1)) | 1


class SharedBest:
    """Best cost and solution across worker threads, the trace ``[(t_s, cost)]``, stop flag."""

    def __init__(self, start: float, target: float | None) -> None:
        self.start = start
        self.target = -np.inf if target is None else float(target)
        self.best = np.inf
        self.best_x: np.ndarray | None = None
        self.trace: list[tuple[float, float]] = []
        self.done = False
        self.lock = threading.Lock()

    def offer(self, cost: float, now: float, x: np.ndarray) -> None:
        """Record ``x`` (copied) if its ``cost`` beats the best so far."""
        with self.lock:
            if cost < self.best:
                self.best = float(cost)
                self.best_x = x.copy()
                self.trace.append((now - self.start, float(cost)))
            if cost <= self.target + 1e-9:
                self.done = True

    def result(self, n: int | None = None, timeout_s: float | None = None
               ) -> tuple[np.ndarray, float]:
        """The best (x, cost); a :class:`ConfigError` when no worker reported one before the
        deadline (``n`` variables and ``timeout_s`` name the cause in its message)."""
        with self.lock:
            if self.best_x is None:
                size = f"{n} variables" if n is not None else "this QUBO"
                budget = f"{timeout_s:g} s" if timeout_s is not None else "the timeout"
                raise ConfigError(f"no solution within {budget}: the solver had not finished "
                                  f"its first pass over {size} when the time was up; give a "
                                  f"longer timeout (or a smaller instance)")
            return self.best_x.copy(), self.best


def run_workers(fn: Callable[[int], Any], n_workers: int, deadline: float, shared: SharedBest,
                grace_s: float = 5e-4) -> list[Any]:
    """Run ``fn(worker)`` for each worker; return the outputs of those that finished.

    With several threads the caller does not wait for a worker that the OS descheduled in
    the middle of a chunk past the deadline: the shared best is the answer, and the
    straggler stops at its next clock check (``shared.done``).
    """
    if n_workers == 1:
        return [fn(0)]
    pool = ThreadPoolExecutor(n_workers)
    try:
        futures = [pool.submit(fn, w) for w in range(n_workers)]
        finished, pending = wait(futures, timeout=max(0.0, deadline - time.perf_counter()) + grace_s)
        if pending:
            shared.done = True
        return [f.result() for f in finished]
    finally:
        pool.shutdown(wait=False)


_WARM = False
_THREADS_WARM: set[str] = set()


def tiny_qubo() -> Any:
    """A 3-variable QUBO (a path graph's MIS, optimum -2) for warming kernels up."""
    import scipy.sparse as sp

    indptr = np.array([0, 2, 5, 7], dtype=np.int64)
    indices = np.array([0, 1, 0, 1, 2, 1, 2], dtype=np.int64)
    data = np.array([-1.0, 2.0, 2.0, -1.0, 2.0, 2.0, -1.0])
    return sp.csr_matrix((data, indices, indptr), shape=(3, 3))


def warm_up() -> None:
    """Compile (or load from numba's on-disk cache) every kernel on a 3-variable QUBO."""
    global _WARM
    if _WARM:
        return
    require("numba", "qubo")
    from neuromark.benchmarks.qubo.solvers import sa_kernel as sk
    from neuromark.benchmarks.qubo.solvers import tabu_kernel as tk

    indptr, indices, data = csr_arrays(tiny_qubo())
    x = np.zeros(3, dtype=np.int8)
    h, diag = np.zeros(3), np.zeros(3)
    cur = tk.local_fields(indptr, indices, data, x, h, diag)
    st = np.array([0, 0, 0, 1, 1, 2, 1], dtype=np.int64)
    costs = np.array([cur, cur])
    tk.tabu_run(indptr, indices, data, diag, x, h, np.zeros(3, dtype=np.int64), x.copy(),
                costs, st, 10, -np.inf)
    sk.anneal(indptr, indices, data, diag, x, h, x.copy(), costs, st, 0.1, 1.0, 2, -np.inf)
    sk.descend(indptr, indices, data, diag, x, h, costs)
    _WARM = True


def warm_threads(name: str, make: Callable[[], Any]) -> None:
    """One short solve of ``make()`` (a solver with 2 workers) on :func:`tiny_qubo`, once per
    process and solver ``name``: the first threaded run in a fresh (e.g. forked worker)
    process otherwise stalls for tens of milliseconds. Call it after :func:`warm_up`, from
    the solver's loading step (the nested ``prepare`` of the tiny QUBO finds it done)."""
    if name in _THREADS_WARM:
        return
    _THREADS_WARM.add(name)
    make().solve(tiny_qubo(), 0.01, 0)


class MultiStartSolver(Generic[T]):
    """The driver of neuromark's wall-clock solvers: ``workers`` independent searches in
    threads (:func:`worker_count`) sharing a :class:`SharedBest`, the workload loaded once per
    Q by :meth:`prepare` (untimed, kernels compiled and the threaded path warmed).

    A subclass sets ``name``, keeps its options in its own ``__init__`` (its signature is
    the options schema), and defines :meth:`_load` (what ``prepare`` builds from the CSR
    arrays) and :meth:`_plan` (the worker and the run's ``info``).
    """

    name = ""

    def __init__(self, workers: Workers, chunk_s: float, parallel_from_s: float) -> None:
        self.workers = workers
        self.chunk_s = chunk_s
        self.parallel_from_s = parallel_from_s
        self._loaded: Loaded[T] = Loaded()

    def prepare(self, Q: Any) -> T:
        """Validate Q, build what the search needs and compile/warm the kernels (untimed);
        built once per Q."""
        return self._loaded.get(Q, self._build)

    def _build(self, Q: Any) -> T:
        loaded = self._load(Q, csr_arrays(Q))
        warm_up()
        warm_threads(self.name, lambda: type(self)(workers=2))  # type: ignore[call-arg]
        return loaded

    def _load(self, Q: Any, arrays: CSR) -> T:
        """What :meth:`prepare` keeps for Q, its validated CSR arrays given: those arrays by
        default."""
        return arrays  # type: ignore[return-value]

    def _plan(self, loaded: T, deadline: float, shared: SharedBest, seed: int, target: float | None
              ) -> tuple[Callable[[int], Any], Callable[[list[Any]], dict[str, Any]]]:
        """(``worker(w)``, ``info(outputs)``: the run's info between ``workers`` and
        ``stragglers``)."""
        raise NotImplementedError

    def _n_workers(self, timeout_s: float) -> int:
        return worker_count(self.workers, timeout_s, self.parallel_from_s)

    def solve(self, Q: Any, timeout_s: float, seed: int, *, target: float | None = None
              ) -> SolveResult:
        """Search until ``timeout_s`` seconds have passed or the ``target`` cost is reached."""
        timeout_s = check_timeout(timeout_s)
        start = time.perf_counter()
        loaded = self.prepare(Q)  # no-op when loaded already
        deadline = start + timeout_s
        shared = SharedBest(start, target)
        n_workers = self._n_workers(timeout_s)
        worker, info = self._plan(loaded, deadline, shared, seed, target)
        outs = run_workers(worker, n_workers, deadline, shared)
        x, cost = shared.result(Q.shape[0], timeout_s)
        return SolveResult(x=x, cost=float(cost), trace=list(shared.trace),
                           info={"workers": n_workers, **info(outs), "stragglers": n_workers - len(outs)})
