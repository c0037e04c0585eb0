"""The ``ptd`` meter against a hostile PTDaemon and implausible samples (issue 41): a reply
line has a deadline and a length limit, the buffering is linear, and a power sample at or
below 0 W (or NaN) is an error naming the file and line, in a run and in ``check``."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import pytest
from test_remote_hostile import fake_server

from neuromark.errors import DataError
from neuromark.system.checker import _Audit
from neuromark.system.checker_power import check_power
from neuromark.system.power.ptd import PtdClient
from neuromark.system.power.spl import read_spl, sample_line

T0 = 1_608_717_600.0  # 12-23-2020 10:00:00 UTC


@contextmanager
def daemon(answer):
    """A thread accepting one connection: it reads the Hello, then ``answer(conn)`` plays
    PTDaemon's part."""
    def greeted(conn):
        conn.recv(64)
        answer(conn)

    with fake_server(greeted) as address:
        yield address


def test_ptd_line_longer_than_limit_is_error():
    with daemon(lambda conn: conn.sendall(b"x" * 10_000)) as address:
        t0 = time.monotonic()
        with pytest.raises(DataError, match=f"PTDaemon at {address} answered 'Hello' with a line "
                                            "longer than 1024 bytes"):
            PtdClient(address, timeout_s=60.0, max_line_bytes=1024)
        assert time.monotonic() - t0 < 20.0  # at the limit, not at the 60-s timeout


def test_ptd_timeout_fires_for_a_daemon_that_never_ends_its_line():
    stop = threading.Event()

    def trickle(conn):  # a byte every 20 ms: every recv is in time, the line never ends
        while not stop.is_set():
            conn.sendall(b"H")
            time.sleep(0.02)

    with daemon(trickle) as address:
        t0 = time.monotonic()
        try:
            with pytest.raises(DataError, match=r"no whole reply line to 'Hello' within 0.3 s"):
                PtdClient(address, timeout_s=0.3)
        finally:
            stop.set()
        assert time.monotonic() - t0 < 10.0  # the trickle never ends: any bound shows the deadline


def test_ptd_buffering_is_linear_in_the_bytes_read():
    """16 MiB without a line end, in 4-KiB packets, then the greeting: read in well under
    a second (the old buffer re-searched and copied it all per packet: 75 s)."""
    def flood(conn):
        block = b"y" * 4096
        for _ in range(4096):
            conn.sendall(block)
        conn.sendall(b"\r\n")

    with daemon(flood) as address:
        t0 = time.monotonic()
        with pytest.raises(DataError, match="did not answer Hello as PTDaemon does"):
            PtdClient(address, timeout_s=120.0, max_line_bytes=1 << 25)
        assert time.monotonic() - t0 < 30.0  # linear: ~0.1 s alone; the quadratic buffer took 75 s


@pytest.mark.parametrize("watts", [-40.0, 0.0])
def test_ptd_sample_at_or_below_zero_watts_is_an_error_naming_the_line(tmp_path, watts):
    log = tmp_path / "spl.txt"
    log.write_text(sample_line(T0, 10.0, 230, 0.1, 0.9, "m") + "\n"
                   + sample_line(T0 + 1, watts, 230, 0.1, 0.9, "m") + "\n")
    with pytest.raises(DataError, match=f"{log}:2: power sample of {watts:g} W; a sample must "
                                        "be > 0 W"):
        read_spl(log)
    log.write_text(sample_line(T0, 10.0, 230, 0.1, 0.9, "m").replace("Watts,10.000000", "Watts,nan")
                   + "\n")
    with pytest.raises(DataError, match=f"{log}:1: non-finite reading"):
        read_spl(log)


def power_details(log, energy_j=2.0):
    window = {"duration_s": 1.0, "meter_samples": 20, "sample_rate_hz": 20.0, "peak_power_w": 2.0,
              "energy_j": energy_j, "mean_power_w": energy_j}
    return {"power_meter": {"measured": True, "name": "ptd", "file": str(log), "point": "wall"},
            "power": {"format": 3, "floor": dict(window),
                      "active": {"inference": {**window, "total_energy_per_inference_j": 1e-3}}}}


def test_check_fails_a_ptd_log_with_a_sample_at_or_below_zero_watts(tmp_path):
    log = tmp_path / "ptd_log.txt"
    log.write_text(sample_line(T0, 10.0, 230, 0.1, 0.9, "m") + "\n")
    audit = _Audit(tmp_path)
    check_power(audit, tmp_path / "r.json", power_details(log), "test", tmp_path)
    assert [str(f) for f in audit.findings] == []
    log.write_text(log.read_text() + sample_line(T0 + 1, -40.0, 230, 0.1, 0.9, "m") + "\n")
    check_power(audit, tmp_path / "r.json", power_details(log), "test", tmp_path)
    (finding,) = [str(f) for f in audit.findings]
    assert "power/plausible" in finding and f"{log}:2: power sample of -40 W" in finding


@pytest.mark.parametrize("energy", [-3.0, 0.0, float("nan")])
def test_check_fails_a_power_window_with_energy_at_or_below_zero(tmp_path, energy):
    audit = _Audit(tmp_path)
    check_power(audit, tmp_path / "r.json", power_details(tmp_path / "absent.txt", energy), "test",
                tmp_path)
    text = "\n".join(str(f) for f in audit.findings)
    assert "power/plausible: power window 'floor': energy_j is" in text
    assert "power window 'inference': mean_power_w is" in text


def test_ptd_log_line_longer_than_limit_is_error(tmp_path):
    log = tmp_path / "spl.txt"
    log.write_text(sample_line(T0, 10.0, 230, 0.1, 0.9, "m") + "\n" + "z" * 70_000)
    with pytest.raises(DataError, match=f"{log}:2: a line of more than 65536 bytes"):
        read_spl(log)
