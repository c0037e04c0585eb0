"""Floor and total power in the NeuroBench spec's words: hand arithmetic on CSV traces, the
real-time rule, amortised runs, a true idle (sleep) window, the fake RAPL sysfs end to end,
and old results files (idle/active keys) still loading."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from neuromark.config import parse_yaml
from neuromark.system.power.csv_trace import CsvTraceMeter
from neuromark.system.power.legacy import OLD_KEYS_FLAG
from neuromark.system.power.windows import Window, analyse
from neuromark.system.timing import now_s
from neuromark.tasks.base import plan_and_run


@pytest.fixture
def vi_trace(tmp_path):
    """5 V logged at 100 Hz; 0.2 A (1 W) outside [4, 8) s, 0.6 A (3 W) inside."""
    t = np.round(np.arange(0, 12.0001, 0.01), 6)
    amps = np.where((t >= 4) & (t < 8), 0.6, 0.2)
    rows = "\n".join(f"{a:.2f},5.0,{b:.2f}" for a, b in zip(t, amps))
    path = tmp_path / "vi.csv"
    path.write_text("t_s,voltage_v,current_a\n" + rows + "\n")
    return CsvTraceMeter(path, offset_s=0.0)


def test_floor_and_total_by_hand(vi_trace):
    res = analyse(vi_trace, Window("floor", 1, 3), [Window("inference", 5, 7)],
                  latency_s={"inference": 0.004})
    inf = res["active"]["inference"]
    assert res["floor"]["floor_power_w"] == pytest.approx(1.0)  # 5 V x 0.2 A
    assert res["floor"]["meter_samples"] == 201  # 1.00, 1.01, ..., 3.00 s
    assert inf["total_power_w"] == pytest.approx(3.0)  # 5 V x 0.6 A
    assert inf["dynamic_power_w"] == pytest.approx(2.0)
    assert inf["total_energy_per_inference_j"] == pytest.approx(3.0 * 0.004)
    assert inf["floor_energy_per_inference_j"] == pytest.approx(1.0 * 0.004)
    assert inf["dynamic_energy_per_inference_j"] == pytest.approx(2.0 * 0.004)
    assert inf["mode"] == "power x mean latency" and res["latency_rule"] == "measured"


def test_window_across_the_step_interpolates(vi_trace):
    # [3.5, 4.5]: 1 W for 0.49 s, a linear ramp 1 -> 3 W over 3.99..4.00 s, 3 W for 0.5 s
    res = analyse(vi_trace, Window("floor", 0.5, 1.5), [Window("edge", 3.5, 4.5)],
                  latency_s={"edge": 0.5})
    edge = res["active"]["edge"]
    assert edge["energy_j"] == pytest.approx(0.49 * 1.0 + 0.01 * 2.0 + 0.5 * 3.0)
    assert edge["total_energy_per_inference_j"] == pytest.approx(edge["total_power_w"] * 0.5)


def test_real_time_rule_and_amortised_run(vi_trace):
    rt = analyse(vi_trace, Window("floor", 1, 3), [Window("inference", 5, 7)],
                 latency_s={"inference": 1.0}, latency_rule="data_time")  # 1 s of audio
    inf = rt["active"]["inference"]
    assert inf["total_energy_per_inference_j"] == pytest.approx(3.0)
    assert inf["floor_energy_per_inference_j"] == pytest.approx(1.0)
    assert inf["mode"] == "power x data time"
    am = analyse(vi_trace, Window("floor", 1, 3), [Window("stream", 4.5, 7.5)],
                 inferences={"stream": 600})
    stream = am["active"]["stream"]
    assert stream["total_energy_per_inference_j"] == pytest.approx(9.0 / 600)  # 3 W x 3 s / 600
    assert stream["floor_energy_per_inference_j"] == pytest.approx(3.0 / 600)  # 1 W x 3 s / 600
    assert stream["mode"] == "amortised"


def test_true_idle_window_is_reported_apart_from_the_floor(vi_trace):
    res = analyse(vi_trace, Window("floor", 5, 7), [Window("inference", 5.5, 6.5)],
                  latency_s={"inference": 0.01}, idle=Window("idle", 9, 11))
    assert res["idle"]["mean_power_w"] == pytest.approx(1.0)
    assert res["floor"]["floor_power_w"] == pytest.approx(3.0)  # the floor is never the idle


class Board:
    """A fake board's power (W) integrated into a RAPL-style µJ counter as the SUT changes it."""

    def __init__(self, watts):
        self.watts, self.t, self.joules = watts, now_s(), 0.0
        self.lock = threading.Lock()

    def set(self, watts):
        with self.lock:
            self._advance()
            self.watts = watts

    def _advance(self):
        now = now_s()
        self.joules += self.watts * (now - self.t)
        self.t = now

    def counter_uj(self):
        with self.lock:
            self._advance()
            return f"{int(self.joules * 1e6)}\n"


def test_fake_rapl_floor_total_and_sleep_end_to_end(tmp_path, monkeypatch):
    """Floor 2 W, 6 W while the SUT infers, 0.5 W asleep: the scores under the spec's names."""
    pytest.importorskip("mlperf_loadgen")
    from test_system_power import make_rapl

    import neuromark.system.power.rapl as rapl
    from neuromark.registry import suts
    from neuromark.system.sut import BuiltSUT, InMemoryLibrary, StagedSUT
    from neuromark.system.track.task import TASK

    root = tmp_path / "powercap"
    make_rapl(root, max_uj=2**50)
    board = Board(2.0)
    counter = root / "intel-rapl:0/energy_uj"
    real_read = rapl._read
    monkeypatch.setattr(rapl, "_read", lambda f: board.counter_uj() if f == counter else real_read(f))

    def infer(x):
        board.set(6.0)
        end = now_s() + 0.0005
        while now_s() < end:
            pass
        board.set(2.0)
        return np.asarray([x], dtype="<f4")

    def chip(samples: int = 16) -> BuiltSUT:
        library = InMemoryLibrary("values", float, samples)
        sut = StagedSUT("chip", library, lambda v: v + 1.0, infer)
        sut.sleep, sut.wake = (lambda: board.set(0.5)), (lambda: board.set(2.0))
        return BuiltSUT(sut, library)

    suts.register("fake_chip", chip)
    try:
        text = ("task: system\nsut: {name: fake_chip}\nloadgen: {min_query_count: 32, min_duration_s: 0, "
                f"expected_latency_s: 0.001}}\nmeter: {{name: rapl, options: {{root: {root}, "
                "interval_s: 0.005, domains: [package]}}\n"
                "power: {floor_s: 0.2, active_s: 0.2, sleep_s: 0.2}\n")
        res = plan_and_run(TASK, parse_yaml(text, tmp_path / "r.yaml"), tmp_path / "out")[0]
    finally:
        suts._entries.pop("fake_chip")
    assert res["floor_power"] == pytest.approx(2.0, rel=1e-3)
    assert res["idle_power"] == pytest.approx(0.5, rel=1e-2)
    assert res["preprocess_total_power"] == pytest.approx(2.0, rel=1e-3)
    assert 4.0 < res["inference_total_power"] <= 6.0 + 1e-6  # busy most of the window
    assert res["inference_dynamic_power"] == pytest.approx(res["inference_total_power"] - res["floor_power"])
    lat = res.details["timing"]["inference"]["mean_s"]
    assert res["inference_floor_energy_per_inference"] == pytest.approx(res["floor_power"] * lat)
    assert res["inference_total_energy_per_inference"] == pytest.approx(res["inference_total_power"] * lat)
    assert not any("no sleep() hook" in f for f in res.flags)


def test_old_results_file_loads_with_the_new_names(tmp_path, capsys):
    from neuromark.cli import main
    from neuromark.identity import BenchmarkIdentity
    from neuromark.results import Results, Score
    from neuromark.system.track.submission import load_results

    def watts(v, unit="W"):
        return Score(v, unit=unit, higher_is_better=False)

    # written the way results files were before the spec's names (idle/active/dynamic)
    Results(scores={"idle_power": watts(2.0), "inference_power": watts(7.0),
                    "inference_dynamic_power": watts(5.0),
                    "inference_energy_per_inference": watts(0.07, "J")},
            benchmark=BenchmarkIdentity("old-run"),
            details={"loadgen": {"PerformanceOnly": {"scenario": "SingleStream", "validity": "VALID"}},
                     "flags": [], "power_meter": {"name": "csv", "measured": True},
                     "power": {"idle": {"t0_s": 0, "t1_s": 3, "duration_s": 3, "energy_j": 6.0,
                                        "mean_power_w": 2.0, "meter_samples": 300},
                               "active": {"inference": {"t0_s": 5, "t1_s": 8, "duration_s": 3,
                                                        "energy_j": 21.0, "mean_power_w": 7.0,
                                                        "meter_samples": 300, "dynamic_power_w": 5.0,
                                                        "energy_per_inference_j": 0.07,
                                                        "dynamic_energy_per_inference_j": 0.05}}}}
            ).save(tmp_path / "old-run.json")
    res = load_results(tmp_path)[0]
    assert res["floor_power"] == 2.0 and res["inference_total_power"] == 7.0
    assert res["inference_total_energy_per_inference"] == 0.07 and "idle_power" not in res
    inf = res.details["power"]["active"]["inference"]
    assert inf["floor_energy_per_inference_j"] == pytest.approx(0.02)  # 2 W x (0.07 J / 7 W)
    assert OLD_KEYS_FLAG in res.flags
    system = tmp_path / "system.yaml"
    system.write_text("name: x\narchitecture: y\nhardware: {processor: z}\nalgorithm: a\n")
    assert main(["report", str(tmp_path), "--system", str(system), "--out", str(tmp_path / "sub")]) == 0
    text = (tmp_path / "sub/submission.md").read_text()
    assert "| floor | 3 | 300 | 2 | 2 |" in text and "old results file: power read from the old keys" in text


def test_power_cli_floor_window_and_latency(vi_trace, capsys):
    from neuromark.cli import main

    trace = str(vi_trace.path)
    assert main(["power", trace, "--window", "floor=1:3", "--window", "active=5:7", "--latency", "1.0",
                 "--json"]) == 0
    active = json.loads(capsys.readouterr().out)["windows"]["active"]
    assert active["total_power_w"] == pytest.approx(3.0) and active["floor_power_w"] == pytest.approx(1.0)
    assert active["total_energy_per_inference_j"] == pytest.approx(3.0)  # 3 W x 1 s of data
    assert active["floor_energy_per_inference_j"] == pytest.approx(1.0)
    assert main(["power", trace, "--window", "floor=1:3", "--inferences", "5", "--latency", "1"]) == 1
    assert "not both" in capsys.readouterr().err


def test_power_cli_reads_the_old_idle_window_as_floor(vi_trace, capsys):
    from neuromark.cli import main

    trace = str(vi_trace.path)
    assert main(["power", trace, "--window", "idle=1:3", "--window", "active=5:7", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["windows"]["active"]["dynamic_power_w"] == pytest.approx(2.0)
    assert "floor" in out["windows"] and "read as the floor window" in out["notes"][0]
    assert main(["power", trace, "--window", "floor=5:7", "--window", "idle=1:3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # beside a floor window, idle is a sleep window
    assert out["windows"]["idle"]["mean_power_w"] == pytest.approx(1.0) and out["notes"] == []


def test_real_time_rule_from_the_config(tmp_path):
    """``latency: data_time``: energy per inference = power x the data time of one sample."""
    pytest.importorskip("mlperf_loadgen")
    from neuromark.errors import ConfigError
    from neuromark.system.track.task import TASK

    t = np.arange(now_s() - 1.0, now_s() + 120.0, 0.001)
    (tmp_path / "trace.csv").write_text("t_s,power_w\n" + "\n".join(f"{v:.6f},3.0" for v in t))
    text = ("task: system\nsut: {name: sleep, options: {sleep_s: 0.0002}}\nlatency: data_time\n"
            "loadgen: {min_query_count: 32, min_duration_s: 0, expected_latency_s: 0.001}\n"
            "meter: {name: csv, options: {path: trace.csv, offset_s: 0}}\n"
            "power: {floor_s: 0.1, active_s: 0.1, data_time_s: 0.5}\n")
    res = plan_and_run(TASK, parse_yaml(text, tmp_path / "rt.yaml"), tmp_path / "out")[0]
    assert res["stream_total_energy_per_inference"] == pytest.approx(3.0 * 0.5)
    assert res["stream_floor_energy_per_inference"] == pytest.approx(3.0 * 0.5)
    assert res.details["power"]["latency_rule"] == "data_time" and not res.details["power"]["amortised"]
    assert any(f.startswith("real-time rule") for f in res.flags)
    no_time = parse_yaml(text.replace(", data_time_s: 0.5", ""), tmp_path / "nt.yaml")
    with pytest.raises(ConfigError, match=r"nt.yaml:3: power.latency: data_time needs "
                                          r"power.data_time_s \(SUT .sleep. does not state"):
        plan_and_run(TASK, no_time, tmp_path / "out2")
