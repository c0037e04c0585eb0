"""A scenario search does bounded work and a search that finds nothing is INVALID
everywhere (issue 41): it stops when the calibration or a probe shows that no value can
pass, or before a probe that would exceed ``max_search_s``; the terminal line, the results
file, the exit status and ``neuromark check`` all say INVALID."""

from __future__ import annotations

import json

import pytest

from neuromark.system.search import Probe, search_rate, search_streams


def below(limit):
    def probe(value):
        return Probe(value, value <= limit, {})
    return probe


def test_search_stops_when_a_probe_shows_that_no_rate_can_pass():
    # without give_up the halving would go on to start / 1024 (11 probes, each twice as long)
    result = search_rate(below(0), 1000, give_up=lambda p: "idle and still failing"
                         if p.value < 400 else None)
    assert [p.value for p in result.probes] == [1000, 500, 250]
    assert result.best is None and result.stopped == "idle and still failing"
    # a rate that passed before is kept
    result = search_rate(below(600), 500, tolerance=0.01, give_up=lambda p: "stop" if p.value > 900 else None)
    assert result.best == 500 and [p.value for p in result.probes] == [500, 1000]


def test_search_stops_before_a_probe_beyond_its_time_budget():
    spent = []

    def affordable(rate):  # a probe lasts 100 / rate s; 2 s in all
        if sum(spent) + 100 / rate > 2:
            return f"the probe at {rate:g} would exceed the budget"
        spent.append(100 / rate)
        return None

    result = search_rate(below(10), 400, affordable=affordable)
    assert [p.value for p in result.probes] == [400, 200, 100]  # 0.25 + 0.5 + 1 s
    assert result.best is None and result.stopped == "the probe at 50 would exceed the budget"
    result = search_streams(below(100), affordable=lambda k: "too long" if k > 4 else None)
    assert [p.value for p in result.probes] == [1, 2, 4] and result.best == 4
    assert result.stopped == "too long"


SLEEP = ("task: system\nbenchmark: {{id: {id}}}\nsut:\n  name: sleep\n"
         "  options: {{sleep_s: {sleep}, samples: 8}}\ntiming: {{warmup: 2}}\nloadgen:\n"
         "  scenario: {scenario}\n  latency_bound_s: {bound}\n  target_latency_percentile: 0.9\n"
         "  min_duration_s: 0.05\n  min_query_count: 40\n  search: {search}\n")


def run_search(tmp_path, capsys, **fields):
    from neuromark.cli import main

    config = tmp_path / "search.yaml"
    config.write_text(SLEEP.format(**fields))
    out = tmp_path / "out"
    code = main(["run", str(config), "--out", str(out), "--quiet"])
    text = capsys.readouterr()
    (results,) = [p for p in out.glob(f"{fields['id']}--*.json")]
    check = main(["check", str(out)])
    return code, text.out + text.err, json.loads(results.read_text()), check, capsys.readouterr().out


@pytest.mark.parametrize("scenario", ["MultiStream", "Server"])
def test_search_that_no_value_can_pass_stops_at_calibration_and_is_invalid_everywhere(
        tmp_path, capsys, scenario):
    pytest.importorskip("mlperf_loadgen")
    code, printed, res, check, audit = run_search(
        tmp_path, capsys, id="hopeless", sleep=0.0005, scenario=scenario, bound=0.0001, search="true")
    search = res["details"]["loadgen"]["search"]
    assert search["best"] is None and search["probes"] == []  # nothing probed
    assert "the calibration shows that no value can pass: an unloaded sample takes" in search["stopped"]
    metric = res["details"]["scenario_metric"]
    assert metric["validity"] == "INVALID" and metric["value"] is None
    assert "search found no passing value" in metric["invalid_reason"]
    assert "scenario_metric" not in res["scores"]
    assert any(f.startswith("scenario metric INVALID") for f in res["flags"])
    assert code == 1 and f"judged on {metric['name']} = n/a: INVALID (the " in printed
    assert check == 1 and "loadgen/search: the " in audit and "the result is INVALID" in audit


def test_search_stops_before_exceeding_max_search_s_and_says_so(tmp_path, capsys):
    pytest.importorskip("mlperf_loadgen")
    code, printed, res, check, audit = run_search(
        tmp_path, capsys, id="budget", sleep=0.0005, scenario="Server", bound=0.05,
        search="{max_search_s: 0.01}")
    search = res["details"]["loadgen"]["search"]
    assert search["probes"] == [] and search["best"] is None
    assert "beyond loadgen.search.max_search_s = 0.01 s" in search["stopped"]
    assert code == 1 and check == 1 and "max_search_s" in printed and "loadgen/search" in audit


def test_multistream_final_run_over_the_bound_is_invalid_and_check_says_so(tmp_path):
    from types import SimpleNamespace

    from neuromark.system.checker import _Audit, _check_search
    from neuromark.system.loadgen import LoadGenSettings
    from neuromark.system.track.perf import scenario_metric

    settings = LoadGenSettings(scenario="MultiStream", samples_per_query=4, latency_bound_s=0.001,
                               min_duration_s=0, expected_latency_s=0.001)
    search = {"searched": "samples_per_query", "best": 4.0, "latency_bound_s": 0.001}
    run = SimpleNamespace(summary={"validity": "VALID", "effective": {},
                                   "latency_s": {"percentiles_s": {"99": 0.005}}})
    metric = scenario_metric(run, settings, search)
    assert metric["validity"] == "INVALID" and metric["value"] == 4
    assert "p99 per-query latency 5 ms at 4 streams exceeds the bound 1 ms" in metric["invalid_reason"]
    audit = _Audit(tmp_path)
    _check_search(audit, tmp_path / "r.json", {"loadgen": {"search": search}, "scenario_metric": metric})
    assert ["loadgen/search"] == [f.rule for f in audit.findings]
    run.summary["latency_s"]["percentiles_s"]["99"] = 0.0009
    assert scenario_metric(run, settings, search)["validity"] == "VALID"
