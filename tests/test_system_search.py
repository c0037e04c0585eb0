"""Each scenario's paper metric by search: the bisection on stubbed run functions
(deterministic), Server and MultiStream searches through LoadGen on the sleep SUT, the
terminal line, the exit codes of ``system run`` / ``run`` and ``--allow-invalid``."""

from __future__ import annotations

import json
import re

import pytest

from neuromark.config import parse_yaml
from neuromark.system.search import Probe, search_rate, search_streams
from neuromark.tasks.base import plan_and_run


def below(limit):
    def probe(value):
        return Probe(value, value <= limit, {"note": "stub"})
    return probe


def test_rate_search_brackets_then_bisects():
    result = search_rate(below(731), 500, tolerance=0.05)
    assert [p.value for p in result.probes] == [500, 1000, 750, 625, 687.5, 718.75]
    assert result.best == 718.75 and "within 0.05" in result.stopped
    assert (731 - result.best) / 731 <= 0.05
    record = result.record()
    assert record["probes"][1] == {"value": 1000, "passed": False, "note": "stub"}


def test_rate_search_halves_down_and_stops():
    result = search_rate(below(300), 2000, tolerance=0.1)
    assert [p.value for p in result.probes][:4] == [2000, 1000, 500, 250]
    assert 300 * 0.9 <= result.best <= 300
    result = search_rate(below(731), 500, tolerance=0.001, max_probes=4)
    assert len(result.probes) == 4 and result.best == 625 and "max_probes" in result.stopped
    result = search_rate(below(0.1), 100, floor=10)
    assert result.best is None and [p.value for p in result.probes] == [100, 50, 25, 12.5]
    with pytest.raises(ValueError, match="start rate"):
        search_rate(below(1), 0)


def test_stream_search_doubles_then_bisects():
    result = search_streams(below(11))
    assert [p.value for p in result.probes] == [1, 2, 4, 8, 16, 12, 10, 11]
    assert result.best == 11
    assert search_streams(below(0)).best is None
    result = search_streams(below(100), max_streams=24)
    assert result.best == 24 and [p.value for p in result.probes] == [1, 2, 4, 8, 16, 24]
    assert search_streams(below(3), start=8).best == 3  # a failing start searches below it


SLEEP = ("task: system\nbenchmark: {{id: {id}}}\nsut:\n  name: sleep\n"
         "  options: {{sleep_s: 0.001, samples: 32}}\ntiming: {{warmup: 4}}\nloadgen:\n{loadgen}")


def test_server_search_keeps_probes_and_reports_min_of_final_runs(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    from neuromark.system.track.task import TASK

    loadgen = ("  scenario: Server\n  latency_bound_s: 0.02\n  target_latency_percentile: 0.9\n"
               "  min_duration_s: 0.2\n  search: {final_runs: 2, max_probes: 5, tolerance: 0.2}\n")
    config = parse_yaml(SLEEP.format(id="sleep-server", loadgen=loadgen), tmp_path / "s.yaml")
    res = plan_and_run(TASK, config, tmp_path / "out")[0]
    search = res.details["loadgen"]["search"]
    assert search["searched"] == "target_qps" and 2 <= len(search["probes"]) <= 5
    assert all((tmp_path / "out/loadgen/search").glob("probe_*/mlperf_log_detail.txt"))
    passed = [p["value"] for p in search["probes"] if p["passed"]]
    final = search["final"]
    assert len(final) % 2 == 0 and final[0]["target_qps"] == (search["best"] or min(
        p["value"] for p in search["probes"]))
    metric = res.details["scenario_metric"]
    assert metric["searched"] and "minimum of the final runs" in metric["name"]
    figures = [r["scheduled_samples_per_second"] for r in final[-2:]]
    if metric["validity"] == "VALID":
        assert passed and res.scores["scenario_metric"].value == pytest.approx(min(figures))
    assert res.config["loadgen"]["target_qps"] == final[-1]["target_qps"]


def test_multistream_search_finds_streams_under_the_bound(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    from neuromark.system.track.task import TASK

    loadgen = ("  scenario: MultiStream\n  latency_bound_s: 0.006\n  target_latency_percentile: 0.9\n"
               "  min_duration_s: 0.1\n  search: {max_probes: 6}\n")
    config = parse_yaml(SLEEP.format(id="sleep-ms", loadgen=loadgen), tmp_path / "m.yaml")
    res = plan_and_run(TASK, config, tmp_path / "out")[0]
    search = res.details["loadgen"]["search"]
    assert search["searched"] == "samples_per_query" and search["probes"][0]["value"] == 1
    for probe in search["probes"]:  # passing means VALID and the p90 estimate within 6 ms
        assert probe["passed"] == (probe["validity"] == "VALID"
                                   and probe["p99_query_latency_s"] <= 0.006)
    metric = res.details["scenario_metric"]
    assert metric["unit"] == "streams" and metric["value"] == res.config["loadgen"]["samples_per_query"]
    if search["best"] is not None:
        assert metric["value"] == search["best"] and 1 <= metric["value"] < 6  # 1 ms per sample


INVALID = ("task: system\nbenchmark: {id: sleep-invalid}\nsut:\n  name: sleep\n"
           "  options: {sleep_s: 0.002, samples: 8}\ntiming: {warmup: 2}\n"
           "loadgen:\n  scenario: Server\n  target_qps: 100\n  latency_bound_s: 0.0005\n"
           "  target_latency_percentile: 0.9\n  min_duration_s: 0\n")


def test_invalid_result_exits_non_zero_and_still_writes_everything(tmp_path, capsys):
    pytest.importorskip("mlperf_loadgen")
    from neuromark.cli import main

    config = tmp_path / "invalid.yaml"
    config.write_text(INVALID)  # a 2-ms SUT cannot meet a 0.5-ms bound: INVALID whatever the load
    out = tmp_path / "a"
    assert main(["system", "run", str(config), "--out", str(out)]) == 1
    text = capsys.readouterr()
    assert "INVALID" in text.out + text.err
    assert (out / "submission.json").is_file() and (out / "submission/submission.md").is_file()
    assert len([p for p in out.glob("sleep-invalid--*.json")]) == 1
    assert main(["system", "run", str(config), "--out", str(tmp_path / "b"), "--allow-invalid"]) == 0
    assert main(["run", str(config), "--out", str(tmp_path / "c")]) == 1
    assert main(["run", str(config), "--out", str(tmp_path / "d"), "--allow-invalid"]) == 0


def test_run_writes_the_submission_and_the_judged_figure(tmp_path, capsys):
    pytest.importorskip("mlperf_loadgen")
    from neuromark.cli import main
    from neuromark.system.checker import check_submission

    config = tmp_path / "sleep.yaml"
    config.write_text(SLEEP.format(id="sleep-ss", loadgen="  scenario: SingleStream\n"
                                   "  min_duration_s: 0.2\n  target_latency_percentile: 0.95\n"))
    out = tmp_path / "out"
    assert main(["run", str(config), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert re.search(r"system \[sleep-ss\]: SingleStream judged on (early-stopping )?p95 "
                     r"latency( estimate)? = ", stdout)
    assert stdout.split("system [sleep-ss]:")[1].splitlines()[0].endswith(": VALID")
    manifest = json.loads((out / "submission.json").read_text())
    assert manifest["benchmarks"][0]["loadgen_logs"] == {
        "PerformanceOnly": "sleep/loadgen/performanceonly", "AccuracyOnly": "sleep/loadgen/accuracyonly"}
    assert (out / "submission/submission.md").is_file()
    _, findings = check_submission(out)  # the sleep SUT has no stages and p95 is no MLPerf rule,
    assert {f.rule for f in findings} == {"settings/latency-percentile"}  # but VALID
    res = json.loads(next(out.glob("sleep-ss--*.json")).read_text())
    assert res["config"]["requested"]["loadgen"] == {"scenario": "SingleStream", "min_duration_s": 0.2,
                                                     "target_latency_percentile": 0.95}
    assert isinstance(res["config"]["effective"]["loadgen"]["expected_latency_s"], float)
    assert "loadgen_p95_latency" in res["scores"]
