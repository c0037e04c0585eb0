"""Executors: where the independent units of a run execute.

One run path (``neuromark run`` -> suite -> task -> units -> executor -> results written by
the driver). A task declares its units once, as :class:`Unit` objects (a picklable function
with its arguments, a human name, the config it comes from and the whole CPUs it uses), and
hands them to the run context's executor (``ctx.executor``); it never knows where they run.
The executor yields an :class:`Outcome` per unit, in completion order, to the driver, which
alone writes files.

- ``local`` (default, :class:`LocalExecutor`): in this process, one unit after another, or
  in ``processes`` worker processes (a QUBO config's ``jobs: N``).
- ``ray`` (:class:`neuromark.executors.ray_executor.RayExecutor`, extra ``neuromark[ray]``):
  each unit is a Ray task reserving ``num_cpus`` whole CPUs; imported only when asked for.

``jobs`` and ``--executor`` do not combine: ``jobs`` sizes the local executor's process
pool; under ``--executor ray`` it is replaced by the cluster's CPUs (and recorded as unused).

Example:
    >>> ex = LocalExecutor()
    >>> [o.value for o in ex.run([Unit("double 2", "<doc>", pow, (2, 2))])]
    [4]
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from neuromark.errors import ConfigError, NeuromarkError, require
from neuromark.registry import executors


def cpu_limit() -> int:
    """CPUs this process may use: its affinity (``os.sched_getaffinity``), else
    ``os.cpu_count()``; the most worker processes any setting may ask for."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Unit:
    """One independent piece of work: ``fn(*args, **kwargs)`` on ``num_cpus`` whole CPUs.

    ``name`` says what it is (e.g. ``"esn tau=17 instance 3"``), ``config`` where it comes
    from (a config file, ``file:line`` when known); both appear in a failure's message.
    ``fn`` and its arguments must be picklable (module-level functions, plain data).
    """

    name: str
    config: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    num_cpus: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.num_cpus, int) or self.num_cpus < 1:
            raise ConfigError(f"{self.config}: unit {self.name}: num_cpus must be an integer "
                              f">= 1, got {self.num_cpus!r}")


@dataclass
class Outcome:
    """A finished unit: its return value, the node it ran on and its wall time (s)."""

    unit: Unit
    value: Any
    node: str
    wall_s: float


class UnitFailed(NeuromarkError, RuntimeError):
    """A unit raised; the message names the unit, its config and the cause."""


def node_name() -> str:
    """This machine's host name (the ``node`` of units run here)."""
    return socket.gethostname()


@dataclass(frozen=True)
class SharedRef:
    """A value put once into a Ray object store (:meth:`RayExecutor.share`); given as a
    unit's argument (top level of ``args`` or a ``kwargs`` value), the unit receives the
    value itself."""

    ref: Any

    def resolve(self) -> Any:
        return require("ray", "ray").get(self.ref)


def share(executor: Any, value: Any) -> Any:
    """``value`` as many units may take it as an argument: stored once where the executor
    keeps shared data (Ray's object store) instead of copied into every unit; the value
    itself for executors without such a store (the local one)."""
    put = getattr(executor, "share", None)
    return put(value) if put is not None else value


def _resolved(value: Any) -> Any:
    return value.resolve() if isinstance(value, SharedRef) else value


def call_unit(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
              ) -> tuple[Any, str, float]:
    """Run ``fn`` and return ``(value, node, wall_s)``: what every executor ships back.
    :class:`SharedRef` arguments are fetched first (not timed)."""
    args = tuple(_resolved(a) for a in args)
    kwargs = {k: _resolved(v) for k, v in kwargs.items()}
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, node_name(), time.perf_counter() - start


class Executor(Protocol):
    """Runs units; yields their outcomes in completion order. On an exception (a failed
    unit, Ctrl-C) the units not yet finished are cancelled before it propagates."""

    name: str

    def cpus(self) -> int:
        """Whole CPUs available to units at once (sizes e.g. thread counts)."""

    def run(self, units: Sequence[Unit]) -> Iterator[Outcome]:
        """Run ``units``; yield one :class:`Outcome` per unit as it finishes. The iterator
        has ``close()``, which cancels the units not yet finished (use
        ``contextlib.closing``)."""

    def info(self) -> dict[str, Any]:
        """Provenance: the executor's name and settings (recorded in results)."""

    def close(self) -> None:
        """Release what the executor holds (worker processes, a Ray connection)."""


class LocalExecutor:
    """Units in this process one by one (``processes=1``, the default: exceptions propagate
    unchanged, with a note naming the unit), or in a pool of ``processes`` worker processes
    (the units then share this machine's CPUs; their timings are flagged by the task)."""

    name = "local"

    def __init__(self, processes: int = 1) -> None:
        if processes < 1:
            raise ConfigError(f"local executor: processes must be >= 1, got {processes}")
        if processes > cpu_limit():
            raise ConfigError(f"local executor: processes: {processes} exceed this machine's "
                              f"{cpu_limit()} CPUs (the limit)")
        self.processes = processes

    def cpus(self) -> int:
        return cpu_limit()

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "processes": self.processes, "nodes": [node_name()]}

    def close(self) -> None:
        pass

    def run(self, units: Sequence[Unit]) -> Iterator[Outcome]:
        if self.processes == 1 or len(units) <= 1:
            for unit in units:
                try:
                    value, node, wall = call_unit(unit.fn, unit.args, unit.kwargs)
                except Exception as exc:
                    if hasattr(exc, "add_note"):  # Python >= 3.11
                        exc.add_note(f"in unit {unit.name} of {unit.config} (local executor)")
                    raise
                yield Outcome(unit, value, node, wall)
            return
        yield from self._pool(units)

    def _pool(self, units: Sequence[Unit]) -> Iterator[Outcome]:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        pool = ProcessPoolExecutor(self.processes)
        finished = False
        try:
            futures = {pool.submit(call_unit, u.fn, u.args, u.kwargs): u for u in units}
            for fut in as_completed(futures):
                unit = futures[fut]
                try:
                    value, node, wall = fut.result()
                except NeuromarkError as exc:
                    raise UnitFailed(f"{unit.config}: unit {unit.name} failed: {exc}") from exc
                yield Outcome(unit, value, node, wall)
            finished = True
        finally:  # a failure, Ctrl-C or close(): queued units never start, running ones end
            if finished:
                pool.shutdown(wait=True)
            else:
                _terminate(pool)


def _terminate(pool: Any) -> None:
    """Shut ``pool`` down now: queued units cancelled, running workers killed (SIGKILL) and reaped, so
    that no worker outlives the run (``terminate_workers`` from Python 3.14)."""
    def workers() -> list[Any]:
        return list((getattr(pool, "_processes", None) or {}).values())

    processes = workers()
    pool.shutdown(wait=False, cancel_futures=True)
    processes += [p for p in workers() if p not in processes]  # started meanwhile
    for proc in processes:  # SIGKILL: a forked worker may carry the parent's SIGTERM handlers
        if proc.is_alive():
            proc.kill()
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:  # it starts workers: once it ends, no new one can appear
        manager.join(timeout=10)
    processes += [p for p in workers() if p not in processes]
    for proc in processes:
        if proc.is_alive():
            proc.kill()
        proc.join()


def is_local(executor: Executor) -> bool:
    """Whether ``executor`` runs units on this machine only (the local executor)."""
    return isinstance(executor, LocalExecutor)


def make_executor(name: str, address: str | None = None) -> Executor:
    """The registered executor ``name``: ``local``, or ``ray`` connected to ``address``
    (default: a local Ray instance sized to this machine); unknown names raise
    :class:`ConfigError` with the known ones."""
    try:
        cls = executors.get(name)
    except NeuromarkError as exc:
        raise ConfigError(f"--executor: {exc}") from None
    if address is not None and name == "local":
        raise ConfigError("--address: only with --executor ray (the local executor has none)")
    return cls() if address is None else cls(address=address)
