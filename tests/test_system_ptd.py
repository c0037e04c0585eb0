"""The ``ptd`` meter and MLPerf Power: PTDaemon's spl.txt (files in the real format written
here), a fake PTDaemon on localhost speaking its text protocol (standard library only), the
two passes, power-dev's layout, and MLPerf's power figure computed by hand."""

from __future__ import annotations

import json
import socketserver
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from neuromark.errors import ConfigError, DataError
from neuromark.system.power.mlperf import check_layout, mlperf_figures, two_pass
from neuromark.system.power.ptd import PtdMeter, initial_ranges
from neuromark.system.power.spl import SplTail, mlperf_power_metric, parse_time, read_spl
from neuromark.tasks.base import plan_and_run
from tests.fake_ptd import FakePtd, spl, stamp

FMT = "%m-%d-%Y %H:%M:%S.%f"


def mllog(key: str, value) -> str:
    meta = {"is_error": False, "is_warning": False, "file": "loadgen.cc", "line_no": 1}
    return ":::MLLOG " + json.dumps({"key": key, "value": value, "time_ms": 0.0,
                                     "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME",
                                     "metadata": meta}) + "\n"


def loadgen_logs(folder: Path, scenario: str, queries: int, begin: str, end: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mlperf_log_detail.txt").write_text(
        mllog("effective_scenario", scenario) + mllog("effective_test_mode", "PerformanceOnly")
        + mllog("power_begin", begin) + mllog("power_end", end)
        + mllog("result_query_count", queries) + mllog("generated_samples_per_query", 1)
        + mllog("result_validity", "VALID"))
    (folder / "mlperf_log_summary.txt").write_text("Result is : VALID\n")


T0 = datetime(2020, 12, 23, 10, 0, 0, tzinfo=timezone.utc).timestamp()


def test_spl_lines_parse_as_ptdaemon_writes_them(tmp_path):
    file = tmp_path / "spl.txt"
    file.write_text("Time,12-23-2020 10:21:51.496,Watts,23.430000,Volts,228.370000,Amps,0.204280,"
                    "PF,0.502300,Mark,testing-workload\n"
                    "12-23-2020 10:21:51.900: Go with mark 'x'\n"  # a PTDaemon message line
                    + spl(T0 + 3600, 30.0, "other"))
    tr = read_spl(file)
    assert tr.watts == [23.43, 30.0] and tr.volts[0] == 228.37 and tr.amps[0] == 0.20428
    assert tr.marks == ["testing-workload", "other"]
    assert tr.t[0] == datetime(2020, 12, 23, 10, 21, 51, 496000, tzinfo=timezone.utc).timestamp()
    assert read_spl(file, mark="other").watts == [30.0]
    # timezone_s: seconds west of UTC (UTC = logged + timezone_s), as power-dev's server.json
    assert read_spl(file, timezone_s=-3600).t[1] == pytest.approx(T0)


@pytest.mark.parametrize("line, message", [
    ("Time,12-23-2020 10:21:51.496,Watts,x,Volts,1,Amps,1,PF,1,Mark,m", r"spl.txt:2: not a number"),
    ("Time,2020-12-23 10:21:51,Watts,1,Volts,1,Amps,1,PF,1,Mark,m", r"spl.txt:2: time .* is not MM-DD"),
    ("Time,12-23-2020 10:21:51.496,Watts,1,Volts,1", r"spl.txt:2: expected Time,<t>,Watts"),
    ("Time,12-23-2020 10:21:51.496,Watts,nan,Volts,1,Amps,1,PF,1,Mark,m", r"spl.txt:2: non-finite"),
    ("Time,12-23-2020 09:00:00.000,Watts,1,Volts,1,Amps,1,PF,1,Mark,m", r"spl.txt:2: time goes backwards"),
    ("Time,12-23-2020 10:21:51.496,Watts,1,Volts,-230,Amps,1,PF,1,Mark,m", r"spl.txt:2: volts -230 and amps"),
    ("Time,12-23-2020 10:21:51.496,Watts,1,Volts,230,Amps,1,PF,1.5,Mark,m", r"power factor 1.5 within -1..1"),
])
def test_bad_spl_lines_name_file_and_line(tmp_path, line, message):
    file = tmp_path / "spl.txt"
    file.write_text(spl(T0, 1.0, "m") + line + "\n")
    with pytest.raises(DataError, match=message):
        read_spl(file)


def test_tail_reads_a_growing_log_and_waits_for_half_lines(tmp_path):
    file = tmp_path / "log.txt"
    file.write_text(spl(T0, 1.0, "m"))
    tail = SplTail(file)
    assert tail.poll().watts == [1.0]
    whole = spl(T0 + 1, 2.0, "m")
    with file.open("a") as f:
        f.write(whole[:20])  # PTDaemon is half-way through a line
    assert tail.poll().watts == [1.0]
    with file.open("a") as f:
        f.write(whole[20:] + spl(T0 + 2, 3.0, "m"))
    assert tail.poll().watts == [1.0, 2.0, 3.0]
    file.write_text("")
    with pytest.raises(DataError, match="shrank"):
        tail.poll()


def test_mlperf_metric_is_the_checkers_formula_by_hand(tmp_path):
    """power_begin 10:00:00.500, power_end 10:00:04.500 (4 s); samples at whole seconds
    0..5: inside (strictly) are 1, 2, 3, 4 s with 10, 20, 30, 50 W: mean 27.5 W; SingleStream
    with 200 queries: 27.5 W x 4 s x 1000 / 200 = 550 mJ per query. (A 0 W sample, which
    MLPerf's get_power_metric skips, is refused when the log is read: see
    test_ptd_sample_at_or_below_zero_watts_is_an_error_naming_the_line.)"""
    run = tmp_path / "run_1"
    loadgen_logs(run, "SingleStream", 200, "12-23-2020 10:00:00.500", "12-23-2020 10:00:04.500")
    (run / "spl.txt").write_text("".join(spl(T0 + i, w, "m") for i, w in
                                         enumerate([99.0, 10.0, 20.0, 30.0, 50.0, 99.0])))
    tr = read_spl(run / "spl.txt")
    got = mlperf_power_metric(tr, "12-23-2020 10:00:00.500", "12-23-2020 10:00:04.500",
                              "SingleStream", 200)
    assert got["avg_power_w"] == pytest.approx(27.5) and got["samples"] == 4
    assert got["metric"] == pytest.approx(550.0) and got["unit"] == "mJ/query"
    offline = mlperf_power_metric(tr, "12-23-2020 10:00:00.500", "12-23-2020 10:00:04.500",
                                  "Offline", 200)
    assert offline["metric"] == pytest.approx(27.5) and offline["unit"] == "W"
    with pytest.raises(DataError, match="no power samples between"):
        mlperf_power_metric(tr, "12-23-2020 11:00:00.000", "12-23-2020 11:00:04.000", "Server", 1)
    # the same through a laid-out folder (ranging + run_1)
    loadgen_logs(tmp_path / "ranging", "SingleStream", 100, "12-23-2020 10:00:00.500",
                 "12-23-2020 10:00:02.500")
    (tmp_path / "ranging/spl.txt").write_text(spl(T0 + 1, 8.0, "r") + spl(T0 + 2, 12.0, "r"))
    figures = mlperf_figures(tmp_path)
    assert figures["metric"] == pytest.approx(550.0)
    assert figures["ranging"]["metric"] == pytest.approx(10.0 * 2.0 * 1000 / 100)
    assert {rel for rel, _ in check_layout(tmp_path)} >= {"power/server.json", "power/ptd_logs.txt"}


# --- a fake PTDaemon (tests/fake_ptd.py) ---------------------------------------------

@pytest.fixture
def fake_ptd(tmp_path):
    log = tmp_path / "ptd_log.txt"
    ptd = FakePtd(log)
    ptd.write(spl(T0, 5.0, "an older session"))  # the log keeps earlier sessions
    yield ptd
    ptd.close()


def test_meter_drives_ptdaemon_and_integrates_its_samples(fake_ptd):
    meter = PtdMeter(fake_ptd.log, address=fake_ptd.address, interval_ms=20, settle_s=0)
    meter.start()
    time.sleep(0.1)
    a = meter.mark("a")
    time.sleep(0.4)
    b = meter.mark("b")
    time.sleep(0.1)
    meter.stop()
    assert fake_ptd.received == ["Hello", "Identify", "RR", "SR,V,Auto", "SR,A,Auto",
                                 "Go,20,0,neuromark", "Stop", "SR,V,300", "SR,A,2.5"]
    assert meter.energy(a, b) == pytest.approx(40.0 * (b - a), rel=1e-9)  # constant 40 W
    assert 10 <= meter.samples_in(a, b) <= 21  # ~20 samples in 0.4 s, on a loaded machine fewer
    meta = meter.metadata()
    assert meta["point"] == "wall" and meta["identify"].startswith("YokogawaWT310")
    assert meta["ptd_messages"][0] == {"cmd": "Hello", "reply": "Hello, PTDaemon here!"}
    assert 5.0 not in meter.timeline()["power_w"]  # the older session's sample is not ours
    assert initial_ranges("Ranges,1,-1,0,300") == ("300", "Auto")


def test_follow_mode_tails_a_ptdaemon_run_by_someone_else(fake_ptd, tmp_path):
    meter = PtdMeter(fake_ptd.log, follow=True, mark="theirs", timeout_s=2.0)
    fake_ptd.reply("Go,20,0,theirs")
    meter.start()  # waits for the first sample of its own
    time.sleep(0.15)
    a = meter.mark("a")
    assert len(meter.trace().t) >= 2  # read while the run goes on
    time.sleep(0.2)
    b = meter.mark("b")
    meter.stop()  # waits for the analyzer's first sample after the last mark
    fake_ptd.reply("Stop")
    assert meter.energy(a, b) == pytest.approx(40.0 * (b - a))


def test_not_a_ptdaemon_is_refused(tmp_path):
    with socketserver.TCPServer(("127.0.0.1", 0), socketserver.StreamRequestHandler) as srv:
        threading.Thread(target=srv.handle_request, daemon=True).start()
        meter = PtdMeter(tmp_path / "log.txt", address=f"127.0.0.1:{srv.server_address[1]}",
                         timeout_s=2.0)
        with pytest.raises(DataError, match="closed the connection after 'Hello'"):
            meter.start()
    with pytest.raises(DataError, match="is not host:port"):
        PtdMeter(tmp_path / "log.txt", address="localhost").start()


def hand_metric(folder: Path) -> float:
    """MLPerf's get_power_metric for a stream scenario, by hand from the files."""
    values = {}
    for line in (folder / "mlperf_log_detail.txt").read_text().splitlines():
        if line.startswith(":::MLLOG "):
            rec = json.loads(line[9:])
            values[rec["key"]] = rec["value"]
    begin = datetime.strptime(values["power_begin"], FMT)
    end = datetime.strptime(values["power_end"], FMT)
    watts = []
    for line in (folder / "spl.txt").read_text().splitlines():
        f = line.split(",")
        if begin < datetime.strptime(f[1], FMT) < end and float(f[3]) > 0:
            watts.append(float(f[3]))
    return sum(watts) / len(watts) * (end - begin).total_seconds() * 1000 / values["result_query_count"]


def test_two_pass_ranges_then_tests_and_lays_out_power_dev_folders(fake_ptd, tmp_path):
    meter = PtdMeter(fake_ptd.log, address=fake_ptd.address, interval_ms=20, settle_s=0)

    def run_pass(folder: Path) -> None:  # a LoadGen run: 0.5 s, 250 queries
        begin = time.time()
        time.sleep(0.5)
        loadgen_logs(folder, "SingleStream", 250, stamp(begin), stamp(time.time()))

    figures = two_pass(meter, run_pass, tmp_path / "sub")
    sent = fake_ptd.received
    go = [c for c in sent if c.startswith("Go")]
    assert go[0].endswith("_ranging") and go[1].endswith("_testing") and len(go) == 2
    # one fresh PTD session; ranging sends SR,A twice, as power-dev's server does
    assert sent[:sent.index(go[0])] == ["Hello", "Identify", "RR", "SR,V,Auto", "SR,A,Auto",
                                         "SR,A,Auto"]
    assert sent[sent.index(go[1]) - 2:sent.index(go[1])] == ["SR,V,230.000000", "SR,A,0.170000"]
    # a second Stop that finds nothing to stop, then the initial ranges restored
    assert sent[-4:] == ["Stop", "Stop", "SR,V,300", "SR,A,2.5"]
    sub = tmp_path / "sub"
    assert check_layout(sub) == []
    assert figures["metric"] == pytest.approx(hand_metric(sub / "run_1"), rel=1e-12)
    assert figures["metric"] == pytest.approx(40.0 * figures["testing"]["duration_s"] * 1000 / 250)
    assert figures["unit"] == "mJ/query" and figures["ranges"]["testing"]["volts"] == "230.000000"
    server = json.loads((sub / "power/server.json").read_text())
    assert server["session_name"] == figures["session_name"] and server["ptd_messages"][0]["cmd"] == "Hello"
    assert {"ranging", "testing"} == set(server["phases"]) and len(server["phases"]["testing"]) == 4
    assert "Go with mark" in (sub / "power/ptd_logs.txt").read_text()
    (sub / "run_1/spl.txt").write_text((sub / "run_1/spl.txt").read_text() + spl(time.time(), 1, "x"))
    assert check_layout(sub) == [("run_1/spl.txt", f"SHA-1 differs from the one power/{name} "
                                  "recorded") for name in ("server.json", "client.json")]


def test_parse_time_is_loadgens_utc_spelling():
    assert parse_time("01-02-2021 03:04:05.678") == pytest.approx(
        datetime(2021, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc).timestamp())


def test_meter_point_is_declared_and_checked(tmp_path):
    from neuromark.config import parse_yaml
    from neuromark.system.track.task import TASK

    body = ('task: system\nsut:\n  name: "null"\nmeter:\n  name: csv\n  point: moon\n'
            '  options: {path: t.csv}\n')
    with pytest.raises(ConfigError, match=r"c.yaml:6: meter.point: Input should be 'wall'"):
        TASK.checked(parse_yaml(body, tmp_path / "c.yaml"))


def test_system_task_two_pass_with_real_loadgen(fake_ptd, tmp_path):
    """The system task with a driven ptd meter and two_pass: the power windows come from
    PTDaemon's samples, the ranging and testing LoadGen runs are laid out as power-dev
    expects, and the mlperf_power score is MLPerf's formula over run_1's own files."""
    pytest.importorskip("mlperf_loadgen")
    from neuromark.config import parse_yaml
    from neuromark.system.checker import _Audit
    from neuromark.system.checker_power import check_power
    from neuromark.system.track.task import TASK

    text = ("task: system\nbenchmark: {id: ptd_toy}\nsut: {name: sleep, options: {sleep_s: 0.0005, "
            "samples: 8}}\nloadgen: {scenario: SingleStream, min_query_count: 64, min_duration_s: 0.5, "
            "expected_latency_s: 0.001}\n"
            f"meter: {{name: ptd, options: {{path: ptd_log.txt, address: '{fake_ptd.address}', "
            "interval_ms: 20, settle_s: 0, two_pass: true}}\npower: {floor_s: 0.3, active_s: 0.3}\n")
    res = plan_and_run(TASK, parse_yaml(text, tmp_path / "p.yaml"), tmp_path / "out")[0]
    assert res["floor_power"] == pytest.approx(40.0) and res["stream_total_power"] == pytest.approx(40.0)
    assert res.details["power_meter"]["point"] == "wall"
    sub = tmp_path / "out/mlperf_power"
    assert check_layout(sub) == []
    assert res["mlperf_power"] == pytest.approx(hand_metric(sub / "run_1"), rel=1e-12)
    assert res.scores["mlperf_power"].unit == "mJ/query"
    audit = _Audit(tmp_path)
    check_power(audit, tmp_path / "r.json", res.details, "test", tmp_path / "out")
    assert [str(f) for f in audit.findings] == []
    res.details["mlperf_power"]["metric"] *= 1.01  # a figure the logs do not give
    check_power(audit, tmp_path / "r.json", res.details, "test", tmp_path / "out")
    assert [f.rule for f in audit.findings] == ["power/mlperf-metric"]


def test_two_pass_is_one_ptd_session_of_its_own(fake_ptd, tmp_path):
    """An earlier, still open PTDaemon connection (idle) is closed first: server.json's
    ptd_messages hold only the two passes' session, from its own Hello."""
    meter = PtdMeter(fake_ptd.log, address=fake_ptd.address, interval_ms=20, settle_s=0)
    meter.connect()  # an earlier session, left open and idle

    def run_pass(folder: Path) -> None:
        begin = time.time()
        time.sleep(0.2)
        loadgen_logs(folder, "SingleStream", 100, stamp(begin), stamp(time.time()))

    two_pass(meter, run_pass, tmp_path / "sub")
    server = json.loads((tmp_path / "sub/power/server.json").read_text())
    cmds = [m["cmd"] for m in server["ptd_messages"]]
    assert [m["cmd"] for m in meter.messages].count("Hello") == 2
    assert cmds.count("Hello") == 1 and cmds[:3] == ["Hello", "Identify", "RR"]
    stops = [m["reply"] for m in server["ptd_messages"] if m["cmd"] == "Stop"]
    assert stops == ["Stopping untimed measurement"] * 2 + ["Error: no measurement to stop"]
