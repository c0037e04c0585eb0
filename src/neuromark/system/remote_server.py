"""Serve a system under test (SUT) to neuromark over a socket: standard library only.

A hardware team copies this one file into its device SDK's Python environment (samna,
lava, a vendor SDK: any Python >= 3.8, no numpy, no neuromark) and runs::

    python remote_server.py --port 5555 --sut mymodule:make_sut [--options '{"k": 1}']

or, from Python, ``serve(make_sut(), port=5555)``. neuromark then runs LoadGen and the
power meters in its own process with ``sut: {name: remote, options: {address:
"HOST:5555"}}``. ``--sut`` is ``module:factory`` (imported with the current folder on the
path), ``path/to/file.py:factory``, or ``null`` (the built-in null SUT: it answers at once,
to measure the transport). ``--options`` is a JSON object of the factory's keyword
arguments. ``--port 0`` picks a free port; the server prints one line ``listening on
HOST:PORT`` when it accepts connections. One client is served at a time.

**The served SUT** (duck-typed; only ``total_count`` and ``issue`` or ``preprocess`` +
``infer`` are required)::

    name = "my-board"        # shown in errors and in the results
    total_count = 64         # samples in its library: indices 0 .. total_count - 1
    performance_count = 64   # samples held in memory at once (default: all)
    response_dtype = "<f4"   # numpy-style dtype string of a response's elements
    labels = None            # or one int class per sample (neuromark scores accuracy)
    info = {}                # JSON-able facts, recorded in the results (details.sut)
    stateful = None          # or why responses depend on the order of the queries
    def load(self, indices): ...      # bring samples into memory (untimed by LoadGen)
    def unload(self, indices): ...
    def issue(self, indices): ...     # one response per index; the server times the call
    # or, instead of issue, two stages the server times per sample (perf_counter_ns):
    def get(self, index): ...         # the loaded sample (default: the index itself)
    def preprocess(self, sample): ...
    def infer(self, features): ...

**The harness's data** (issue 57.5): a SUT that declares ``takes_data = True`` (and may
leave ``total_count`` out) never exports the benchmark's test data itself: neuromark sends it
(``sut: {name: remote, options: {address: ..., data: spoken_digits_8}}``; the labels stay
with neuromark). The SUT's ``accept_data(description)`` hook (optional) sees ``{name,
total_count, dtype, shape}`` first and may refuse it (raise); each sample then arrives as a
:class:`Sample` (``data`` bytes, ``dtype``, ``shape``; ``to_numpy()``, ``tolist()``), given
to ``preprocess`` (staged SUTs) or to ``issue_samples(samples)`` (a list, one per index).

A response is bytes (its raw little-endian elements), an object with ``dtype`` and
``tobytes()`` (a numpy array: its dtype must be ``response_dtype``), an object with
``tolist()``, a (nested) sequence of numbers, or one number.

**Protocol, version 1.** TCP; every message, either way, is an 8-byte prefix (two
big-endian uint32: header length H, payload length P), H bytes of a UTF-8 JSON object,
then P bytes of binary payload. Requests (``op``):

- ``hello {protocol}``: the first message; reply ``{ok, protocol, server, sut: {name,
  total_count, performance_count, response_dtype, staged, labels, info, stateful}}``. A
  different ``protocol`` gets ``{ok: false, protocol, error}`` and the connection closes.
- ``load {indices}`` / ``unload {indices}``: the SUT's ``load`` / ``unload``; reply ``{ok}``.
- ``issue {indices}``: reply ``{ok, sizes, stages | service_ns}``; the payload holds the
  responses' bytes one after another (``sizes[i]`` bytes each, elements little-endian
  ``response_dtype``). ``stages`` maps ``preprocess`` / ``inference`` to per-sample ns
  (staged SUTs); ``service_ns`` is the duration of the ``issue`` call otherwise.
- ``data {name, total_count, dtype, shape}``: the harness's data set is announced (a SUT
  with ``takes_data``); reply ``{ok}``. ``put {indices}``: the payload holds those samples'
  bytes one after another (``dtype``, ``shape`` each); reply ``{ok}``. The hello reply's
  ``sut.takes_data`` and ``limits.payload_bytes`` say whether and in what slices to send it.
- ``null {indices}``: the same round trip and reply without calling the SUT (empty
  responses, ``service_ns``), for neuromark's transport calibration.
- ``close``: reply ``{ok}``, the connection ends; ``shutdown``: reply ``{ok}``, the server
  exits.

A failing request gets ``{ok: false, error: "<ExceptionType>: <message>"}`` and the
connection stays usable.

**Limits** (:class:`Limits`; the server's defaults :data:`SERVER_LIMITS`, each a command
line option): a request header of at most 64 MiB (``--max-header-bytes``), nested at most
32 deep (``--max-json-depth``), no request payload above 64 KiB; a whole request must
arrive within 10 s of its first byte and a whole reply leave within 10 s
(``--message-timeout``); a client silent for 300 s between requests is dropped
(``--idle-timeout``), after a bad message too, and a client that sends no ``hello`` within
that time or sends 9 bad messages in a row is dropped; a reply payload is at most 1 GiB
(``--max-reply-bytes``). A request
that arrives whole but is not acceptable (not JSON, too deep, bad indices, a failing SUT)
gets an error reply and a line on stderr; a client beyond a size or a deadline gets an
error reply when it still reads, a line on stderr, and is disconnected; the server then
serves the next client.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import socket
import struct
import sys
import time
from dataclasses import dataclass
from typing import Any

#: The protocol version both sides must speak.
PROTOCOL = 1
PREFIX = struct.Struct(">II")
#: ``response_dtype`` kind and size -> ``struct`` format character (number responses).
STRUCT_CODES = {"f4": "f", "f8": "d", "i1": "b", "u1": "B", "b1": "?", "i2": "h", "u2": "H",
                "i4": "i", "u4": "I", "i8": "q", "u8": "Q"}
#: Bytes asked of the socket per ``recv`` (a part is gathered as it arrives, never
#: allocated whole from the size the peer announced).
CHUNK = 1 << 20
#: Bad messages in a row (not JSON, too deep) after which a client is dropped.
MAX_BAD_MESSAGES = 8


@dataclass(frozen=True)
class Limits:
    """What one side accepts from its peer; every size is checked before it is read.

    Args:
        header_bytes: largest JSON header of a message (bytes).
        payload_bytes: largest binary payload of a message (bytes).
        json_depth: deepest nesting of lists and objects in a header.
        message_s: seconds one whole message may take to arrive or to leave once its first
            byte is there (a peer that trickles it or stops reading is dropped).
        idle_s: seconds the server waits for a client's next request (a silent client is
            dropped so that the next one is served); None: no limit (the client side).
        reply_bytes: largest payload the server sends (responses of one request).
    """

    header_bytes: int = 1 << 26
    payload_bytes: int = 1 << 30
    json_depth: int = 32
    message_s: float = 10.0
    idle_s: float | None = None
    reply_bytes: int = 1 << 30


#: The server's limits on requests (which never carry a payload) by default.
SERVER_LIMITS = Limits(payload_bytes=1 << 16, idle_s=300.0)
#: The command-line options of those limits: (option, field, type, help).
LIMIT_OPTIONS = (
    ("--message-timeout", "message_s", float, "seconds a whole request may take to arrive, "
     "and a reply to leave"),
    ("--idle-timeout", "idle_s", float, "seconds to wait for a client's next request"),
    ("--max-header-bytes", "header_bytes", int, "largest request header"),
    ("--max-json-depth", "json_depth", int, "deepest nesting of a request header"),
    ("--max-reply-bytes", "reply_bytes", int, "largest reply payload (a request's responses)"))


class ProtocolError(Exception):
    """The peer does not speak this protocol, is too slow, or the connection ended: the
    stream cannot be trusted any more."""


class PeerClosed(ProtocolError):
    """The peer closed the connection (before or inside a message)."""


class MessageError(ProtocolError):
    """A whole message arrived but its header is not acceptable (not JSON, too deep, not an
    object): the stream is still in step, so the other side can answer an error."""


def send_message(sock: socket.socket, header: dict, payload: bytes = b"",
                 timeout_s: float | None = None) -> None:
    """Send one message: prefix, JSON header, payload. With ``timeout_s`` the whole message
    must leave within that many seconds (``sendall``'s timeout is its total duration), else
    ``TimeoutError``: a peer that does not read cannot hold the sender."""
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    caller = sock.gettimeout()
    try:
        if timeout_s is not None:
            sock.settimeout(timeout_s)
        sock.sendall(PREFIX.pack(len(head), len(payload)) + head + payload)
    finally:  # the caller's own timeout is never replaced
        if timeout_s is not None:
            _restore_timeout(sock, caller)


def _restore_timeout(sock: socket.socket, timeout: float | None) -> None:
    """Give ``sock`` back the timeout its caller had set (a closed socket is left alone)."""
    try:
        sock.settimeout(timeout)
    except OSError:
        pass


def recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    """``n`` bytes from ``sock`` by ``deadline`` (``time.monotonic()``; ``TimeoutError``
    after it, whatever the number of ``recv`` calls); :class:`ProtocolError` when the peer
    closes first. Memory grows with the bytes received, not with ``n``."""
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{got} of {n} bytes arrived before the deadline")
            sock.settimeout(left)
        chunk = sock.recv(min(n - got, CHUNK))
        if not chunk:
            raise PeerClosed(f"connection closed by the peer after {got} of {n} bytes")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def json_depth(value: Any) -> int:
    """Deepest nesting of lists and dicts in ``value`` (a scalar: 0); iterative."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (a number must be finite)")


def parse_header(raw: bytes, limits: Limits) -> dict:
    """A message header: a UTF-8 JSON object (strict: no NaN or Infinity) nested at most
    ``limits.json_depth`` deep; :class:`MessageError` otherwise (a parser's
    ``RecursionError`` included)."""
    try:
        header = json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        text = "nested too deeply to parse" if isinstance(exc, RecursionError) else str(exc)[:200]
        raise MessageError(f"header is not JSON: {text}") from None
    if not isinstance(header, dict):
        raise MessageError(f"header is a JSON {type(header).__name__}, not an object")
    depth = json_depth(header)
    if depth > limits.json_depth:
        raise MessageError(f"header nested {depth} deep; the limit is {limits.json_depth}")
    return header


def recv_message(sock: socket.socket, limits: Limits = Limits(),
                 deadline: float | None = None) -> tuple[dict, bytes]:
    """Receive one message: ``(header, payload)``. Waits up to ``limits.idle_s`` for its
    first byte (no idle limit: the socket's own timeout, the caller's), then the whole
    message must arrive within ``limits.message_s``; with ``deadline``
    (``time.monotonic()``) the whole message, first byte included, must also arrive by then
    (``TimeoutError``). The caller's socket timeout is in force again afterwards, whatever
    happened. Sizes above the limits are refused before anything is read
    (:class:`ProtocolError`), a bad header after the whole message was read
    (:class:`MessageError`)."""
    caller = sock.gettimeout()
    try:
        return _recv_message(sock, limits, deadline, caller)
    finally:
        _restore_timeout(sock, caller)


def _recv_message(sock: socket.socket, limits: Limits, deadline: float | None,
                  caller: float | None) -> tuple[dict, bytes]:
    wait = limits.idle_s if limits.idle_s is not None else caller
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no time left for the reply")
        wait = left if wait is None else min(wait, left)
    sock.settimeout(wait)
    first = sock.recv(1)
    if not first:
        raise PeerClosed("connection closed by the peer")
    end = time.monotonic() + limits.message_s
    deadline = end if deadline is None else min(deadline, end)
    n_head, n_payload = PREFIX.unpack(first + recv_exact(sock, PREFIX.size - 1, deadline))
    if n_head > limits.header_bytes or n_payload > limits.payload_bytes:
        raise ProtocolError(f"message announces a {n_head}-byte header and a {n_payload}-byte "
                            f"payload; the limits are {limits.header_bytes} and "
                            f"{limits.payload_bytes} bytes (or the peer does not speak the "
                            "neuromark remote SUT protocol)")
    raw = recv_exact(sock, n_head, deadline)
    payload = recv_exact(sock, n_payload, deadline) if n_payload else b""
    return parse_header(raw, limits), payload


def dtype_code(dtype: str) -> str:
    """The ``struct`` character of a little-endian or byte-order-free dtype string."""
    code = STRUCT_CODES.get(dtype[1:]) if dtype[:1] in "<|" else None
    if code is None:
        raise ValueError(f"response_dtype {dtype!r}: expected one of "
                         f"{sorted('<' + k for k in STRUCT_CODES)} ('|' for one-byte types)")
    return code


def _whole(value: Any) -> bool:
    """An integer, or a float (or numpy scalar) of a whole value."""
    try:
        return float(value) == int(value)
    except (TypeError, ValueError, OverflowError):
        return False


def _flat(value: Any) -> list:
    if isinstance(value, (list, tuple)):
        return [x for item in value for x in _flat(item)]
    return [value]


def to_bytes(response: Any, dtype: str, code: str) -> bytes:
    """One response as raw little-endian elements of ``dtype`` (see the module docstring)."""
    if isinstance(response, (bytes, bytearray, memoryview)):
        return bytes(response)
    if hasattr(response, "dtype") and hasattr(response, "tobytes"):
        got = getattr(response.dtype, "str", str(response.dtype))
        if got != dtype:
            raise ValueError(f"response of dtype {got}, declared response_dtype {dtype}")
        return response.tobytes()
    if hasattr(response, "tolist"):
        response = response.tolist()
    values = _flat(response)
    return struct.pack(f"<{len(values)}{code}", *values)


class Sample:
    """One sample of the harness's data: ``data`` (raw little-endian bytes), ``dtype`` (a
    numpy-style string such as ``<i2``) and ``shape`` (a tuple)."""

    __slots__ = ("data", "dtype", "shape")

    def __init__(self, data: bytes, dtype: str, shape: tuple) -> None:
        self.data, self.dtype, self.shape = data, dtype, shape

    def to_numpy(self) -> Any:
        """The sample as a numpy array: for a SUT whose Python has numpy (the server itself
        never imports it)."""
        numpy = importlib.import_module("numpy")
        return numpy.frombuffer(self.data, dtype=self.dtype).reshape(self.shape)

    def tolist(self) -> list:
        """The sample's elements as a flat list of numbers (standard library only)."""
        code = dtype_code(self.dtype)
        return list(struct.unpack(f"<{len(self.data) // struct.calcsize(code)}{code}", self.data))


#: Most samples the harness may hand a SUT, and the largest one (bytes).
MAX_DATA_SAMPLES, MAX_SAMPLE_BYTES = 10 ** 7, 1 << 24


class Session:
    """Answers one client's requests for one SUT (also usable without a socket)."""

    def __init__(self, sut: Any) -> None:
        self.sut = sut
        self.takes_data = getattr(sut, "takes_data", False) is True
        self.data: dict | None = None  # the announced data set
        self.samples: dict = {}
        self.dtype = str(getattr(sut, "response_dtype", "<f4"))
        self.code = dtype_code(self.dtype)
        self.staged = callable(getattr(sut, "preprocess", None)) and callable(getattr(sut, "infer", None))
        if self.takes_data and not self.staged and not callable(getattr(sut, "issue_samples", None)):
            raise TypeError(f"SUT {type(sut).__name__}: takes_data needs preprocess and infer, "
                            "or issue_samples(samples)")
        if not self.staged and not self.takes_data and not callable(getattr(sut, "issue", None)):
            raise TypeError(f"SUT {type(sut).__name__}: needs issue(indices), or preprocess and infer")
        if self.takes_data and getattr(sut, "total_count", None) is None:
            self.total = 0  # set by the harness's data
        else:
            self.total = int(sut.total_count)
            if self.total < 1:
                raise ValueError(f"SUT {type(sut).__name__}: total_count must be >= 1, got {self.total}")

    def describe(self) -> dict:
        """The ``sut`` part of the hello reply; a SUT attribute that is not what the
        protocol says (labels that are not integers, ``info`` that is not JSON) raises
        ``ValueError`` naming it."""
        sut = self.sut
        labels = getattr(sut, "labels", None)
        if labels is not None:
            labels = list(labels)
            bad = [(i, v) for i, v in enumerate(labels)
                   if isinstance(v, bool) or not isinstance(v, int) and not _whole(v)]
            if bad:
                raise ValueError(f"SUT labels: label {bad[0][0]} is {bad[0][1]!r}, not an integer "
                                 f"class ({len(bad)} such labels)")
            labels = [int(v) for v in labels]
        info = getattr(sut, "info", None) or {}
        if not isinstance(info, dict):
            raise ValueError(f"SUT info: a dict expected, got {type(info).__name__}")
        try:
            json.dumps(info, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError(f"SUT info is not JSON: {exc}") from None
        performance = getattr(sut, "performance_count", None) or self.total
        stateful = getattr(sut, "stateful", None)
        if self.takes_data and self.total == 0:
            performance = None
        elif not _whole(performance) or not 1 <= int(performance):
            raise ValueError(f"SUT performance_count: a whole number >= 1 expected, got {performance!r}")
        return {"name": str(getattr(sut, "name", type(sut).__name__)),
                "total_count": self.total or None, "takes_data": self.takes_data,
                "performance_count": None if performance is None else int(performance),
                "response_dtype": self.dtype,
                "staged": self.staged, "labels": labels, "info": info,
                "stateful": None if stateful is None else str(stateful)}

    def handle(self, header: dict, payload: bytes = b"") -> tuple[dict, bytes]:
        """The reply to one request (``payload``: a ``put``'s samples); an exception becomes
        ``{ok: false, error}``."""
        op = header.get("op")
        try:
            if op == "data":
                return self.accept_data(header)
            if op == "put" and self.data is None:
                raise ValueError("put before data: announce the data set first")
            if op in ("issue", "null", "load", "unload", "put"):
                indices = header.get("indices", [])
                if not isinstance(indices, list) or not all(
                        isinstance(i, int) and not isinstance(i, bool) for i in indices):
                    raise ValueError(f"{op}: 'indices' must be a list of integers, got "
                                     f"{json.dumps(indices)[:80]}")
                bad = [i for i in indices if not 0 <= i < self.total]
                if bad:
                    raise IndexError(f"sample indices {bad[:8]} outside 0..{self.total - 1}")
                if op == "put":
                    return self.put(indices, payload)
                if op == "issue" and self.takes_data:
                    missing = [i for i in indices if i not in self.samples]
                    if missing:
                        raise ValueError(f"samples {missing[:8]} were not handed over (put) yet")
                if op in ("issue", "null"):
                    return self.issue(indices, null=op == "null")
                hook = getattr(self.sut, op, None)
                if callable(hook):
                    hook(indices)
                return {"ok": True}, b""
            if op in ("close", "shutdown"):
                return {"ok": True}, b""
            raise ValueError(f"unknown op {json.dumps(op)[:80]}")
        except Exception as exc:
            return {"ok": False, "op": op if isinstance(op, str) else None,
                    "error": f"{type(exc).__name__}: {exc}"}, b""

    def accept_data(self, header: dict) -> tuple[dict, bytes]:
        """``data``: the harness's data set announced (see the module docstring)."""
        if not self.takes_data:
            raise ValueError("this SUT does not take the harness's data (no takes_data = True); "
                             "remove sut.options.data")
        total, dtype, shape = header.get("total_count"), header.get("dtype"), header.get("shape")
        if isinstance(total, bool) or not isinstance(total, int) or not 1 <= total <= MAX_DATA_SAMPLES:
            raise ValueError(f"data: total_count must be a whole number in 1..{MAX_DATA_SAMPLES}")
        if not isinstance(shape, list) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                  and n >= 0 for n in shape):
            raise ValueError("data: shape must be a list of whole numbers")
        code = dtype_code(str(dtype))
        size = struct.calcsize(code)
        for n in shape:
            size *= n
        if size > MAX_SAMPLE_BYTES:
            raise ValueError(f"data: a sample of {size} bytes; the limit is {MAX_SAMPLE_BYTES}")
        fixed = getattr(self.sut, "total_count", None)
        if fixed is not None and total > int(fixed):
            raise ValueError(f"data: {total} samples, but the SUT declares total_count {fixed}")
        description = {"name": str(header.get("name")), "total_count": total, "dtype": dtype,
                       "shape": tuple(shape), "sample_bytes": size}
        hook = getattr(self.sut, "accept_data", None)
        if callable(hook):
            hook(dict(description))
        self.data, self.samples, self.total = description, {}, total
        return {"ok": True}, b""

    def put(self, indices: list, payload: bytes) -> tuple[dict, bytes]:
        """``put``: samples of the announced data set, their bytes one after another."""
        if self.data is None:
            raise ValueError("put before data: announce the data set first")
        size = self.data["sample_bytes"]
        if len(payload) != size * len(indices):
            raise ValueError(f"put: {len(payload)} bytes for {len(indices)} samples of {size} bytes")
        for k, index in enumerate(indices):
            self.samples[index] = Sample(payload[k * size:(k + 1) * size], self.data["dtype"],
                                         self.data["shape"])
        return {"ok": True}, b""

    def issue(self, indices: list, null: bool = False) -> tuple[dict, bytes]:
        """The reply to ``issue``; with ``null`` the same path answers empty responses
        without calling the SUT (the transport calibration)."""
        clock, sut = time.perf_counter_ns, self.sut
        if null:
            t0 = clock()
            responses = [b""] * len(indices)
            timing = {"service_ns": clock() - t0}
        elif self.takes_data and not self.staged:
            t0 = clock()
            responses = list(sut.issue_samples([self.samples[i] for i in indices]))
            timing = {"service_ns": clock() - t0}
            if len(responses) != len(indices):
                raise ValueError(f"issue_samples returned {len(responses)} responses for "
                                 f"{len(indices)} samples")
        elif self.staged:
            get = None if self.takes_data else getattr(sut, "get", None)
            pre, inf, responses = [], [], []
            for index in indices:
                sample = (self.samples[index] if self.takes_data
                          else get(index) if callable(get) else index)
                t0 = clock()
                features = sut.preprocess(sample)
                t1 = clock()
                responses.append(sut.infer(features))
                t2 = clock()
                pre.append(t1 - t0)
                inf.append(t2 - t1)
            timing: dict = {"stages": {"preprocess": pre, "inference": inf}}
        else:
            t0 = clock()
            responses = list(sut.issue(indices))
            timing = {"service_ns": clock() - t0}
            if len(responses) != len(indices):
                raise ValueError(f"issue returned {len(responses)} responses for {len(indices)} samples")
        parts = []
        for index, response in zip(indices, responses):
            try:
                parts.append(to_bytes(response, self.dtype, self.code))
            except Exception as exc:
                raise ValueError(f"response to sample {index}: {exc}") from exc
        return {"ok": True, "sizes": [len(p) for p in parts], **timing}, b"".join(parts)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _serve_client(conn: socket.socket, session: Session, limits: Limits) -> bool:
    """Serve one connection; True when the client asked the server to shut down. A request
    that arrived whole but is not acceptable gets an error reply (the connection stays);
    a broken, oversized or slow one ends the connection (:class:`ProtocolError`, ``OSError``)."""
    send_s = limits.message_s

    def reply_error(exc: Exception) -> None:
        _log(f"bad request: {exc}")
        send_message(conn, {"ok": False, "error": f"{type(exc).__name__}: {exc}"}, timeout_s=send_s)

    # the handshake: bad messages are answered, the hello is awaited at most idle_s in all
    # (bad messages do not restart the wait) and after at most MAX_BAD_MESSAGES of them
    hello_by = time.monotonic() + limits.idle_s if limits.idle_s is not None else None
    for _ in range(MAX_BAD_MESSAGES + 1):
        try:
            header, _ = recv_message(conn, limits, hello_by)
            break
        except MessageError as exc:
            reply_error(exc)
    else:
        raise ProtocolError(f"{MAX_BAD_MESSAGES + 1} bad messages and no hello")
    if header.get("op") != "hello" or header.get("protocol") != PROTOCOL:
        send_message(conn, {"ok": False, "protocol": PROTOCOL, "error": (
            f"protocol version mismatch: this server speaks version {PROTOCOL}, the client "
            f"sent {json.dumps(header.get('op'))[:40]} with protocol "
            f"{json.dumps(header.get('protocol'))[:40]}")}, timeout_s=send_s)
        return False
    try:
        description = session.describe()
    except Exception as exc:
        _log(f"hello failed: {type(exc).__name__}: {exc}")
        send_message(conn, {"ok": False, "protocol": PROTOCOL,
                            "error": f"{type(exc).__name__}: {exc}"}, timeout_s=send_s)
        return False
    send_message(conn, {"ok": True, "protocol": PROTOCOL, "server": "neuromark.remote_server",
                        "sut": description, "limits": {"payload_bytes": limits.payload_bytes}},
                 timeout_s=send_s)
    bad = 0
    while True:
        try:
            header, payload = recv_message(conn, limits)
        except MessageError as exc:
            reply_error(exc)
            bad += 1
            if bad > MAX_BAD_MESSAGES:
                raise ProtocolError(f"{bad} bad messages in a row") from None
            continue
        bad = 0
        reply, payload = session.handle(header, payload)
        if not reply.get("ok"):
            _log(f"request failed: {reply.get('error')}")
        if len(payload) > limits.reply_bytes:
            reply, payload = {"ok": False, "op": reply.get("op"), "error": (
                f"ValueError: the reply holds {len(payload)} bytes of responses; the server's "
                f"limit is {limits.reply_bytes} (--max-reply-bytes)")}, b""
            _log(reply["error"])
        send_message(conn, reply, payload, timeout_s=send_s)
        if header.get("op") in ("close", "shutdown"):
            return header["op"] == "shutdown"


def serve(sut: Any, host: str = "127.0.0.1", port: int = 0, *, once: bool = False,
          announce: Any = print, limits: Limits = SERVER_LIMITS) -> None:
    """Serve ``sut`` on ``host:port`` until a client sends ``shutdown`` (or, with ``once``,
    until the first client leaves) or the process is interrupted. ``announce`` gets the
    line ``listening on HOST:PORT`` once the socket accepts connections. One client is
    served at a time; ``limits`` bound what it may send and how slowly (a client beyond
    them is dropped with a line on stderr, and the server goes on)."""
    session = Session(sut)
    with socket.create_server((host, port)) as server:
        bound = server.getsockname()
        announce(f"listening on {bound[0]}:{bound[1]}")
        while True:
            try:
                conn, peer = server.accept()
            except OSError as exc:  # a connection aborted while queued, out of descriptors
                _log(f"accept failed: {exc}")
                time.sleep(0.1)
                continue
            with conn:
                try:
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    stop = _serve_client(conn, session, limits)
                except (socket.timeout, TimeoutError) as exc:  # noqa: UP041 (distinct before 3.10)
                    _log(f"client {peer[0]}:{peer[1]} dropped: too slow, silent or not reading "
                         f"({exc or 'timed out'}; limits: {limits.message_s:g} s a message, "
                         f"{limits.idle_s} s between requests)")
                    stop = False
                except PeerClosed as exc:
                    _log(f"client {peer[0]}:{peer[1]} left: {exc}")
                    stop = False
                except Exception as exc:  # whatever a client sends, the server goes on
                    _log(f"client {peer[0]}:{peer[1]} dropped: {type(exc).__name__}: {exc}")
                    if isinstance(exc, ProtocolError):
                        try:  # say why, if the client still listens (best effort, short)
                            send_message(conn, {"ok": False, "error": f"ProtocolError: {exc}"},
                                         timeout_s=1.0)
                        except Exception:
                            pass
                    stop = False
            if stop or once:
                return


class NullSUT:
    """The built-in ``null`` SUT: answers every sample at once with an empty response."""

    name = "null"
    response_dtype = "<f4"

    def __init__(self, samples: int = 64) -> None:
        self.total_count = samples

    def issue(self, indices: list) -> list:
        return [b""] * len(indices)


def load_factory(spec: str) -> Any:
    """``module:factory``, ``path/file.py:factory`` or ``null`` -> the factory."""
    if spec == "null":
        return NullSUT
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise SystemExit(f"--sut {spec!r}: expected module:factory, file.py:factory or null")
    if module_name.endswith(".py"):
        location = importlib.util.spec_from_file_location(os.path.basename(module_name)[:-3], module_name)
        if location is None or not os.path.isfile(module_name):
            raise SystemExit(f"--sut {spec!r}: no file {module_name}")
        module = importlib.util.module_from_spec(location)
        location.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    factory = getattr(module, attr, None)
    if factory is None:
        raise SystemExit(f"--sut {spec!r}: {module_name} has no {attr!r}")
    return factory


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a system under test to neuromark "
                                     f"(remote SUT protocol version {PROTOCOL}).")
    parser.add_argument("--host", default="127.0.0.1", help="interface (0.0.0.0: every one)")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: a free one)")
    parser.add_argument("--sut", default="null", help="module:factory, file.py:factory or null")
    parser.add_argument("--options", default="{}", help="JSON object of the factory's arguments")
    parser.add_argument("--once", action="store_true", help="exit when the first client leaves")
    for flag, name, kind, text in LIMIT_OPTIONS:
        parser.add_argument(flag, type=kind, default=getattr(SERVER_LIMITS, name),
                            help=f"{text} (default: %(default)s)")
    args = parser.parse_args(argv)
    values = {name: getattr(args, flag[2:].replace("-", "_")) for flag, name, _, _ in LIMIT_OPTIONS}
    if any(not v > 0 for v in values.values()):
        raise SystemExit(f"limits must be > 0, got {values}")
    limits = Limits(**{**SERVER_LIMITS.__dict__, **values})
    try:
        options = json.loads(args.options)
    except ValueError as exc:
        raise SystemExit(f"--options: not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise SystemExit("--options: expected a JSON object")
    factory = load_factory(args.sut)
    try:
        sut = factory(**options)
        Session(sut)  # the SUT's declarations, checked before the port opens
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"--sut {args.sut}: {type(exc).__name__}: {exc}") from None
    try:
        serve(sut, args.host, args.port, once=args.once, announce=lambda s: print(s, flush=True),
              limits=limits)
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        raise SystemExit(f"cannot serve on {args.host}:{args.port}: {exc}") from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
