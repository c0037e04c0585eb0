"""Cases of ``bench/hostile_sweep.py`` for issue 41a: the remote SUT server and client, the
PTDaemon client and log, and scenario searches no value can pass. The hostile peers are
threads and raw sockets on localhost (the helpers of ``tests/test_remote_hostile.py``)."""

from __future__ import annotations

import socket
import struct
import time
from pathlib import Path
from typing import Any

from hostile_common import case, cli
from test_remote_hostile import (
    DESCRIPTION,
    SMALL,
    Big,
    Labelled,
    assert_still_serving,
    fake_server,
    hello,
    issue_against,
    raw_message,
    replying,
    running,
)

from neuromark.system.remote_server import PREFIX, PROTOCOL, NullSUT, recv_message, send_message

T0 = 1_608_717_600.0


def _served_after(sut: Any, hostile: Any) -> Any:
    """Runs ``hostile(address)`` against a served ``sut``, then times a good client."""
    def act():
        with running(sut, SMALL) as address:
            seen = hostile(address)
            return seen, round(assert_still_serving(address), 2)
    return act


def _deep(address):
    with socket.create_connection(address, timeout=2) as sock:
        sock.sendall(raw_message(b"[" * 2040 + b"]" * 2040))
        return recv_message(sock)[0]["error"]


@case("remote-server-deep-json", "a bad message gets an error reply, never a dead server",
      "test_remote_hostile.py::test_remote_server_survives_deeply_nested_json", expect="result",
      check=lambda v: ("nested" in v[0] and v[1] < 2) or "no error reply or not serving")
def _(tmp: Path) -> Any:
    return _served_after(NullSUT(4), _deep)


def _huge_header(address):
    with socket.create_connection(address, timeout=2) as sock:
        sock.sendall(PREFIX.pack(1 << 30, 0))
        return recv_message(sock)[0]["error"]


@case("remote-server-1gib-header", "sizes bounded before allocation",
      "test_remote_hostile.py::test_remote_server_refuses_a_header_longer_than_the_limit_before_reading_it",
      expect="result", check=lambda v: ("limits are" in v[0] and v[1] < 1) or "not refused at once")
def _(tmp: Path) -> Any:
    return _served_after(NullSUT(4), _huge_header)


def _unread(address):
    sock, _ = hello(address)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    for _ in range(16):
        send_message(sock, {"op": "issue", "indices": [0]})
    return sock


@case("remote-server-client-never-reads", "a client that does not read is dropped",
      "test_remote_hostile.py::test_remote_server_drops_a_client_that_does_not_read_replies",
      expect="result", check=lambda v: v[1] < 3 or "the next client waited")
def _(tmp: Path) -> Any:
    return _served_after(Big(), _unread)


@case("remote-server-silent-client", "a silent client is dropped",
      "test_remote_hostile.py::test_remote_server_drops_a_silent_client",
      expect="result", check=lambda v: v[1] < 2 or "the next client waited")
def _(tmp: Path) -> Any:
    return _served_after(NullSUT(4), lambda address: socket.create_connection(address, timeout=2))


def _bad_then_silent(address):
    sock = socket.create_connection(address, timeout=5)
    sock.sendall(raw_message(b"[" * 2040 + b"]" * 2040))
    recv_message(sock)  # the error reply; then the client says nothing and keeps the socket
    return sock


@case("remote-server-silent-after-bad-message", "a client silent after a bad message is "
      "dropped after the idle limit; the next client is served (issue 59)",
      "test_remote_idle.py::test_second_client_is_served_after_a_silent_bad_client",
      expect="result", check=lambda v: v[1] < 3 or "the next client waited")
def _(tmp: Path) -> Any:
    return _served_after(NullSUT(4), _bad_then_silent)


@case("remote-server-text-labels", "text labels are an error reply naming them",
      "test_remote_hostile.py::test_remote_server_survives_text_labels_with_an_error_reply",
      needs=("label 0 is 'cat'", "not an integer class"))
def _(tmp: Path) -> Any:
    from neuromark.system.suts.remote import remote

    def act():
        with running(Labelled(), SMALL) as (host, port):
            remote(address=f"{host}:{port}", timeout_s=2)
    return act


def _hello_reply(sut: Any):
    from neuromark.system.suts.remote import remote

    def act():
        reply = {"ok": True, "protocol": PROTOCOL, **({"sut": sut} if sut is not None else {})}
        with fake_server(replying((reply, b""))) as address:
            remote(address=address, timeout_s=2)
    return act


@case("remote-client-hello-without-sut", "a hello without sut is named",
      "test_remote_hostile.py::test_remote_client_refuses_a_hello_without_sut",
      needs=("hello reply has no 'sut'",))
def _(tmp: Path) -> Any:
    return _hello_reply(None)


for _dtype in ("|V0", "|O"):
    @case(f"remote-client-dtype-{_dtype[1:]}", "numeric response dtypes only",
          "test_remote_hostile.py::test_remote_client_refuses_non_numeric_response_dtypes",
          needs=(f"response_dtype '{_dtype}' is not a numeric dtype",))
    def _(tmp: Path, dtype: str = _dtype) -> Any:
        return _hello_reply({**DESCRIPTION, "response_dtype": dtype})


@case("remote-client-empty-stage-lists", "stage lists of one duration per sample",
      "test_remote_hostile.py::test_remote_client_refuses_empty_stage_lists",
      needs=("'fake'", "stages.preprocess must hold 1 durations"))
def _(tmp: Path) -> Any:
    reply = {"ok": True, "sizes": [0], "stages": {"preprocess": [], "inference": []}}
    return lambda: issue_against(replying((reply, b"")), {**DESCRIPTION, "staged": True})


@case("remote-client-claims-1e9-ms", "claimed service time within the round trip",
      "test_remote_hostile.py::test_remote_claimed_service_time_beyond_the_round_trip_is_an_error",
      needs=("claims 1e+09 ms of service time", "round trip"))
def _(tmp: Path) -> Any:
    return lambda: issue_against(replying(({"ok": True, "sizes": [4], "service_ns": 10 ** 15}, b"\0" * 4)))


def _trickle(conn):
    recv_message(conn)
    for byte in struct.pack(">II", 2, 0) + b"{}":
        conn.sendall(bytes([byte]))
        time.sleep(0.2)


@case("remote-client-trickled-reply", "a deadline per reply, not per recv",
      "test_remote_hostile.py::test_remote_client_deadline_is_per_reply_not_per_recv",
      needs=("no reply to issue", "within 0.5 s"))
def _(tmp: Path) -> Any:
    return lambda: issue_against(_trickle, timeout_s=0.5)


def _daemon(answer):
    from test_ptd_hostile import daemon

    from neuromark.system.power.ptd import PtdClient

    def act():
        with daemon(answer) as address:
            PtdClient(address, timeout_s=0.5, max_line_bytes=4096)
    return act


def _no_line_end(conn):
    for _ in range(40):
        conn.sendall(b"H")
        time.sleep(0.02)


@case("ptd-daemon-never-ends-its-line", "a deadline per PTDaemon line",
      "test_ptd_hostile.py::test_ptd_timeout_fires_for_a_daemon_that_never_ends_its_line",
      needs=("no whole reply line to 'Hello' within 0.5 s",))
def _(tmp: Path) -> Any:
    return _daemon(_no_line_end)


@case("ptd-daemon-8mib-line", "a PTDaemon line longer than the limit is an error",
      "test_ptd_hostile.py::test_ptd_line_longer_than_limit_is_error",
      needs=("longer than 4096 bytes",))
def _(tmp: Path) -> Any:
    return _daemon(lambda conn: conn.sendall(b"x" * (8 << 20)))


@case("ptd-log-negative-watts", "power samples positive and finite",
      "test_ptd_hostile.py::test_ptd_sample_at_or_below_zero_watts_is_an_error_naming_the_line",
      needs=("spl.txt:2", "-40 W", "> 0 W"))
def _(tmp: Path) -> Any:
    from neuromark.system.power.spl import read_spl, sample_line

    (tmp / "spl.txt").write_text(sample_line(T0, 10.0, 230, 0.1, 0.9, "m") + "\n"
                                 + sample_line(T0 + 1, -40.0, 230, 0.1, 0.9, "m") + "\n")
    return lambda: read_spl(tmp / "spl.txt")


@case("search-multistream-no-passing-value", "a search with no passing value is INVALID everywhere",
      "test_search_bounds.py::test_search_that_no_value_can_pass_stops_at_calibration_and_is_invalid_everywhere",
      expect="result", check=lambda v: v == (1, True, 1) or f"exit, INVALID shown, check exit: {v}")
def _(tmp: Path) -> Any:
    (tmp / "ms.yaml").write_text(
        "task: system\nbenchmark: {id: ms}\nsut: {name: sleep, options: {sleep_s: 0.0005, samples: 8}}\n"
        "timing: {warmup: 2}\nloadgen: {scenario: MultiStream, latency_bound_s: 0.0001, "
        "min_duration_s: 0.05, min_query_count: 40, search: true}\n")

    def act():
        run = cli("run", tmp / "ms.yaml", "--out", tmp / "out", "--quiet", ok=(1,))
        audit = cli("check", tmp / "out", ok=(1,))
        return run.code, ": INVALID (the samples_per_query search found no passing value" in (
            run.out + run.err) and "loadgen/search" in audit.out, audit.code
    return act

