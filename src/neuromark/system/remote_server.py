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
- ``null {indices}``: the same round trip and reply without calling the SUT (empty
  responses, ``service_ns``), for neuromark's transport calibration.
- ``close``: reply ``{ok}``, the connection ends; ``shutdown``: reply ``{ok}``, the server
  exits.

A failing request gets ``{ok: false, error: "<ExceptionType>: <message>"}`` and the
connection stays usable.
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
from typing import Any

#: The protocol version both sides must speak.
PROTOCOL = 1
#: Largest header or payload accepted (bytes): anything larger is not our protocol.
MAX_PART = 1 << 30
PREFIX = struct.Struct(">II")
#: ``response_dtype`` kind and size -> ``struct`` format character (number responses).
STRUCT_CODES = {"f4": "f", "f8": "d", "i1": "b", "u1": "B", "b1": "?", "i2": "h", "u2": "H",
                "i4": "i", "u4": "I", "i8": "q", "u8": "Q"}


class ProtocolError(Exception):
    """The peer does not speak this protocol, or the connection ended."""


def send_message(sock: socket.socket, header: dict, payload: bytes = b"") -> None:
    """Send one message: prefix, JSON header, payload."""
    head = json.dumps(header, separators=(",", ":")).encode()
    sock.sendall(PREFIX.pack(len(head), len(payload)) + head + payload)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes from ``sock``; :class:`ProtocolError` when the peer closes first."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ProtocolError(f"connection closed by the peer after {got} of {n} bytes")
        got += k
    return bytes(buf)


def recv_message(sock: socket.socket) -> tuple[dict, bytes]:
    """Receive one message: ``(header, payload)``."""
    n_head, n_payload = PREFIX.unpack(recv_exact(sock, PREFIX.size))
    if n_head > MAX_PART or n_payload > MAX_PART:
        raise ProtocolError(f"message of {n_head} + {n_payload} bytes: the peer does not speak "
                            f"the neuromark remote SUT protocol")
    try:
        header = json.loads(recv_exact(sock, n_head))
    except ValueError as exc:
        raise ProtocolError(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a JSON object")
    return header, recv_exact(sock, n_payload) if n_payload else b""


def dtype_code(dtype: str) -> str:
    """The ``struct`` character of a little-endian or byte-order-free dtype string."""
    code = STRUCT_CODES.get(dtype[1:]) if dtype[:1] in "<|" else None
    if code is None:
        raise ValueError(f"response_dtype {dtype!r}: expected one of "
                         f"{sorted('<' + k for k in STRUCT_CODES)} ('|' for one-byte types)")
    return code


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


class Session:
    """Answers one client's requests for one SUT (also usable without a socket)."""

    def __init__(self, sut: Any) -> None:
        self.sut = sut
        self.dtype = str(getattr(sut, "response_dtype", "<f4"))
        self.code = dtype_code(self.dtype)
        self.staged = callable(getattr(sut, "preprocess", None)) and callable(getattr(sut, "infer", None))
        if not self.staged and not callable(getattr(sut, "issue", None)):
            raise TypeError(f"SUT {type(sut).__name__}: needs issue(indices), or preprocess and infer")
        self.total = int(sut.total_count)
        if self.total < 1:
            raise ValueError(f"SUT {type(sut).__name__}: total_count must be >= 1, got {self.total}")

    def describe(self) -> dict:
        sut = self.sut
        labels = getattr(sut, "labels", None)
        return {"name": str(getattr(sut, "name", type(sut).__name__)), "total_count": self.total,
                "performance_count": int(getattr(sut, "performance_count", None) or self.total),
                "response_dtype": self.dtype, "staged": self.staged,
                "labels": None if labels is None else [int(v) for v in labels],
                "info": dict(getattr(sut, "info", None) or {}),
                "stateful": getattr(sut, "stateful", None)}

    def handle(self, header: dict) -> tuple[dict, bytes]:
        """The reply to one request; an exception becomes ``{ok: false, error}``."""
        op = header.get("op")
        try:
            if op in ("issue", "null", "load", "unload"):
                indices = [int(i) for i in header.get("indices", [])]
                bad = [i for i in indices if not 0 <= i < self.total]
                if bad:
                    raise IndexError(f"sample indices {bad[:8]} outside 0..{self.total - 1}")
                if op in ("issue", "null"):
                    return self.issue(indices, null=op == "null")
                hook = getattr(self.sut, op, None)
                if callable(hook):
                    hook(indices)
                return {"ok": True}, b""
            if op in ("close", "shutdown"):
                return {"ok": True}, b""
            raise ValueError(f"unknown op {op!r}")
        except Exception as exc:
            return {"ok": False, "op": op, "error": f"{type(exc).__name__}: {exc}"}, b""

    def issue(self, indices: list, null: bool = False) -> tuple[dict, bytes]:
        """The reply to ``issue``; with ``null`` the same path answers empty responses
        without calling the SUT (the transport calibration)."""
        clock, sut = time.perf_counter_ns, self.sut
        if null:
            t0 = clock()
            responses = [b""] * len(indices)
            timing = {"service_ns": clock() - t0}
        elif self.staged:
            get = getattr(sut, "get", None)
            pre, inf, responses = [], [], []
            for index in indices:
                sample = get(index) if callable(get) else index
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


def _serve_client(conn: socket.socket, session: Session) -> bool:
    """Serve one connection; True when the client asked the server to shut down."""
    header, _ = recv_message(conn)
    if header.get("op") != "hello" or header.get("protocol") != PROTOCOL:
        send_message(conn, {"ok": False, "protocol": PROTOCOL, "error": (
            f"protocol version mismatch: this server speaks version {PROTOCOL}, the client "
            f"sent {header.get('op')!r} with protocol {header.get('protocol')!r}")})
        return False
    send_message(conn, {"ok": True, "protocol": PROTOCOL, "server": "neuromark.remote_server",
                        "sut": session.describe()})
    while True:
        header, _ = recv_message(conn)
        reply, payload = session.handle(header)
        send_message(conn, reply, payload)
        if header.get("op") in ("close", "shutdown"):
            return header["op"] == "shutdown"


def serve(sut: Any, host: str = "127.0.0.1", port: int = 0, *, once: bool = False,
          announce: Any = print) -> None:
    """Serve ``sut`` on ``host:port`` until a client sends ``shutdown`` (or, with ``once``,
    until the first client leaves) or the process is interrupted. ``announce`` gets the
    line ``listening on HOST:PORT`` once the socket accepts connections."""
    session = Session(sut)
    with socket.create_server((host, port)) as server:
        bound = server.getsockname()
        announce(f"listening on {bound[0]}:{bound[1]}")
        while True:
            conn, _ = server.accept()
            with conn:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                try:
                    stop = _serve_client(conn, session)
                except (ProtocolError, OSError) as exc:
                    print(f"client dropped: {exc}", file=sys.stderr, flush=True)
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
    args = parser.parse_args(argv)
    try:
        options = json.loads(args.options)
    except ValueError as exc:
        raise SystemExit(f"--options: not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise SystemExit("--options: expected a JSON object")
    sut = load_factory(args.sut)(**options)
    try:
        serve(sut, args.host, args.port, once=args.once, announce=lambda s: print(s, flush=True))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
