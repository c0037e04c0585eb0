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
With ``data: spoken_digits_8`` neuromark hands the task's test samples to a server whose SUT
declares ``takes_data`` (it has no library of its own; the labels stay here). The system's
default label is the served SUT's own (``info.label``, else its name), never "remote".
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
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from neuromark.errors import ConfigError, ModelOutputError
from neuromark.results import Score
from neuromark.system.chips.features import SPOKEN_DIGITS_8, task_counts
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.remote_server import (
    PROTOCOL,
    Limits,
    PeerClosed,
    ProtocolError,
    recv_message,
    send_message,
)
from neuromark.system.sut import BuiltSUT, InMemoryLibrary
from neuromark.system.timing import StageTimer, latency_stats

#: Round trips before the calibration, not counted (connection and caches warm up).
CALIBRATION_WARMUP = 10
#: numpy dtype kinds a response may have: bool, signed and unsigned integers, floats.
NUMERIC_KINDS = "biuf"
#: A server's claimed service time of a request may exceed the round trip measured around
#: it by this share plus SLACK_NS (two clocks' granularity) before it is refused.
CLAIM_TOLERANCE = 0.01
SLACK_NS = 50_000
#: Most samples a served library may declare (LoadGen loads up to all of them in one call).
MAX_LIBRARY = 10 ** 7
#: Longest SUT name accepted from a server (characters).
MAX_NAME = 200


def parse_address(address: str) -> tuple[str, int]:
    """``"HOST:PORT"`` (``[v6]:PORT`` too) -> ``(host, port)``; a clear error otherwise."""
    host, sep, port = address.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"sut.options.address: {address!r} is not HOST:PORT "
                          "(e.g. 127.0.0.1:5555)")
    return host, int(port)


class Connection:
    """One socket to a remote SUT server: request/reply, each reply within ``timeout_s``
    (the whole message, however it is cut into packets) and within ``limits``; errors
    named."""

    def __init__(self, address: str, timeout_s: float, limits: Limits | None = None) -> None:
        self.address = address
        self.name = "?"
        self.timeout_s = timeout_s
        self.limits = limits or Limits(message_s=timeout_s)
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
        self.last_round_trip_ns = 0

    def request(self, header: dict[str, Any], what: str) -> tuple[dict[str, Any], bytes]:
        """Send ``header`` and wait for the reply; an error reply, a lost connection or a
        reply later than ``timeout_s`` raises :class:`ModelOutputError` naming the SUT, the
        address and ``what``. ``last_round_trip_ns``: the exchange, timed here."""
        where = (f"remote SUT {self.name!r} at {self.address}" if self.name != "?"
                 else f"the remote SUT server at {self.address}")
        with self.lock:
            t0 = time.perf_counter_ns()
            deadline = time.monotonic() + self.timeout_s
            try:
                send_message(self.sock, header, timeout_s=self.timeout_s)
                reply, payload = recv_message(self.sock, self.limits, deadline)
            except TimeoutError:
                raise ModelOutputError(f"{where}: no reply to {what} within {self.timeout_s:g} s "
                                       "(the whole reply, however it arrives; sut.options."
                                       "timeout_s); is the server hung or too slow?") from None
            except (PeerClosed, OSError) as exc:
                raise ModelOutputError(f"{where}: connection lost during {what} ({exc}); did "
                                       "the server exit?") from None
            except ProtocolError as exc:
                raise ModelOutputError(f"{where}: unusable reply to {what}: {exc}") from None
            self.last_round_trip_ns = time.perf_counter_ns() - t0
        if reply.get("ok") is not True:
            raise ModelOutputError(f"{where}: {what} failed on the server: "
                                   f"{str(reply.get('error'))[:500]}")
        return reply, payload

    def close(self) -> None:
        try:
            with self.lock:
                send_message(self.sock, {"op": "close"}, timeout_s=1.0)
                recv_message(self.sock, Limits(message_s=1.0), time.monotonic() + 1.0)
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


def response_dtype(text: Any, where: str) -> np.dtype:
    """The declared ``response_dtype``: a numpy dtype string of a numeric kind (bool,
    integer, float) with elements of at least one byte; :class:`ConfigError` otherwise
    (``|V0``, ``|O``, ``<U8``, ... are refused before any response is decoded)."""
    try:
        dtype = np.dtype(text) if isinstance(text, str) else None
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or dtype.kind not in NUMERIC_KINDS or dtype.itemsize < 1 or dtype.shape:
        raise ConfigError(f"{where}: response_dtype {str(text)[:40]!r} is not a numeric dtype "
                          "(expected bool, integer or float, e.g. '<f4', '<i8', '|u1')")
    return dtype


def check_description(desc: Any, where: str) -> dict[str, Any]:
    """The ``sut`` part of a server's hello reply, checked field by field:
    :class:`ConfigError` naming the field and ``where`` for anything the protocol does not
    allow."""
    if not isinstance(desc, dict):
        raise ConfigError(f"{where}: the hello reply has no 'sut' object (the served SUT's "
                          f"description); got {str(desc)[:80]}")

    def count(key: str, default: Any = None) -> int:
        value = desc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIBRARY:
            raise ConfigError(f"{where}: sut.{key} must be a whole number in 1..{MAX_LIBRARY}, "
                              f"got {str(value)[:40]}")
        return value

    name = desc.get("name")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        raise ConfigError(f"{where}: sut.name must be a non-empty string of at most {MAX_NAME} "
                          f"characters, got {str(name)[:40]}")
    takes_data = desc.get("takes_data") is True
    if takes_data and desc.get("total_count") is None:
        total = performance = None  # set by the harness's data (sut.options.data)
    else:
        total = count("total_count")
        performance = count("performance_count", total)
    labels = desc.get("labels")
    if labels is not None and (not isinstance(labels, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 31 for v in labels)):
        raise ConfigError(f"{where}: sut.labels must be a list of integer classes in 0..2^31-1, "
                          f"got {str(labels)[:80]}")
    info = desc.get("info") or {}
    if not isinstance(info, dict):
        raise ConfigError(f"{where}: sut.info must be an object, got {str(info)[:80]}")
    stateful = desc.get("stateful")
    return {**desc, "name": name, "total_count": total, "performance_count": performance,
            "takes_data": takes_data,
            "labels": labels, "info": info, "staged": desc.get("staged") is True,
            "stateful": None if stateful is None else str(stateful),
            "response_dtype": response_dtype(desc.get("response_dtype", "<f4"), where).str}


class RemoteSUT:
    """``issue(indices)`` as one request to the server; responses decoded as its declared
    ``response_dtype``; the server's stage timings (or call time) go to ``timer``, once
    checked against the round trip timed here (a server cannot have worked longer on a
    request than the request took)."""

    def __init__(self, conn: Connection, description: dict[str, Any]) -> None:
        self.conn = conn
        self.name = description["name"]
        dtype = response_dtype(description["response_dtype"], f"remote SUT at {conn.address}")
        self.response_dtype = dtype.str
        self.stateful = description.get("stateful")
        self.itemsize = dtype.itemsize
        self.real = dtype.kind == "f"
        self.staged = bool(description.get("staged"))
        self.timer = StageTimer(("preprocess", "inference") if self.staged else ("inference",))

    def issue(self, sample_indices: Sequence[int]) -> list[np.ndarray]:
        return self.query(sample_indices, "issue")

    def _fail(self, indices: list[int], what: str) -> ModelOutputError:
        return ModelOutputError(f"remote SUT {self.name!r} at {self.conn.address}: reply to "
                                f"samples {indices[:8]}: {what}")

    def query(self, sample_indices: Sequence[int], op: str) -> list[np.ndarray]:
        """One ``issue`` (or ``null``: no SUT call, nothing timed) request and its decoded
        responses."""
        indices = [int(i) for i in sample_indices]
        reply, payload = self.conn.request({"op": op, "indices": indices},
                                           f"{op} of samples {indices[:8]}")
        sizes = reply.get("sizes")
        if (not isinstance(sizes, list) or len(sizes) != len(indices)
                or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sizes)
                or sum(sizes) != len(payload)):
            raise self._fail(indices, f"{len(payload)} bytes in sizes {str(sizes)[:80]}, expected "
                                      "one size (bytes >= 0) per sample adding up to the payload")
        dtype, out, offset = self.response_dtype, [], 0
        for index, size in zip(indices, sizes):
            if size % self.itemsize:
                raise ModelOutputError(f"remote SUT {self.name!r}: response to sample {index} is "
                                       f"cut ({size} bytes of {dtype})")
            arr = np.frombuffer(payload, dtype=dtype, count=size // self.itemsize, offset=offset)
            if self.real and not np.isfinite(arr).all():
                raise ModelOutputError(f"remote SUT {self.name!r}: response to sample {index} is "
                                       f"non-finite ({size} bytes of {dtype})")
            out.append(arr)
            offset += size
        if op == "issue":
            self._record(reply, indices)
        return out

    def _claimed_ns(self, reply: dict[str, Any], indices: list[int]) -> list[list[int]]:
        """The server's timings of a reply, checked: per stage a list of one duration (ns,
        >= 0) per sample (staged), else one ``service_ns``; their total must fit in the
        round trip timed here."""
        n = len(indices)

        def durations(value: Any, key: str, length: int) -> list[int]:
            if (not isinstance(value, list) or len(value) != length or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)):
                raise self._fail(indices, f"{key} must hold {length} durations (whole ns >= 0), "
                                          f"got {str(value)[:80]}")
            return value

        if self.staged:
            stages = reply.get("stages")
            if not isinstance(stages, dict):
                raise self._fail(indices, f"'stages' (preprocess and inference ns per sample) "
                                          f"missing, got {str(stages)[:80]}")
            timings = [durations(stages.get(k), f"stages.{k}", n) for k in ("preprocess", "inference")]
        else:
            timings = [durations([reply.get("service_ns")], "service_ns", 1)]
        claimed = sum(sum(t) for t in timings)
        trip = self.conn.last_round_trip_ns
        if claimed > trip * (1 + CLAIM_TOLERANCE) + SLACK_NS:
            raise self._fail(indices, f"the server claims {claimed / 1e6:.6g} ms of service time, "
                                      f"but the whole round trip took {trip / 1e6:.6g} ms measured "
                                      "here; its timings are impossible (a wrong clock or unit?), "
                                      "so no latency of this SUT can be trusted")
        return timings

    def _record(self, reply: dict[str, Any], indices: list[int]) -> None:
        timings = self._claimed_ns(reply, indices)
        add = self.timer.add
        if self.staged:
            for stage, values in zip(("preprocess", "inference"), timings):
                for ns in values:
                    add(stage, ns)
        else:  # one call: its time per sample (divided when a query holds several samples)
            per_sample = timings[0][0] // max(len(indices), 1)
            for _ in indices:
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
           samples: Annotated[int, Field(ge=1)] | None = None,
           max_reply_bytes: Annotated[int, Field(ge=1024)] = Limits.reply_bytes,
           data: Literal["spoken_digits_8"] | None = None) -> BuiltSUT:
    """The ``remote`` entry of :data:`neuromark.registry.suts`: ``address`` of a
    :mod:`neuromark.system.remote_server` (``HOST:PORT``), ``timeout_s`` per whole reply
    (however slowly it trickles in), ``calibration`` transport round trips, ``samples``
    (default: the server's library), ``max_reply_bytes`` the largest reply payload accepted
    (the responses of one query; a reply announcing more is refused before it is read),
    ``data`` the benchmark's test data neuromark hands to a server whose SUT takes it
    (``takes_data``; issue 57.5): the task's test split (the first ``samples``), sent before
    the run in slices under the server's request limit; the labels stay here."""
    limits = Limits(payload_bytes=max_reply_bytes, message_s=timeout_s)
    conn = Connection(address, timeout_s, limits)
    try:
        reply, _ = conn.request({"op": "hello", "protocol": PROTOCOL}, "the version handshake")
    except ModelOutputError as exc:
        conn.close()
        raise ConfigError(f"sut.options.address: {exc}") from None
    if reply.get("protocol") != PROTOCOL:
        conn.close()
        raise ConfigError(f"sut.options.address: the server at {address} speaks remote SUT "
                          f"protocol {str(reply.get('protocol'))[:40]}, this neuromark speaks "
                          f"{PROTOCOL}; use the remote_server.py of this neuromark version")
    try:
        desc = check_description(reply.get("sut"), f"sut.options.address: the server at {address}")
        return _build(conn, desc, calibration, samples, data, reply.get("limits"))
    except BaseException:
        conn.close()
        raise


def hand_data(conn: Connection, desc: dict[str, Any], data: str, samples: int | None,
              limits: Any) -> tuple[dict[str, Any], np.ndarray, dict[str, Any]]:
    """Send the task ``data``'s test samples (the first ``samples``) to the server (``data``
    then ``put`` requests, each payload under the server's ``limits.payload_bytes``);
    returns the description with the library's size, the labels, and what was sent."""
    where = f"sut.options.data: remote SUT {conn.name!r} at {conn.address}"
    if not desc.get("takes_data"):
        raise ConfigError(f"{where} does not take the harness's data (its SUT declares no "
                          "takes_data = True); remove sut.options.data")
    _, test, keys = task_counts(SPOKEN_DIGITS_8)
    x, y = test.x[:samples], test.y[:samples]
    x = np.ascontiguousarray(x, dtype="<i2")
    conn.request({"op": "data", "name": data, "total_count": len(x), "dtype": x.dtype.str,
                  "shape": list(x.shape[1:])}, f"the announcement of data set {data!r}")
    limit = limits.get("payload_bytes") if isinstance(limits, dict) else None
    limit = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else 1 << 16
    per = max(1, limit // max(1, x[0].nbytes))
    for start in range(0, len(x), per):
        part = x[start:start + per]
        header = {"op": "put", "indices": list(range(start, start + len(part)))}
        _request_with_payload(conn, header, part.tobytes(), f"put of samples {start}..")
    sent = {"name": data, "task": SPOKEN_DIGITS_8.describe(), "samples": len(x),
            "classes": keys, "dtype": x.dtype.str, "shape": list(x.shape[1:]),
            "how": "handed to the server by neuromark before the run (data/put requests); "
                   "the labels stayed with neuromark"}
    total = len(x)
    return {**desc, "total_count": total, "performance_count": total}, y.astype(np.int64), sent


def _request_with_payload(conn: Connection, header: dict[str, Any], payload: bytes,
                          what: str) -> None:
    """One request carrying ``payload`` (a ``put``), its reply checked like any other."""
    with conn.lock:
        try:
            send_message(conn.sock, header, payload, timeout_s=conn.timeout_s)
            reply, _ = recv_message(conn.sock, conn.limits, time.monotonic() + conn.timeout_s)
        except (ProtocolError, OSError) as exc:
            raise ModelOutputError(f"remote SUT {conn.name!r} at {conn.address}: {what}: "
                                   f"{exc}") from None
    if reply.get("ok") is not True:
        raise ModelOutputError(f"remote SUT {conn.name!r} at {conn.address}: {what} failed on "
                               f"the server: {str(reply.get('error'))[:500]}")


def _build(conn: Connection, desc: dict[str, Any], calibration: int, samples: int | None,
           data: str | None = None, limits: Any = None) -> BuiltSUT:
    conn.name = desc["name"]
    handed: dict[str, Any] | None = None
    if data is not None:
        desc, harness_labels, handed = hand_data(conn, desc, data, samples, limits)
        desc = {**desc, "labels": None}
    elif desc["total_count"] is None:
        raise ConfigError(f"remote SUT {conn.name!r} at {conn.address} takes the harness's data "
                          "and has no library of its own; set sut.options.data (e.g. "
                          "spoken_digits_8)")
    total = desc["total_count"]
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
    library = RemoteLibrary(conn, conn.name, count, min(desc["performance_count"], count))
    transport = sut.calibrate(library, calibration)
    trip = transport["round_trip"]
    scores = {"transport_latency": Score(trip["mean_s"] * 1e3, error=trip["stderr_s"] * 1e3,
                                         unit="ms", higher_is_better=False)}
    if handed is not None:
        labels = harness_labels
    info = {**desc["info"], "label": desc["info"].get("label") or conn.name,
            **({"data": handed} if handed is not None else {}),
            "address": conn.address, "protocol": PROTOCOL,
            "remote_sut": conn.name, "staged": sut.staged, "library_size": total,
            "transport": transport}
    return BuiltSUT(sut, library, labels=labels, info=info, close=conn.close, scores=scores)
