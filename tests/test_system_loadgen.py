"""LoadGen wrapper: all scenarios and modes on toy SUTs, log parsing, bad SUTs, bad settings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.config import parse_yaml, validate
from neuromark.errors import ConfigError, DataError
from neuromark.system.loadgen import LoadGenSettings, SUTFailure, run_test
from neuromark.system.loadgen_log import parse_detail, read_accuracy_log, summarize
from neuromark.system.sut import InMemoryLibrary
from neuromark.system.suts.null import NullSUT

pytest.importorskip("mlperf_loadgen")

FAST = {"min_query_count": 64, "min_duration_s": 0.0, "expected_latency_s": 1e-4,
        "target_qps": 1000.0, "latency_bound_s": 0.05}


class EchoSUT:
    """Answers sample i with [i, 2i] as float32."""

    name = "echo"
    response_dtype = "<f4"

    def issue(self, indices):
        return [np.array([i, 2 * i], dtype="<f4") for i in indices]


def library(n=16):
    return InMemoryLibrary("toy", lambda i: i, n)


@pytest.mark.parametrize("scenario", ["SingleStream", "MultiStream", "Server", "Offline"])
def test_every_scenario_runs_and_parses(tmp_path, scenario):
    settings = LoadGenSettings(scenario=scenario, **FAST)
    run = run_test(EchoSUT(), library(), settings, tmp_path / "logs")
    s = run.summary
    assert s["scenario"] == scenario and s["mode"] == "PerformanceOnly"
    assert s["validity"] in ("VALID", "INVALID")
    assert s["latency_s"]["mean_s"] > 0 and "90" in s["latency_s"]["percentiles_s"]
    assert s["effective"]["min_query_count"] == (1 if scenario == "Offline" else 64)
    assert s["requested"]["scenario"] == scenario
    assert s["power_begin"] and s["power_end"]
    assert (tmp_path / "logs/mlperf_log_summary.txt").is_file()
    if scenario == "SingleStream":
        assert s["qps"]["with_loadgen_overhead"] > 0
    elif scenario in ("Server", "Offline"):
        assert s["samples_per_second"] > 0


def test_accuracy_mode_decodes_with_recorded_dtype(tmp_path):
    settings = LoadGenSettings(mode="AccuracyOnly", **FAST)
    run = run_test(EchoSUT(), library(10), settings, tmp_path)
    assert run.response_dtype == "<f4"
    responses = read_accuracy_log(tmp_path / "mlperf_log_accuracy.json", run.response_dtype)
    assert sorted(responses) == list(range(10))  # accuracy mode covers every sample once
    np.testing.assert_array_equal(responses[7], [7, 14])
    with pytest.raises(DataError, match=r"mlperf_log_accuracy.json: sample \d+: 8 bytes is not a "
                                        r"multiple of the recorded dtype \|V3 \(3 bytes\)"):
        read_accuracy_log(tmp_path / "mlperf_log_accuracy.json", "V3")


def test_invalid_reasons_name_early_stopping(tmp_path):
    settings = LoadGenSettings(min_query_count=10, max_query_count=10, min_duration_s=0,
                               expected_latency_s=1e-4)
    s = run_test(NullSUT(), library(), settings, tmp_path).summary
    assert s["validity"] == "INVALID"
    assert any("early stopping not met" in r and "64" in r for r in s["invalid_reasons"])


class RaisingSUT(EchoSUT):
    def issue(self, indices):
        if 3 in indices:
            raise RuntimeError("boom")
        return super().issue(indices)


class ShortSUT(EchoSUT):
    def issue(self, indices):
        return super().issue(indices)[:-1]


class WrongDtypeSUT(EchoSUT):
    def issue(self, indices):
        return [np.zeros(2, dtype="<f8") for _ in indices]


@pytest.mark.parametrize("sut, message", [
    (RaisingSUT(), r"raised RuntimeError on sample indices \[3\]: boom"),
    (ShortSUT(), r"returned 0 responses for 1 samples \(sample indices \[\d+\]\)"),
    (WrongDtypeSUT(), r"response to sample \d+ has dtype <f8, expected the declared <f4"),
])
def test_bad_sut_fails_naming_sample_and_keeps_logs(tmp_path, sut, message):
    settings = LoadGenSettings(**FAST)
    with pytest.raises(SUTFailure, match=message) as info:
        run_test(sut, library(), settings, tmp_path / "kept")
    assert "LoadGen logs kept in" in str(info.value)
    assert (tmp_path / "kept/mlperf_log_detail.txt").stat().st_size > 0


@pytest.mark.parametrize("yaml_text, message", [
    ("min_duration_s: -1", r"x.yaml:2: loadgen.min_duration_s: Input should be greater than or equal to 0"),
    ("target_latency_percentile: 1.5", r"loadgen.target_latency_percentile: Input should be less than 1"),
    ("target_latency_percentile: 0", r"target_latency_percentile: Input should be greater than 0"),
    ("scenario: Streaming", r"loadgen.scenario: Input should be 'SingleStream'"),
    ("scenario: Server\ntarget_qps: null", r"the Server scenario needs target_qps \(a number or auto\)"),
    ("min_query_count: 10\nmax_query_count: 5", r"max_query_count \(5\) < min_query_count \(10\)"),
])
def test_impossible_settings(yaml_text, message):
    from pathlib import Path

    text = "loadgen:\n" + "".join(f"  {line}\n" for line in yaml_text.splitlines())
    config = parse_yaml(text, Path("x.yaml"))
    with pytest.raises(ConfigError, match=message):
        validate(LoadGenSettings, config.data["loadgen"], config, ("loadgen",))


def test_detail_parser_reads_errors_and_bad_lines(tmp_path):
    log = tmp_path / "mlperf_log_detail.txt"
    rec = {"key": "error_runtime", "value": "oops", "metadata": {"is_error": True}}
    log.write_text(":::MLLOG " + json.dumps(rec) + "\n:::MLLOG {bad\n")
    with pytest.raises(DataError, match=r"mlperf_log_detail.txt:2: malformed MLLOG record"):
        parse_detail(log)
    log.write_text(":::MLLOG " + json.dumps(rec) + "\n")
    assert parse_detail(log).errors == ["error_runtime: oops"]
    assert summarize(tmp_path)["errors"] == ["error_runtime: oops"]


def test_summary_and_detail_must_agree(tmp_path):
    run_test(NullSUT(), library(), LoadGenSettings(**FAST), tmp_path)
    summary = tmp_path / "mlperf_log_summary.txt"
    text = summary.read_text()
    verdict = "VALID" if "Result is : VALID" in text else "INVALID"
    other = "INVALID" if verdict == "VALID" else "VALID"
    summary.write_text(text.replace(f"Result is : {verdict}", f"Result is : {other}"))
    with pytest.raises(DataError, match=f"says '{other}' but mlperf_log_detail.txt says '{verdict}'"):
        summarize(tmp_path)


def test_library_load_failure_is_reported_not_crashing(tmp_path):
    def fetch(i):
        if i == 3:
            raise ValueError("corrupt wav")
        return i

    lib = InMemoryLibrary("bad", fetch, 8)
    with pytest.raises(SUTFailure, match=r"sample library 'bad' failed to load samples .*"
                                         r"ValueError: corrupt wav; LoadGen logs kept in"):
        run_test(NullSUT(), lib, LoadGenSettings(**FAST), tmp_path)
    assert (tmp_path / "mlperf_log_detail.txt").is_file()
