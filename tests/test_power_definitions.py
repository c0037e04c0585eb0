"""Measurement definitions in every result: a power window's length, sample count, sample
rate and peak power, flags for short or sparse windows, the meter's point; QUBO's share of
solves over their real-time deadline. Hand-computed traces and entries."""

from __future__ import annotations

import warnings

import pytest

from neuromark.benchmarks.qubo.deadline import over_deadline
from neuromark.system.power.csv_trace import CsvTraceMeter
from neuromark.system.power.protocol import peak_power
from neuromark.system.power.spec import MeterSpec, make_meter
from neuromark.system.power.windows import MIN_WINDOW_S, Window, analyse, window_power


def trace(tmp_path, rows):
    (tmp_path / "t.csv").write_text("t_s,power_w\n" + "".join(f"{t},{p}\n" for t, p in rows))
    return CsvTraceMeter(tmp_path / "t.csv", offset_s=0.0)


def test_window_records_rate_peak_and_flags(tmp_path):
    # 1 Hz readings: 2 W, except 9 W at t = 3 s; window [0.5, 12.5]: 12 readings (1..12 s)
    meter = trace(tmp_path, [(t, 9.0 if t == 3 else 2.0) for t in range(0, 14)])
    long = window_power(meter, Window("floor", 0.5, 12.5))
    assert long["meter_samples"] == 12 and long["sample_rate_hz"] == pytest.approx(1.0)
    assert long["peak_power_w"] == 9.0 and long["flags"] == []
    # trapezoids: 12 s at 2 W plus the 9 W spike's two 1-s triangles of 7 W height
    assert long["energy_j"] == pytest.approx(2.0 * 12 + 7.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        short = window_power(meter, Window("active", 3.5, 5.5))
    assert short["meter_samples"] == 2 and short["peak_power_w"] == pytest.approx(5.5)  # 9 -> 2 at 3.5 s
    assert short["flags"][0].startswith("power window 'active' holds only 2 meter samples")
    assert short["flags"][1] == ("power window 'active' lasts 2 s (< 10 s): board capacitance "
                                 "biases short windows (NeuroBench system rules)")
    assert MIN_WINDOW_S == 10.0


def test_analyse_states_its_definitions(tmp_path):
    meter = trace(tmp_path, [(t * 0.1, 1.0) for t in range(0, 400)])
    out = analyse(meter, Window("floor", 1, 13), [Window("stream", 14, 26)], inferences={"stream": 6})
    assert out["format"] == 3 and out["definitions"]["sample_rate_hz"] == "meter_samples / duration_s"
    assert out["active"]["stream"]["sample_rate_hz"] == pytest.approx(121 / 12)


def test_peak_power_of_an_empty_trace_is_none():
    assert peak_power({"t_s": [], "power_w": []}, 0, 1) is None


def test_meter_point_defaults_and_declarations(tmp_path):
    (tmp_path / "t.csv").write_text("t_s,power_w\n0,1\n1,1\n")
    csv = make_meter(MeterSpec(name="csv", options={"path": str(tmp_path / "t.csv")}))
    assert csv.metadata()["point"] is None  # csv: where the probe sits is the user's to say
    board = make_meter(MeterSpec(name="csv", point="shunt", options={"path": str(tmp_path / "t.csv")}))
    assert board.metadata()["point"] == "shunt"
    assert make_meter(None).metadata()["point"] is None
    from neuromark.system.power.nvml import NvmlMeter
    from neuromark.system.power.ptd import PtdMeter
    from neuromark.system.power.rapl import RaplMeter

    assert (RaplMeter.point, NvmlMeter.point, PtdMeter.point) == ("package", "board", "wall")


def test_over_deadline_fraction_by_hand():
    # timeout 0.1 s: the solver contract allows max(5%, 2 ms) = 5 ms past it
    entries = [{"scenario": "fixed_timeout", "timeout_s": 0.1, "wall_s": w}
               for w in (0.09, 0.1, 0.1001, 0.1049, 0.1051, 0.2)]  # 0.1051 and 0.2 are late
    entries += [{"scenario": "time_to_solution", "cap_s": 1.0, "wall_s": w} for w in (0.3, 1.5, 0.9)]
    entries += [{"scenario": "max_size", "timeout_s": 1.0, "tried": []}]
    got = over_deadline(entries)
    assert set(got) == {"fixed_timeout", "time_to_solution"}
    assert (got["fixed_timeout"]["over"], got["fixed_timeout"]["solves"]) == (2, 6)
    assert got["fixed_timeout"]["fraction"] == pytest.approx(1 / 3)
    assert got["time_to_solution"]["fraction"] == pytest.approx(1 / 3)
    dist = got["fixed_timeout"]["overrun_s"]
    assert dist["min"] == pytest.approx(-0.01) and dist["max"] == pytest.approx(0.1)
    assert dist["median"] == pytest.approx((0.0049 + 0.0001) / 2)
    assert "max(5% of the deadline, 2 ms)" in got["fixed_timeout"]["definition"]


def test_over_deadline_is_zero_for_a_solver_on_time():
    # 2 ms is the floor of the allowance: a 10 ms timeout returned 1.9 ms late is on time
    entries = [{"scenario": "fixed_timeout", "timeout_s": t, "wall_s": t + late}
               for t, late in ((0.01, 0.0019), (0.1, 0.0049), (1.0, 0.03), (0.01, -0.001))]
    got = over_deadline(entries)["fixed_timeout"]
    assert (got["fraction"], got["over"]) == (0.0, 0)
    late = over_deadline([{"scenario": "fixed_timeout", "timeout_s": 0.01, "wall_s": 0.0121}])
    assert late["fixed_timeout"]["fraction"] == 1.0


def test_checker_recomputes_over_deadline(tmp_path):
    from neuromark.benchmarks.qubo.checker_rules import check_over_deadline
    from neuromark.system.checker import _Audit

    entries = [{"scenario": "fixed_timeout", "timeout_s": 0.1, "wall_s": w} for w in (0.05, 0.2)]
    audit = _Audit(tmp_path)
    check_over_deadline(audit, tmp_path / "q.json", {"details": {"entries": entries}})
    check_over_deadline(audit, tmp_path / "q.json", {"details": {
        "entries": entries, "over_deadline": {"fixed_timeout": {"fraction": 0.0}}}})
    check_over_deadline(audit, tmp_path / "q.json", {"details": {
        "entries": entries, "over_deadline": over_deadline(entries)}})
    assert [str(f) for f in audit.findings] == [
        "q.json: qubo/over-deadline: no share of solves over their deadline "
        "(details.over_deadline); rerun with this neuromark",
        "q.json: qubo/over-deadline: fixed_timeout: over_deadline fraction 0.0 but the "
        "entries give 1/2 = 0.5"]
