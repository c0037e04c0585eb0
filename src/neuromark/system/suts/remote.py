"""SUT ``remote``: a system under test served by another process or host.

LoadGen and the power meters stay in neuromark; the SUT runs in its own Python (a device
SDK's environment) behind :mod:`neuromark.system.remote_server`, the standard-library
server that documents the protocol. Config::

    sut: {name: remote, options: {address: "127.0.0.1:5555", timeout_s: 10, calibration: 200}}

At build time the client connects, checks the protocol version and reads the server's
library (size, labels, response dtype, whether it times pre-processing and inference
apart): a refused connection or a version mismatch is a :class:`ConfigError` naming the
address, before LoadGen starts. LoadGen's sample index ``i`` is the server's sample
``i`` (``samples`` uses the first N only). Then a LoadGen test of ``calibration``
one-sample queries through the server's ``null`` path (the same round trip as ``issue``,
no SUT call) measures the transport's own latency: score ``transport_latency`` (mean ± SE
of the round trips, ms) and ``details.sut.transport`` (the round trips' statistics and
LoadGen's median / p90 / mean of that test, to subtract from LoadGen's figures of the run).
The stage latencies (``preprocess_latency``, ``inference_latency``) are the server's own
clock and exclude the transport. Every reply has ``timeout_s``; a server that dies or hangs
mid-run fails the run with the SUT's name and the address.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from neuromark.errors import ConfigError, ModelOutputError
from neuromark.results import Score
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.remote_server import PROTOCOL, ProtocolError, recv_message, send_message
from neuromark.system.sut import BuiltSUT, InMemoryLibrary
from neuromark.system.timing import StageTimer, latency_stats

#: Round trips before the calibration, not counted (connection and caches warm up).
CALIBRATION_WARMUP = 10


def parse_address(address: str) -> tuple[str, int]:
    """``"HOST:PORT"`` (``[v6]:PORT`` too) -> ``(host, port)``; a clear error otherwise."""
    host, sep, port = address.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"sut.options.address: {address!r} is not HOST:PORT "
                          "(e.g. 127.0.0.1:5555)")
    return host, int(port)


class Connection:
    """One socket to a remote SUT server: request/reply with a timeout, errors named."""

    def __init__(self, address: str, timeout_s: float) -> None:
        self.address = address
        self.name = "?"
        host, port = parse_address(address)
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise ConfigError(f"sut.options.address: cannot connect to the remote SUT server at "
                              f"{address}: {exc.strerror or exc} (start it with: python -m "
                              f"neuromark.system.remote_server --port {port} --sut "
                              "module:factory)") from None
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.lock = threading.Lock()

    def request(self, header: dict[str, Any], what: str) -> tuple[dict[str, Any], bytes]:
        """Send ``header`` and wait for the reply; an error reply or a lost connection
        raises :class:`ModelOutputError` naming the SUT, the address and ``what``."""
        where = f"remote SUT {self.name!r} at {self.address}"
        with self.lock:
            try:
                send_message(self.sock, header)
                reply, payload = recv_message(self.sock)
            except TimeoutError:
                raise ModelOutputError(f"{where}: no reply to {what} within "
                                       f"{self.sock.gettimeout()} s (sut.options.timeout_s); "
                                       "is the server hung?") from None
            except (ProtocolError, OSError) as exc:
                raise ModelOutputError(f"{where}: connection lost during {what} ({exc}); did "
                                       "the server exit?") from None
        if not reply.get("ok"):
            raise ModelOutputError(f"{where}: {what} failed on the server: {reply.get('error')}")
        return reply, payload

    def close(self) -> None:
        try:
            with self.lock:
                self.sock.settimeout(1.0)
                send_message(self.sock, {"op": "close"})
                recv_message(self.sock)
        except (ProtocolError, OSError):
            pass  # the server is gone already: nothing to close politely
        finally:
            self.sock.close()


class RemoteLibrary(InMemoryLibrary):
    """The server's library: LoadGen's load/unload go to the server (untimed); locally a
    sample is its index."""

    def __init__(self, conn: Connection, name: str, total: int, performance: int) -> None:
        super().__init__(f"{name}@{conn.address}", int, total, performance)
        self.conn = conn

    def load(self, indices: Sequence[int]) -> None:
        self.conn.request({"op": "load", "indices": [int(i) for i in indices]},
                          f"load of {len(indices)} samples")
        super().load(indices)

    def unload(self, indices: Sequence[int]) -> None:
        self.conn.request({"op": "unload", "indices": [int(i) for i in indices]},
                          f"unload of {len(indices)} samples")
        super().unload(indices)


class RemoteSUT:
    """``issue(indices)`` as one request to the server; responses decoded as its declared
    ``response_dtype``; the server's stage timings (or call time) go to ``timer``."""

    def __init__(self, conn: Connection, description: dict[str, Any]) -> None:
        self.conn = conn
        self.name = description["name"]
        self.response_dtype = np.dtype(description["response_dtype"]).str
        self.stateful = description.get("stateful")
        self.itemsize = np.dtype(self.response_dtype).itemsize
        self.real = np.dtype(self.response_dtype).kind == "f"
        self.staged = bool(description.get("staged"))
        self.timer = StageTimer(("preprocess", "inference") if self.staged else ("inference",))

    def issue(self, sample_indices: Sequence[int]) -> list[np.ndarray]:
        return self.query(sample_indices, "issue")

    def query(self, sample_indices: Sequence[int], op: str) -> list[np.ndarray]:
        """One ``issue`` (or ``null``: no SUT call, nothing timed) request and its decoded
        responses."""
        indices = [int(i) for i in sample_indices]
        reply, payload = self.conn.request({"op": op, "indices": indices},
                                           f"{op} of samples {indices[:8]}")
        sizes = reply.get("sizes")
        if not isinstance(sizes, list) or len(sizes) != len(indices) or sum(sizes) != len(payload):
            raise ModelOutputError(f"remote SUT {self.name!r} at {self.conn.address}: reply to "
                                   f"samples {indices[:8]} holds {len(payload)} bytes in sizes "
                                   f"{str(sizes)[:80]}, expected one size per sample")
        dtype, out, offset = self.response_dtype, [], 0
        for index, size in zip(indices, sizes):
            arr = np.frombuffer(payload, dtype=dtype, count=size // self.itemsize, offset=offset)
            if size and (size % self.itemsize or (self.real and not np.isfinite(arr).all())):
                raise ModelOutputError(f"remote SUT {self.name!r}: response to sample {index} is "
                                       f"{'cut' if size % self.itemsize else 'non-finite'} "
                                       f"({size} bytes of {dtype})")
            out.append(arr)
            offset += size
        if op == "issue":
            self._record(reply, len(indices))
        return out

    def _record(self, reply: dict[str, Any], n: int) -> None:
        add = self.timer.add
        if self.staged:
            for stage, key in (("preprocess", "preprocess"), ("inference", "inference")):
                for ns in reply["stages"][key]:
                    add(stage, int(ns))
        else:  # one call: its time per sample (divided when a query holds several samples)
            per_sample = int(reply["service_ns"]) // max(n, 1)
            for _ in range(n):
                add("inference", per_sample)

    def calibrate(self, library: InMemoryLibrary, round_trips: int) -> dict[str, Any]:
        """The transport's own latency: a LoadGen SingleStream test of ``round_trips``
        one-sample queries through the server's ``null`` path (the same framing, request
        and decoding as ``issue``; no SUT call). ``round_trip``: each request timed around
        the socket call; ``loadgen``: LoadGen's latencies of that test (what the transport
        adds to LoadGen's figures of the run)."""
        times: list[int] = []
        clock, query = time.perf_counter_ns, self.query

        class NullPath:
            name, response_dtype = f"{self.name} (null path)", self.response_dtype

            def issue(self, indices: Sequence[int]) -> list[np.ndarray]:
                t0 = clock()
                out = query(indices, "null")
                times.append(clock() - t0)
                return out

        settings = LoadGenSettings(scenario="SingleStream", min_query_count=round_trips,
                                   max_query_count=round_trips, min_duration_s=0.0,
                                   expected_latency_s=1e-4)
        for _ in range(CALIBRATION_WARMUP):
            query([0], "null")
        with tempfile.TemporaryDirectory(prefix="neuromark-transport-") as tmp:
            lat = run_test(NullPath(), library, settings, tmp).summary["latency_s"]
        pct = lat.get("percentiles_s", {})
        return {"round_trips": len(times), "method": "LoadGen SingleStream queries to the "
                "server's null path (no SUT call) before the run",
                "round_trip": latency_stats(times, name="transport calibration"),
                "loadgen": {"mean_s": lat.get("mean_s"), "median_s": pct.get("50"),
                            "p90_s": pct.get("90"), "p99_s": pct.get("99")}}


def remote(*, address: str, timeout_s: Annotated[float, Field(gt=0)] = 10.0,
           calibration: Annotated[int, Field(ge=2)] = 200,
           samples: Annotated[int, Field(ge=1)] | None = None) -> BuiltSUT:
    """The ``remote`` entry of :data:`neuromark.registry.suts`: ``address`` of a
    :mod:`neuromark.system.remote_server` (``HOST:PORT``), ``timeout_s`` per reply,
    ``calibration`` transport round trips, ``samples`` (default: the server's library)."""
    conn = Connection(address, timeout_s)
    try:
        reply, _ = conn.request({"op": "hello", "protocol": PROTOCOL}, "the version handshake")
    except ModelOutputError as exc:
        conn.close()
        raise ConfigError(f"sut.options.address: {exc}") from None
    if reply.get("protocol") != PROTOCOL:
        conn.close()
        raise ConfigError(f"sut.options.address: the server at {address} speaks remote SUT "
                          f"protocol {reply.get('protocol')!r}, this neuromark speaks {PROTOCOL}; "
                          "use the remote_server.py of this neuromark version")
    try:
        return _build(conn, reply["sut"], calibration, samples)
    except BaseException:
        conn.close()
        raise


def _build(conn: Connection, desc: dict[str, Any], calibration: int, samples: int | None) -> BuiltSUT:
    conn.name = desc["name"]
    total = int(desc["total_count"])
    if samples is not None and samples > total:
        raise ConfigError(f"sut.options.samples: {samples} is more than the {total} samples "
                          f"of remote SUT {conn.name!r} at {conn.address}")
    count = samples or total
    labels = desc.get("labels")
    if labels is not None:
        if len(labels) != total:
            raise ConfigError(f"remote SUT {conn.name!r} at {conn.address}: {len(labels)} labels "
                              f"for {total} samples")
        labels = np.asarray(labels[:count], dtype=np.int64)
    sut = RemoteSUT(conn, desc)
    library = RemoteLibrary(conn, conn.name, count, min(int(desc["performance_count"]), count))
    transport = sut.calibrate(library, calibration)
    trip = transport["round_trip"]
    scores = {"transport_latency": Score(trip["mean_s"] * 1e3, error=trip["stderr_s"] * 1e3,
                                         unit="ms", higher_is_better=False)}
    info = {**desc.get("info", {}), "address": conn.address, "protocol": PROTOCOL,
            "remote_sut": conn.name, "staged": sut.staged, "library_size": total,
            "transport": transport}
    return BuiltSUT(sut, library, labels=labels, info=info, close=conn.close, scores=scores)
