"""Power meters: CSV traces, RAPL on a fake sysfs tree, NVML with a fake module, null, windows."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.errors import ConfigError, DataError, MetricError
from neuromark.system.power.csv_trace import CsvTraceMeter, read_trace
from neuromark.system.power.null import NullMeter
from neuromark.system.power.nvml import NvmlMeter
from neuromark.system.power.protocol import integrate_power
from neuromark.system.power.rapl import RaplMeter
from neuromark.system.power.windows import Window, analyse, window_power


def write_trace(path, t, p, marks=None):
    lines = ["t_s,power_w" + (",mark" if marks else "")]
    for i, (ti, pi) in enumerate(zip(t, p)):
        row = f"{ti:.6f},{pi:.6f}"
        if marks:
            row += "," + marks.get(i, "")
        lines.append(row)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_integrate_interpolates_at_edges():
    t = np.array([0.0, 1.0, 2.0])
    p = np.array([0.0, 2.0, 2.0])
    # power 0->2 W over [0,1], then 2 W: from 0.5 to 1.5 s = (1+2)/2*0.5 + 2*0.5 = 1.75 J
    assert integrate_power(t, p, 0.5, 1.5) == pytest.approx(1.75)


def test_csv_voltage_current_columns_and_marks(tmp_path):
    f = tmp_path / "vi.csv"
    f.write_text("t_s,voltage_v,current_a,mark\n0,5,0.1,start\n1,5,0.2,\n2,5,0.3,end\n")
    t, p, marks = read_trace(f)
    np.testing.assert_allclose(p, [0.5, 1.0, 1.5])
    assert marks == {"start": 0.0, "end": 2.0}


def test_csv_alignment_by_sync_marks(tmp_path):
    t = np.arange(0, 2, 0.001)
    f = write_trace(tmp_path / "m.csv", t, np.full(t.size, 3.0), {100: "sync"})
    meter = CsvTraceMeter(f)
    meter.host_marks["sync"] = 50.1  # the host saw the mark at 50.1 s; trace at 0.1 s
    assert meter.offset() == pytest.approx(50.0)
    assert meter.energy(50.5, 51.0) == pytest.approx(1.5)
    assert meter.metadata()["aligned_by"] == "sync marks ['sync']"
    other = CsvTraceMeter(f)
    other.host_marks["nope"] = 1.0
    with pytest.raises(DataError, match="none of them was marked on the host"):
        other.offset()


def test_csv_bad_traces(tmp_path):
    bad = tmp_path / "back.csv"
    bad.write_text("t_s,power_w\n0,1\n1,1\n0.5,1\n")
    with pytest.raises(DataError, match=r"back.csv:4: time is non-monotonic"):
        read_trace(bad)
    cols = tmp_path / "cols.csv"
    cols.write_text("time,watts\n0,1\n")
    with pytest.raises(DataError, match="expected columns t_s,power_w"):
        read_trace(cols)
    short = write_trace(tmp_path / "s.csv", [0.0, 1.0, 2.0], [1, 1, 1])
    with pytest.raises(DataError, match=r"does not cover the measured window \[1.500000, 3.000000\]"):
        CsvTraceMeter(short, offset_s=0).energy(1.5, 3.0)


def test_csv_trace_not_utf8_names_file_line_and_byte(tmp_path):
    """A Latin-1 mark label on line 3 (was read with errors="replace": a mark 'caf\ufffd'
    that no host mark matched): refused naming the file, line and byte offset."""
    latin = tmp_path / "latin.csv"
    latin.write_bytes("t_s,power_w,mark\n0,1,start\n1,1,caf\xe9\n2,1,\n".encode("latin-1"))
    offset = len(b"t_s,power_w,mark\n0,1,start\n1,1,caf")
    with pytest.raises(DataError, match=rf"latin.csv:3: the power trace is not UTF-8 text "
                                        rf"\(byte 0xe9 at offset {offset}\)"):
        read_trace(latin)
    with pytest.raises(DataError, match=r"latin.csv:3: .* not UTF-8"):
        CsvTraceMeter(latin, offset_s=0).stop()
    # UTF-8 with a BOM and CRLF line ends still reads, through both parsers
    for name, text in (("bom.csv", "t_s,power_w\r\n0,1.5\r\n1,2.5\r\n"),
                       ("bom_mark.csv", "t_s,power_w,mark\r\n0,1.5,d\u00e9but\r\n1,2.5,\r\n")):
        (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
        t, p, marks = read_trace(tmp_path / name)
        assert t.tolist() == [0.0, 1.0] and p.tolist() == [1.5, 2.5]
        assert marks == ({"d\u00e9but": 0.0} if "mark" in text else {})


def test_csv_meter_rereads_a_grown_trace_at_stop(tmp_path):
    f = write_trace(tmp_path / "t.csv", [0.0, 1.0], [2.0, 2.0])
    meter = CsvTraceMeter(f, offset_s=0.0)
    assert meter.energy(0.0, 1.0) == pytest.approx(2.0)  # read (and kept) before the end
    write_trace(f, [0.0, 1.0, 2.0, 3.0], [2.0, 2.0, 4.0, 4.0])  # the logger went on
    meter.stop()
    assert meter.energy(2.0, 3.0) == pytest.approx(4.0)


def test_make_meter_builds_registered_meters(tmp_path):
    from neuromark.components import ComponentSpec
    from neuromark.config import parse_yaml
    from neuromark.registry import meters
    from neuromark.system.power.spec import make_meter

    null = make_meter(ComponentSpec(name="null", options={"reason": "no instrument"}))
    assert isinstance(null, NullMeter) and null.metadata()["reason"] == "no instrument"
    assert make_meter(None).metadata()["reason"] == "no power meter configured"
    config = parse_yaml("task: system\nmeter:\n  name: csv\n  options: {path: trace.csv, offset_s: 0.5}\n",
                        tmp_path / "s.yaml")
    write_trace(tmp_path / "trace.csv", [0.0, 1.0], [1.0, 1.0])
    csv = make_meter(ComponentSpec(**config.data["meter"]), config)
    assert isinstance(csv, CsvTraceMeter) and csv.path == tmp_path / "trace.csv"
    assert csv.offset_s == 0.5 and not csv.wall_clock
    with pytest.raises(ConfigError, match=r"s.yaml:4: meter.options.offset: unknown key"):
        make_meter(ComponentSpec(name="csv", options={"path": "t.csv", "offset": 1}), config)

    class Replacement(NullMeter):
        pass

    original = meters._entries["null"]
    meters.register("null", Replacement)
    try:
        assert type(make_meter(ComponentSpec(name="null"))) is Replacement
    finally:
        meters._entries["null"] = original


def test_null_meter_says_not_measured():
    meter = NullMeter("no instrument on this CPU")
    assert meter.metadata() == {"name": "null", "measured": False, "reason": "no instrument on this CPU",
                                "sample_rate_hz": None, "components": [], "point": None}
    with pytest.raises(MetricError, match="not measured: no instrument"):
        meter.energy(0, 1)


def test_windows_protocol_hand_computed(tmp_path):
    t = np.arange(0, 10.0005, 0.001)
    p = np.where(t < 5, 2.0, 7.0)
    meter = CsvTraceMeter(write_trace(tmp_path / "w.csv", t, p), offset_s=0)
    res = analyse(meter, Window("floor", 1, 4), [Window("inference", 6, 9)],
                  latency_s={"inference": 0.01})
    act = res["active"]["inference"]
    assert res["floor"]["floor_power_w"] == pytest.approx(2.0)
    assert act["total_power_w"] == pytest.approx(7.0) and act["floor_power_w"] == pytest.approx(2.0)
    assert act["dynamic_power_w"] == pytest.approx(5.0)
    assert act["total_energy_per_inference_j"] == pytest.approx(0.07)  # 7 W x 10 ms
    assert act["floor_energy_per_inference_j"] == pytest.approx(0.02)  # 2 W x 10 ms
    assert act["dynamic_energy_per_inference_j"] == pytest.approx(0.05)
    amort = analyse(meter, Window("floor", 1, 4), [Window("stream", 6, 9)], inferences={"stream": 300})
    stream = amort["active"]["stream"]
    assert stream["total_energy_per_inference_j"] == pytest.approx(21.0 / 300)  # 7 W x 3 s / 300
    assert stream["floor_energy_per_inference_j"] == pytest.approx(6.0 / 300)  # 2 W x 3 s / 300
    assert stream["mode"] == "amortised"


def test_window_warns_below_ten_samples(tmp_path):
    meter = CsvTraceMeter(write_trace(tmp_path / "c.csv", np.arange(0, 2, 0.25), np.ones(8)), offset_s=0)
    with pytest.warns(UserWarning, match="only 3 meter samples"):
        out = window_power(meter, Window("idle", 0.1, 0.8))
    assert "warning" in out
    with pytest.raises(MetricError, match="window 'x': end"):
        Window("x", 2, 1)


def make_rapl(root, pkg_uj=0, dram_uj=0, max_uj=1000):
    for zone, name, value in (("intel-rapl:0", "package-0", pkg_uj),
                              ("intel-rapl:0/intel-rapl:0:0", "dram", dram_uj),
                              ("intel-rapl:0/intel-rapl:0:1", "core", 0)):
        d = root / zone
        d.mkdir(parents=True, exist_ok=True)
        (d / "name").write_text(name + "\n")
        (d / "energy_uj").write_text(f"{value}\n")
        (d / "max_energy_range_uj").write_text(f"{max_uj}\n")


def test_rapl_fake_sysfs_with_wrap(tmp_path):
    make_rapl(tmp_path, pkg_uj=900, dram_uj=100)
    meter = RaplMeter(tmp_path)
    assert meter.components == ["package-0", "dram"]
    assert meter.read_j() == {"intel-rapl:0:package-0": 0.0, "intel-rapl:0:0:dram": 0.0}
    # package wraps: 900 -> 1000(max) -> 0 -> 200: +300 uJ; dram +50 uJ
    (tmp_path / "intel-rapl:0/energy_uj").write_text("200\n")
    (tmp_path / "intel-rapl:0/intel-rapl:0:0/energy_uj").write_text("150\n")
    assert meter.read_j() == {"intel-rapl:0:package-0": pytest.approx(300e-6),
                              "intel-rapl:0:0:dram": pytest.approx(50e-6)}


def test_rapl_polling_energy(tmp_path):
    make_rapl(tmp_path, max_uj=10**12)
    meter = RaplMeter(tmp_path, domains=("package",), interval_s=0.002)
    meter.start()
    t0 = meter.mark("a")
    (tmp_path / "intel-rapl:0/energy_uj").write_text("5000000\n")  # +5 J
    time.sleep(0.02)
    t1 = meter.mark("b")
    meter.stop()
    assert meter.energy(t0, t1) == pytest.approx(5.0)
    assert meter.samples_in(t0, t1) >= 2  # the two marks, plus whatever the poller added


def test_rapl_unreadable_counter_names_fix(tmp_path, monkeypatch):
    make_rapl(tmp_path)
    locked = tmp_path / "intel-rapl:0/energy_uj"
    real_read = Path.read_text

    def read_text(self, *args, **kwargs):  # root can read mode-0 files, so simulate EACCES
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    with pytest.raises(DataError, match=r"energy_uj: permission denied.*Fix: run as root, or grant"):
        RaplMeter(tmp_path)


def test_rapl_absent(tmp_path):
    with pytest.raises(DataError, match="no RAPL domains"):
        RaplMeter(tmp_path)


class FakeNvml:
    def __init__(self):
        self.mj = 1000

    def nvmlInit(self):
        pass

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return b"Fake GPU"

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        return self.mj


def test_nvml_uses_energy_counter_differences():
    fake = FakeNvml()
    meter = NvmlMeter(0, nvml=fake)
    fake.mj = 3500
    assert meter.read_j() == {"gpu0": pytest.approx(2.5)}
    assert meter.metadata()["device"] == "Fake GPU"


def test_power_cli(tmp_path, capsys):
    t = np.arange(0, 10.0005, 0.001)
    f = write_trace(tmp_path / "cli.csv", t, np.where(t < 5, 1.0, 4.0))
    assert main(["power", str(f), "--window", "floor=1:4", "--window", "active=6:8",
                 "--inferences", "200"]) == 0
    out = capsys.readouterr().out
    # total 4 W * 2 s / 200 = 0.04 J, floor 1 W * 0.01 s = 0.01 J, dynamic 3 W * 0.01 s = 0.03 J
    assert "active" in out and "0.04" in out and "0.01" in out and "0.03" in out
    assert main(["power", str(f), "--window", "floor=1"]) == 1
    assert "expected NAME=T0:T1" in capsys.readouterr().err


def test_csv_wall_clock_alignment(tmp_path):
    from neuromark.system.timing import now_s

    wall0 = time.time()
    t = wall0 + np.arange(-2.0, 2.0, 0.001)
    p = np.where(t < wall0, 1.0, 5.0)  # steps from 1 W to 5 W at wall time wall0
    meter = CsvTraceMeter(write_trace(tmp_path / "wall.csv", t, p), wall_clock=True)
    host0 = now_s() - (time.time() - wall0)  # host time of the step
    assert meter.energy(host0 - 1.0, host0 - 0.1) == pytest.approx(0.9, rel=1e-3)
    assert meter.energy(host0 + 0.1, host0 + 1.0) == pytest.approx(4.5, rel=1e-3)
    assert meter.metadata()["aligned_by"] == "wall clock (time.time)"
    with pytest.raises(DataError, match="either offset_s or wall_clock"):
        CsvTraceMeter(tmp_path / "wall.csv", offset_s=0.0, wall_clock=True)


def test_power_cli_json(tmp_path, capsys):
    import json

    t = np.arange(0, 4.0005, 0.001)
    f = write_trace(tmp_path / "j.csv", t, np.full(t.size, 2.0))
    assert main(["power", str(f), "--window", "busy=1:3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    busy = out["windows"]["busy"]
    assert busy["energy_j"] == pytest.approx(4.0) and "dynamic_power_w" not in busy  # no floor window
