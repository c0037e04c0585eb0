"""The remote SUT protocol against hostile peers (issue 41): every read has a deadline per
message, every size is bounded before it is read, the one-client server drops a client
that is slow, silent or not reading and survives whatever bytes it sends (an error reply
and a log line), and the client refuses a server's malformed replies naming what.

The server runs in a thread of this process with small limits; the hostile peers are raw
sockets on localhost."""

from __future__ import annotations

import json
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from neuromark.errors import ConfigError, ModelOutputError
from neuromark.system import remote_server
from neuromark.system.remote_server import (
    PREFIX,
    PROTOCOL,
    Limits,
    NullSUT,
    recv_message,
    send_message,
    serve,
)
from neuromark.system.suts.remote import Connection, RemoteSUT, remote, response_dtype

#: Time limits long enough that a legitimate client on a loaded 2-core machine is never
#: dropped (a starved server thread), short enough to keep the tests quick; the bounds the
#: tests assert leave several times these limits (load only makes things slower).
SMALL = Limits(header_bytes=4096, payload_bytes=0, json_depth=8, message_s=1.0, idle_s=1.5,
               reply_bytes=1 << 24)


class Big:
    """Answers 1 MiB per sample: a client that does not read fills the socket at once."""

    name, total_count = "big", 4

    def issue(self, indices):
        return [b"\0" * (1 << 20) for _ in indices]


class Labelled:
    """A SUT whose labels are text, not integer classes."""

    name, total_count, labels = "labelled", 2, ["cat", "dog"]

    def issue(self, indices):
        return [b""] * len(indices)


@contextmanager
def running(sut, limits=SMALL):
    """``serve(sut)`` in a daemon thread; yields ``(host, port)``; shuts it down after."""
    bound: list[str] = []
    ready = threading.Event()

    def announce(line):
        bound.append(line.split()[-1])
        ready.set()

    thread = threading.Thread(target=serve, args=(sut,), daemon=True,
                              kwargs={"announce": announce, "limits": limits})
    thread.start()
    assert ready.wait(10)
    host, port = bound[0].rsplit(":", 1)
    try:
        yield host, int(port)
    finally:
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            send_message(sock, {"op": "hello", "protocol": PROTOCOL})
            if recv_message(sock)[0]["ok"]:  # a SUT that fails its hello cannot be shut down
                send_message(sock, {"op": "shutdown"})
                recv_message(sock)
                thread.join(timeout=10)
                assert not thread.is_alive(), "the server did not shut down"


def hello(address, timeout=20.0):
    sock = socket.create_connection(address, timeout=timeout)
    send_message(sock, {"op": "hello", "protocol": PROTOCOL})
    reply, _ = recv_message(sock)
    return sock, reply


def raw_message(head: bytes) -> bytes:
    return PREFIX.pack(len(head), 0) + head


def assert_still_serving(address):
    t0 = time.monotonic()
    sock, reply = hello(address)
    with sock:
        assert reply["ok"] is True
        send_message(sock, {"op": "null", "indices": [0]})
        assert recv_message(sock)[0]["ok"] is True
    return time.monotonic() - t0


def test_remote_server_survives_deeply_nested_json(capsys):
    with running(NullSUT(4)) as address:
        with socket.create_connection(address, timeout=2) as sock:
            for head in (b"[" * 2040 + b"]" * 2040, b'{"a":' * 20 + b"1" + b"}" * 20):
                sock.sendall(raw_message(head))
                reply, _ = recv_message(sock)
                assert reply["ok"] is False and "nested" in reply["error"]
            # the same connection goes on: the stream was still in step
            send_message(sock, {"op": "hello", "protocol": PROTOCOL})
            assert recv_message(sock)[0]["ok"] is True
        assert_still_serving(address)
    assert "bad request: header nested 20 deep; the limit is 8" in capsys.readouterr().err


def test_remote_server_answers_bad_headers_and_indices_with_an_error(capsys):
    with running(NullSUT(4)) as address:
        sock, _ = hello(address)
        with sock:
            for head in (b"\xff\xfe not json", b"[1, 2]", b'"text"', b'{"op": "issue", "x": NaN}'):
                sock.sendall(raw_message(head))
                reply, _ = recv_message(sock)
                assert reply["ok"] is False and "header is" in reply["error"]
            for indices, message in (("cat", "list of integers"), ([1.5], "list of integers"),
                                     ([True], "list of integers"), ({"a": 1}, "list of integers"),
                                     ([9], "outside 0..3")):
                send_message(sock, {"op": "issue", "indices": indices})
                reply, _ = recv_message(sock)
                assert reply["ok"] is False and message in reply["error"], reply
            send_message(sock, {"op": ["unknown"]})
            assert "unknown op" in recv_message(sock)[0]["error"]
        assert_still_serving(address)
    assert "request failed: ValueError: issue: 'indices' must be a list" in capsys.readouterr().err


def test_remote_server_survives_text_labels_with_an_error_reply(capsys):
    with running(Labelled()) as address:
        sock, reply = hello(address)
        sock.close()
        assert reply["ok"] is False and "label 0 is 'cat', not an integer class" in reply["error"]
        with pytest.raises(ConfigError, match="label 0 is 'cat', not an integer class"):
            remote(address=f"{address[0]}:{address[1]}", timeout_s=2)
        # still listening: the next client gets the same clear answer
        assert "'cat'" in hello(address)[1]["error"]
    assert "hello failed: ValueError: SUT labels" in capsys.readouterr().err


def test_remote_server_refuses_a_header_longer_than_the_limit_before_reading_it(capsys):
    with running(NullSUT(4)) as address:
        with socket.create_connection(address, timeout=2) as sock:
            sock.sendall(PREFIX.pack(1 << 30, 0))  # announces a 1-GiB header, sends nothing
            reply, _ = recv_message(sock)
            assert reply["ok"] is False and "1073741824-byte header" in reply["error"]
            assert sock.recv(1) == b""  # and the connection is closed
        assert assert_still_serving(address) < 10.0  # not stuck on the announced GiB
    assert "limits are 4096 and 0 bytes" in capsys.readouterr().err


def test_remote_server_drops_a_client_that_trickles_a_request(capsys):
    with running(NullSUT(4)) as address:
        message = raw_message(json.dumps({"op": "hello", "protocol": PROTOCOL}).encode())
        with socket.create_connection(address, timeout=2) as sock:
            sent = 0
            try:  # one byte every 100 ms: each in time for a recv, the whole message is not
                for byte in message:
                    sock.sendall(bytes([byte]))
                    sent += 1
                    time.sleep(0.1)
                    if select.select([sock], [], [], 0)[0]:
                        break  # the server answered (an error) or closed
            except OSError:
                pass
            assert sent < len(message)
        assert_still_serving(address)
    assert "too slow, silent or not reading" in capsys.readouterr().err


def test_remote_server_drops_a_silent_client(capsys):
    with running(NullSUT(4)) as address:
        silent = socket.create_connection(address, timeout=2)
        try:
            waited = assert_still_serving(address)  # served once the silent one is dropped
        finally:
            silent.close()
        assert 0.5 * SMALL.idle_s < waited < 20.0  # dropped after the limit, not never
    assert "too slow, silent or not reading" in capsys.readouterr().err


def test_remote_server_drops_a_client_that_does_not_read_replies(capsys):
    with running(Big()) as address:
        sock, _ = hello(address)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        with sock:
            for _ in range(16):  # 16 MiB of replies asked, none read
                send_message(sock, {"op": "issue", "indices": [0]})
            assert assert_still_serving(address) < 20.0
    assert "too slow, silent or not reading" in capsys.readouterr().err


@contextmanager
def fake_server(answer):
    """A thread accepting one client: ``answer(conn)`` plays the server's part."""
    listener = socket.create_server(("127.0.0.1", 0))

    def run():
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            try:
                answer(conn)
            except OSError:
                pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        thread.join(timeout=10)


def replying(*replies):
    """A server part: answers each request with the next ``(header, payload)``."""
    def answer(conn):
        for header, payload in replies:
            recv_message(conn)
            send_message(conn, header, payload)
        try:
            recv_message(conn)  # the client's close
            send_message(conn, {"ok": True})
        except Exception:
            pass
    return answer


DESCRIPTION = {"name": "fake", "total_count": 4, "performance_count": 4, "response_dtype": "<f4",
               "staged": False, "labels": None, "info": {}, "stateful": None}


def test_remote_client_refuses_a_hello_without_sut():
    with fake_server(replying(({"ok": True, "protocol": PROTOCOL}, b""))) as address:
        with pytest.raises(ConfigError, match=f"server at {address}: the hello reply has no 'sut'"):
            remote(address=address, timeout_s=2)


@pytest.mark.parametrize("dtype", ["|V0", "|O", "<U8", "<M8[ns]", "nonsense", 7])
def test_remote_client_refuses_non_numeric_response_dtypes(dtype):
    sut = {**DESCRIPTION, "response_dtype": dtype}
    with fake_server(replying(({"ok": True, "protocol": PROTOCOL, "sut": sut}, b""))) as address:
        with pytest.raises(ConfigError, match=re.escape(f"response_dtype '{dtype}' is not a numeric dtype")):
            remote(address=address, timeout_s=2)
    assert response_dtype("|u1", "x") == np.dtype("u1")


@pytest.mark.parametrize("field, value, message", [
    ("total_count", 0, "sut.total_count must be a whole number in 1..10000000"),
    ("total_count", "12", "sut.total_count must be a whole number in 1..10000000"),
    ("performance_count", 10 ** 18, "sut.performance_count must be a whole number in 1..10000000"),
    ("labels", ["cat"], "sut.labels must be a list of integer classes"),
    ("labels", [10 ** 30], "sut.labels must be a list of integer classes"),
    ("labels", [-1], "sut.labels must be a list of integer classes"),
    ("name", "x" * 1000, "sut.name must be a non-empty string of at most 200"),
    ("name", None, "sut.name must be a non-empty string")])
def test_remote_client_refuses_a_malformed_sut_description(field, value, message):
    sut = {**DESCRIPTION, field: value}
    with fake_server(replying(({"ok": True, "protocol": PROTOCOL, "sut": sut}, b""))) as address:
        with pytest.raises(ConfigError, match=message):
            remote(address=address, timeout_s=2)


def issue_against(answer, description=DESCRIPTION, timeout_s=2.0, limits=None):
    with fake_server(answer) as address:
        conn = Connection(address, timeout_s, limits)
        try:
            return RemoteSUT(conn, description).issue([0])
        finally:
            conn.sock.close()


def test_remote_client_refuses_empty_stage_lists():
    staged = {**DESCRIPTION, "staged": True}
    reply = {"ok": True, "sizes": [0], "stages": {"preprocess": [], "inference": []}}
    with pytest.raises(ModelOutputError, match=r"'fake' at .*: reply to samples \[0\]: "
                                               r"stages.preprocess must hold 1 durations"):
        issue_against(replying((reply, b"")), staged)
    with pytest.raises(ModelOutputError, match="'stages' .* missing"):
        issue_against(replying(({"ok": True, "sizes": [0]}, b"")), staged)
    with pytest.raises(ModelOutputError, match="service_ns must hold 1 durations"):
        issue_against(replying(({"ok": True, "sizes": [0], "service_ns": -5}, b"")))


def test_remote_client_refuses_sizes_that_do_not_add_up():
    with pytest.raises(ModelOutputError, match="expected one size"):
        issue_against(replying(({"ok": True, "sizes": [-4], "service_ns": 1}, b"")))


def test_remote_claimed_service_time_beyond_the_round_trip_is_an_error():
    claim = {"ok": True, "sizes": [4], "service_ns": 10 ** 15}  # 1e9 ms
    with pytest.raises(ModelOutputError, match=r"claims 1e\+09 ms of service time, but the "
                                               r"whole round trip took .* ms measured here"):
        issue_against(replying((claim, b"\0" * 4)))
    honest = {"ok": True, "sizes": [4], "service_ns": 1000}
    (response,) = issue_against(replying((honest, np.float32(2.5).tobytes())))
    assert response.tolist() == [2.5]


def test_remote_client_deadline_is_per_reply_not_per_recv():
    def trickle(conn):
        recv_message(conn)
        head = json.dumps({"ok": True, "sizes": [0], "service_ns": 1}).encode()
        for byte in struct.pack(">II", len(head), 0) + head:
            conn.sendall(bytes([byte]))
            time.sleep(0.2)  # the whole reply takes over 10 s; each byte is in time

    t0 = time.monotonic()
    with pytest.raises(ModelOutputError, match=r"no reply to issue of samples \[0\] within 0.3 s"):
        issue_against(trickle, timeout_s=0.3)
    assert time.monotonic() - t0 < 6.0  # the deadline held, not the 10-s trickle


def test_remote_client_refuses_a_reply_larger_than_its_limit():
    def huge(conn):
        recv_message(conn)
        conn.sendall(struct.pack(">II", 2, 1 << 31) + b"{}")

    t0 = time.monotonic()
    with pytest.raises(ModelOutputError, match="unusable reply to issue .* 2147483648-byte "
                                               "payload; the limits are"):
        issue_against(huge, limits=Limits(payload_bytes=1 << 20, message_s=60))
    assert time.monotonic() - t0 < 20.0  # refused on the announced size, not after 60 s


def test_remote_server_refuses_a_bad_sut_or_limit_before_listening(tmp_path):
    (tmp_path / "vsut.py").write_text("class V:\n    total_count = 2\n    response_dtype = '|V0'\n"
                                      "    def issue(self, i):\n        return [b''] * len(i)\n")
    server = Path(remote_server.__file__)
    for args, message in ((["--sut", "vsut.py:V"], "--sut vsut.py:V: ValueError: response_dtype '|V0'"),
                          (["--options", '{"bogus": 1}'], "TypeError: NullSUT.__init__() got an "
                                                          "unexpected keyword argument 'bogus'"),
                          (["--message-timeout", "0"], "limits must be > 0")):
        done = subprocess.run([sys.executable, "-S", str(server), *args], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr
