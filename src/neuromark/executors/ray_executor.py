"""The Ray executor: each unit a Ray task reserving ``num_cpus`` whole CPUs.

``RayExecutor()`` starts a local Ray instance sized to this machine; ``address="auto"`` or
``"HOST:PORT"`` joins a running cluster (``ray start --head``; see docs/distributed.md).
Ray is imported only here, and only when this executor is built (extra ``neuromark[ray]``).

Units are submitted at once and gathered with ``ray.wait`` in completion order; a unit that
raises is reported as :class:`~neuromark.executors.UnitFailed` naming the unit, its config
and the node, after the other units were cancelled; Ctrl-C cancels them too. The run's
settings travel with each unit (its arguments carry the run context: cache folder, coverage
mode, counting path), never as environment variables. Reference: Ray Core API, https://docs.ray.io/en/latest/ray-core/api/core.html
"""

from __future__ import annotations

import socket
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from neuromark.errors import ConfigError, require
from neuromark.executors import Outcome, SharedRef, Unit, UnitFailed, call_unit

#: Seconds a Ray address may take to accept a TCP connection before it is refused.
CONNECT_TIMEOUT_S = 5.0

#: Seconds :meth:`RayBatch.close` waits for cancelled units to end, re-sending the cancel.
CANCEL_TIMEOUT_S = 60.0
#: Seconds between two cancellations of a unit that has not ended.
CANCEL_RETRY_S = 1.0


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise :class:`ConfigError` unless ``HOST:PORT`` (or ``ray://HOST:PORT``) accepts a
    TCP connection within ``timeout_s``: ``ray.init`` on a dead address waits without end.
    ``auto`` (Ray finds the local cluster itself) is not checked."""
    if address == "auto":
        return
    text = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--address {address}: expected HOST:PORT, ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except OSError as exc:
        raise ConfigError(f"--address {address}: no Ray cluster answers there within "
                          f"{timeout_s:g} s ({exc.strerror or exc}); start one with "
                          f"`ray start --head` or check the address") from None


class RayExecutor:
    """Units as Ray tasks (see the module docstring).

    Args:
        address: a running cluster (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:10001"``);
            None starts a local instance with ``num_cpus`` CPUs (default: this machine's).
        num_cpus: CPUs of the local instance (only without ``address``).
    """

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        if address is not None and num_cpus is not None:
            raise ConfigError("ray executor: num_cpus sizes a local instance; a cluster at "
                              "--address has its own")
        if address is not None:
            check_reachable(address)
        self.ray = require("ray", "ray")
        self.address = address
        self._owns = False
        if not self.ray.is_initialized():
            try:
                self.ray.init(address=address, num_cpus=num_cpus, include_dashboard=False,
                              configure_logging=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(f"--address {address}: cannot connect to a Ray cluster "
                                  f"({exc})") from None
            self._owns = True
        self._remote = self.ray.remote(call_unit)

    def cpus(self) -> int:
        return int(self.ray.cluster_resources().get("CPU", 1))

    def info(self) -> dict[str, Any]:
        nodes = [n.get("NodeManagerHostname", n.get("NodeManagerAddress", "?"))
                 for n in self.ray.nodes() if n.get("Alive")]
        return {"name": self.name, "address": self.address or "local", "cpus": self.cpus(),
                "nodes": sorted(nodes), "ray": self.ray.__version__}

    def share(self, value: Any) -> SharedRef:
        """Put ``value`` into the object store once; units given the handle get the value."""
        return SharedRef(self.ray.put(value))

    def close(self) -> None:
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()
        self._owns = False

    def run(self, units: Sequence[Unit]) -> Iterator[Outcome]:
        """Submit every unit now; the returned iterator yields outcomes as they finish."""
        if not units:
            return RayBatch(self.ray, {})
        biggest = max(units, key=lambda u: u.num_cpus)
        if biggest.num_cpus > self._largest_node():
            raise ConfigError(f"{biggest.config}: unit {biggest.name} needs {biggest.num_cpus} "
                              f"CPUs; no node of the Ray cluster has that many "
                              f"({self._largest_node()} at most): it would wait forever")
        refs = {self._remote.options(num_cpus=u.num_cpus, max_retries=0).remote(
            u.fn, u.args, dict(u.kwargs)): u for u in units}
        return RayBatch(self.ray, refs)  # submitted now; gathered as the caller iterates

    def _largest_node(self) -> int:
        sizes = [int(n.get("Resources", {}).get("CPU", 0)) for n in self.ray.nodes()
                 if n.get("Alive")]
        return max(sizes, default=0)


class RayBatch:
    """Submitted units, iterated in completion order. An exception while waiting (a failed
    unit, Ctrl-C) or :meth:`close` cancels the units not yet finished."""

    def __init__(self, ray: Any, refs: dict[Any, Unit]) -> None:
        self.ray, self.refs, self.pending = ray, refs, list(refs)

    def __iter__(self) -> RayBatch:
        return self

    def __next__(self) -> Outcome:
        if not self.pending:
            raise StopIteration
        try:
            done, self.pending = self.ray.wait(self.pending, num_returns=1)
            return self._outcome(done[0])
        except BaseException:
            self.close()
            raise

    def _outcome(self, ref: Any) -> Outcome:
        unit = self.refs[ref]
        try:
            value, node, wall = self.ray.get(ref)
        except self.ray.exceptions.RayTaskError as exc:
            cause = exc.cause if getattr(exc, "cause", None) is not None else exc
            raise UnitFailed(f"{unit.config}: unit {unit.name} failed on the Ray executor: "
                             f"{type(cause).__name__}: {cause}") from cause
        except self.ray.exceptions.RayError as exc:  # worker died, node lost
            raise UnitFailed(f"{unit.config}: unit {unit.name} failed on the Ray executor: "
                             f"{type(exc).__name__}: {exc}") from None
        return Outcome(unit, value, node, wall)

    def close(self, timeout_s: float = CANCEL_TIMEOUT_S) -> None:
        """Cancel (force-kill) every unit not yet finished, and wait until each has ended.

        A cancellation that reaches a worker while the task is being handed to it (queued
        no longer, not yet running) is lost and the task runs to its end (Ray's cancel race,
        https://github.com/ray-project/ray/issues/24359), so the cancel is re-sent every
        :data:`CANCEL_RETRY_S` seconds to the units still unfinished, for at most
        ``timeout_s`` seconds; units still running then are named in a warning."""
        pending, self.pending = self.pending, []
        deadline = time.monotonic() + timeout_s
        while pending:
            for ref in pending:
                try:
                    self.ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - finished meanwhile, or its node is gone
                    pass
            try:
                _, pending = self.ray.wait(pending, num_returns=len(pending),
                                           timeout=CANCEL_RETRY_S)
            except Exception:  # noqa: BLE001 - the cluster is gone: nothing left to stop
                return
            if pending and time.monotonic() > deadline:
                names = ", ".join(f"{self.refs[r].config}: {self.refs[r].name}" for r in pending)
                warnings.warn(f"ray executor: {len(pending)} unit(s) still running "
                              f"{timeout_s:g} s after their cancellation ({names})",
                              RuntimeWarning, stacklevel=2)
                return
