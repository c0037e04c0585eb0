"""SUT ``remote``: a SUT served by ``neuromark.system.remote_server`` in another process.

Each server is a subprocess on localhost, started with ``python -S`` (no site-packages:
no numpy, no neuromark, as in a device SDK's environment) on an ephemeral port; the test
waits for its ``listening on`` line. ``neuromark run`` then drives it under LoadGen."""

from __future__ import annotations

import ast
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from test_remote_hostile import fake_server, replying

from neuromark.cli import main
from neuromark.errors import ConfigError
from neuromark.system import remote_server
from neuromark.system.loadgen_log import ACCURACY, read_accuracy_log
from neuromark.system.remote_server import PROTOCOL, recv_message, send_message, to_bytes
from neuromark.system.suts.remote import parse_address, remote

pytest.importorskip("mlperf_loadgen")

SERVER = Path(remote_server.__file__)
SUTS = Path(__file__).with_name("remote_suts.py")
LOADGEN = ("loadgen: {scenario: SingleStream, min_query_count: 64, min_duration_s: 0, "
           "expected_latency_s: 0.0001}\ntiming: {warmup: 4}\n")


@contextmanager
def server(sut: str = "null", **options):
    """A remote SUT server subprocess; yields its ``HOST:PORT`` once it listens."""
    spec = "null" if sut == "null" else f"{SUTS}:{sut}"
    proc = subprocess.Popen([sys.executable, "-S", str(SERVER), "--port", "0", "--sut", spec,
                             "--options", json.dumps(options)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        if not line.startswith("listening on "):
            proc.kill()
            raise AssertionError(f"server did not start: {line!r} {proc.communicate()[1]}")
        yield line.split()[-1]
    finally:
        proc.kill()
        proc.wait(timeout=30)


def run(tmp_path, address, capsys, *, extra="", options="", name="cfg.yaml"):
    config = tmp_path / name
    config.write_text(f"task: system\nbenchmark: {{id: remote-ss}}\nsut:\n  name: remote\n"
                      f"  options: {{address: \"{address}\", calibration: 50{options}}}\n"
                      + LOADGEN + extra)
    out = tmp_path / "out"
    code = main(["run", str(config), "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    found = sorted(out.glob("remote-ss--*.json"))  # labelled by the served SUT's name (issue 57.1)
    return code, captured.err, json.loads(found[0].read_text()) if code == 0 else None, out


def test_remote_null_sut_runs_and_reports_its_transport(tmp_path, capsys):
    with server("null", samples=32) as address:
        code, err, res, _ = run(tmp_path, address, capsys)
    assert code == 0, err
    assert res["model"]["label"] == "null" == res["details"]["system"]["label"]  # not "remote"
    sut = res["details"]["sut"]
    assert sut["entry"] == "remote" and sut["name"] == "null" and sut["address"] == address
    assert sut["library_size"] == 32 and sut["staged"] is False and sut["protocol"] == PROTOCOL
    transport = sut["transport"]
    trip = transport["round_trip"]
    assert transport["round_trips"] == trip["n"] == 50
    assert 0 < trip["min_s"] <= trip["median_s"] <= trip["max_s"]
    # LoadGen's view of the calibration: each query's latency holds its round trip
    assert transport["loadgen"]["median_s"] >= trip["min_s"]
    score = res["scores"]["transport_latency"]
    assert score["unit"] == "ms" and score["error"] > 0
    assert score["value"] == pytest.approx(trip["mean_s"] * 1e3)
    lg = res["details"]["loadgen"]["PerformanceOnly"]
    assert lg["query_count"] >= 64 and lg["sample_count"] == res["details"]["timing"]["inference"]["n"]


def test_remote_echo_sut_answers_each_sample_and_is_scored(tmp_path, capsys):
    with server("Echo", scale=2.0, samples=16, classes=4) as address:
        code, err, res, out = run(tmp_path, address, capsys, extra="accuracy: true\n",
                                  options=", samples: 12")
    assert code == 0, err
    assert res["scores"]["classification_accuracy"]["value"] == 1.0
    assert res["details"]["sut"]["scale"] == 2.0 and res["details"]["sut"]["library_size"] == 16
    # the server timed the two stages apart; both are reported
    assert res["details"]["timing"]["preprocess"]["n"] == res["details"]["timing"]["inference"]["n"] > 0
    responses = read_accuracy_log(out / "cfg/loadgen/accuracyonly" / ACCURACY, "<f4")
    assert sorted(responses) == list(range(12))  # LoadGen's index i is the server's sample i
    for i, response in responses.items():
        expected = np.zeros(4, np.float32)
        expected[i % 4] = 1 + 2.0 * i
        np.testing.assert_array_equal(response, expected)


def test_a_server_error_reaches_the_user_with_the_sut_name(tmp_path, capsys):
    with server("Flaky", bad=5) as address:
        code, err, _, out = run(tmp_path, address, capsys)
    assert code == 1
    assert "'flaky-board'" in err and address in err
    assert "ValueError: sensor saturated on sample 5" in err
    assert (out / "cfg/loadgen/performanceonly/mlperf_log_detail.txt").is_file()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_connection_is_a_config_error_before_loadgen(tmp_path, capsys):
    address = f"127.0.0.1:{free_port()}"
    code, err, _, out = run(tmp_path, address, capsys)
    assert code == 1
    assert f"cannot connect to the remote SUT server at {address}" in err
    assert not (out / "cfg/loadgen").exists()
    with pytest.raises(ConfigError, match="is not HOST:PORT"):
        parse_address("localhost")


def test_a_version_mismatch_is_a_config_error_naming_the_address():
    with fake_server(replying(({"ok": True, "protocol": PROTOCOL + 1, "sut": {}}, b""))) as address:
        with pytest.raises(ConfigError, match=f"server at {address} speaks remote SUT protocol "
                                              f"{PROTOCOL + 1}, this neuromark speaks {PROTOCOL}"):
            remote(address=address)
    with server("null") as address:  # and the server refuses a client of another version
        host, port = parse_address(address)
        with socket.create_connection((host, port), timeout=30) as sock:
            send_message(sock, {"op": "hello", "protocol": PROTOCOL + 1})
            reply, _ = recv_message(sock)
        assert reply["ok"] is False and "protocol version mismatch" in reply["error"]
        assert remote(address=address, calibration=2).sut.name == "null"  # still serving


@pytest.mark.parametrize("hang_s, message", [(0, "connection lost during issue"),
                                              (60, "no reply to issue of samples")])
def test_a_server_lost_mid_run_fails_the_run_without_hanging(tmp_path, capsys, hang_s, message):
    with server("Dies", after=20, hang_s=hang_s) as address:
        code, err, _, _ = run(tmp_path, address, capsys, options=", timeout_s: 0.5")
    assert code == 1
    assert "'dies'" in err and address in err and message in err


def test_options_are_checked_against_the_server(tmp_path, capsys):
    with server("Echo", samples=4) as address:
        with pytest.raises(ConfigError, match="sut.options.samples: 9 is more than the 4 samples"):
            remote(address=address, samples=9)
        built = remote(address=address, samples=3, calibration=2)
        try:
            assert built.library.total_count == 3 and list(built.labels) == [0, 1, 2]
            built.library.load([2])
            (response,) = built.sut.issue([2])
            assert response.tolist() == [0.0, 0.0, 5.0, 0.0]
            with pytest.raises(Exception, match="'echo' at .*: issue of samples \\[3\\] failed on "
                                                "the server: KeyError: 'sample 3 was not loaded'"):
                built.sut.issue([3])
        finally:
            built.close()


def test_responses_encode_as_declared():
    assert to_bytes([1.5, [2, 3]], "<f4", "f") == np.asarray([1.5, 2, 3], "<f4").tobytes()
    assert to_bytes(7, "<i8", "q") == np.asarray([7], "<i8").tobytes()
    assert to_bytes(b"\x01\x02", "|u1", "B") == b"\x01\x02"
    assert to_bytes(np.arange(3, dtype="<f4"), "<f4", "f") == np.arange(3, dtype="<f4").tobytes()
    with pytest.raises(ValueError, match="response of dtype <f8, declared response_dtype <f4"):
        to_bytes(np.arange(3.0), "<f4", "f")
    with pytest.raises(ValueError, match="response_dtype '>f4'"):
        remote_server.dtype_code(">f4")


def test_the_server_needs_only_the_standard_library():
    tree = ast.parse(SERVER.read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


DOC = Path(__file__).resolve().parents[1] / "docs" / "system_track.md"


def test_the_system_track_page_leads_with_a_quick_start_that_runs(tmp_path):
    """docs/system_track.md's first section is a ~20-line quick start; its SUT is written to
    my_board.py, its server line starts the shipped server (on a free port instead of 5555,
    after which the test waits for it to listen) and its other lines run in bash."""
    text = DOC.read_text()
    first = text.split("\n## ", 2)[1]
    assert first.startswith("Quick start"), "docs/system_track.md no longer leads with the quick start"
    assert 17 <= sum(1 for line in first.splitlines()[1:] if line.strip()) <= 23
    (code,) = re.findall(r"```python\n(.*?)```", first, re.S)
    (shell,) = re.findall(r"```bash\n(.*?)```", first, re.S)
    (tmp_path / "my_board.py").write_text(code)
    serve_line, *rest = shell.strip().splitlines()
    args = serve_line.removesuffix("&").split()
    assert args[:2] == ["python", "remote_server.py"] and args[args.index("--port") + 1] == "5555"
    args[args.index("--port") + 1] = "0"
    proc = subprocess.Popen([sys.executable, "-S", str(SERVER), *args[2:]], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""
        assert line.startswith("listening on "), (line, proc.stderr.read() if proc.poll() is not None else "")
        port = line.split(":")[-1].strip()
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        assert shutil.which("neuromark", path=env["PATH"]), "the neuromark command is not installed"
        done = subprocess.run(["bash", "-e", "-c", "\n".join(rest).replace("5555", port)], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdict: passes every check of the 'test' profile" in done.stdout
    (result,) = [p for p in (tmp_path / "results").glob("*.json") if p.name != "submission.json"]
    scores = json.loads(result.read_text())["scores"]
    assert scores["classification_accuracy"]["value"] == 1.0 and "transport_latency" in scores
