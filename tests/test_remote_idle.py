"""The remote SUT server's hang of issue 59: a client that sends a bad message (a header
nested 100,000 deep) and then says nothing is dropped after the server's idle limit, so a
second client is served; ``recv_message`` and ``send_message`` never replace the caller's
own socket timeout (the second client could not time out before)."""

from __future__ import annotations

import socket
import time

from neuromark.system.remote_server import PROTOCOL, Limits, NullSUT, recv_message, send_message
from tests.test_remote_hostile import raw_message, running

IDLE = Limits(header_bytes=1 << 20, payload_bytes=0, json_depth=8, message_s=1.0, idle_s=0.5,
              reply_bytes=1 << 20)


def test_second_client_is_served_after_a_silent_bad_client(capsys):
    with running(NullSUT(4), IDLE) as address:
        bad = socket.create_connection(address, timeout=5)
        bad.sendall(raw_message(b"[" * 100_000 + b"]" * 100_000))
        reply, _ = recv_message(bad)
        assert reply["ok"] is False and "nested too deeply" in reply["error"]
        # the bad client now says nothing; a second client must be answered, not wait forever
        t0 = time.monotonic()
        with socket.create_connection(address, timeout=10) as good:
            send_message(good, {"op": "hello", "protocol": PROTOCOL})
            reply, _ = recv_message(good)
            assert reply["ok"] is True
            assert good.gettimeout() == 10  # the caller's timeout, kept
        assert time.monotonic() - t0 < 8  # served once the idle limit (0.5 s) dropped the first
        bad.close()
    assert "dropped" in capsys.readouterr().err


def test_bad_messages_do_not_restart_the_wait_for_hello():
    with running(NullSUT(4), IDLE) as address:
        with socket.create_connection(address, timeout=5) as sock:
            t0 = time.monotonic()
            closed = False
            while time.monotonic() - t0 < 4:  # a bad message every 0.3 s (< idle 0.5 s)
                try:
                    sock.sendall(raw_message(b"not json"))
                    recv_message(sock)
                except (OSError, ConnectionError, Exception):
                    closed = True
                    break
                time.sleep(0.3)
            assert closed, "a client sending only bad messages held the server"


def test_recv_message_keeps_the_callers_timeout():
    a, b = socket.socketpair()
    with a, b:
        a.settimeout(2.5)
        send_message(b, {"op": "x"})
        recv_message(a, Limits(message_s=1.0))  # no idle limit: the caller's own timeout
        assert a.gettimeout() == 2.5
        send_message(a, {"op": "y"}, timeout_s=0.5)
        assert a.gettimeout() == 2.5
        t0 = time.monotonic()
        try:
            recv_message(a, Limits(message_s=1.0))  # nothing comes: the caller's 2.5 s apply
        except TimeoutError:
            pass
        else:
            raise AssertionError("recv_message waited without a timeout")
        assert 2.0 < time.monotonic() - t0 < 10
        assert a.gettimeout() == 2.5
