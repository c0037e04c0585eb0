"""MLPerf compliance tests: pass/fail logic on synthetic figures, and short LoadGen runs that
show the audit settings reach LoadGen (a memoising SUT fails TEST04; TEST01 compares logged
responses; a stateful SUT makes TEST01 not applicable). The real runs on the ESN and ASC SUTs
are in ``bench/compliance.py``."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from neuromark.system.compliance import (
    FAIL,
    NOT_APPLICABLE,
    PASS,
    TEST05_SEEDS,
    figure_of_merit,
    format_verdicts,
    run_compliance,
    verdict_test01,
    verdict_test04,
    verdict_test05,
)
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.loadgen_log import parse_detail
from neuromark.system.sut import InMemoryLibrary, StagedSUT
from neuromark.tasks.base import plan_and_run


def test_test04_caching_threshold_on_synthetic_latencies():
    assert verdict_test04(1.0e-3, 0.95e-3, "latency")["verdict"] == PASS  # 1.05x faster: noise
    v = verdict_test04(1.0e-3, 0.8e-3, "latency")  # 1.25x faster
    assert v["verdict"] == FAIL and v["figures"]["speedup"] == pytest.approx(1.25)
    assert "the SUT caches results" in v["reason"]
    assert verdict_test04(100.0, 109.0, "throughput")["verdict"] == PASS
    assert verdict_test04(100.0, 111.0, "throughput")["verdict"] == FAIL
    assert verdict_test04(1.0e-3, 2.0e-3, "latency")["verdict"] == PASS  # slower never fails
    # short latencies (SingleStream <= 0.2 ms, MultiStream <= 1.6 ms): 20 %
    assert verdict_test04(0.15e-3, 0.13e-3, "latency", "SingleStream")["verdict"] == PASS
    assert verdict_test04(0.15e-3, 0.12e-3, "latency", "SingleStream")["verdict"] == FAIL
    assert verdict_test04(1.5e-3, 1.3e-3, "latency", "MultiStream")["verdict"] == PASS
    assert verdict_test04(1.5e-3, 1.3e-3, "latency", "SingleStream")["verdict"] == FAIL


def test_test05_tolerance_and_relaxed_short_latencies():
    assert verdict_test05(1.0e-3, 1.04e-3, "latency", "SingleStream")["verdict"] == PASS
    v = verdict_test05(1.0e-3, 1.06e-3, "latency", "SingleStream")
    assert v["verdict"] == FAIL and v["figures"]["worse_by"] == pytest.approx(0.06)
    assert "6.0% worse" in v["reason"]
    # better with the alternate seeds is no failure (TEST05 verify_performance.py)
    assert verdict_test05(1.0e-3, 0.80e-3, "latency", "SingleStream")["verdict"] == PASS
    # <= 0.2 ms single-stream and <= 1.6 ms multi-stream latencies: 20 %
    assert verdict_test05(0.15e-3, 0.17e-3, "latency", "SingleStream")["verdict"] == PASS
    assert verdict_test05(0.15e-3, 0.19e-3, "latency", "SingleStream")["verdict"] == FAIL
    assert verdict_test05(1.5e-3, 1.7e-3, "latency", "MultiStream")["verdict"] == PASS
    assert verdict_test05(2.0e-3, 2.2e-3, "latency", "MultiStream")["verdict"] == FAIL
    assert verdict_test05(500.0, 520.0, "throughput", "Offline")["verdict"] == PASS
    assert verdict_test05(500.0, 480.0, "throughput", "Offline")["verdict"] == PASS
    bad = verdict_test05(500.0, 470.0, "throughput", "Server")
    assert bad["verdict"] == FAIL and bad["figures"]["worse_by"] == pytest.approx(500 / 470 - 1)


def test_test01_compares_responses_and_performance():
    acc = {i: np.array([i, 2.0 * i], dtype="<f4") for i in range(10)}
    perf = {i: acc[i].copy() for i in (1, 4, 7)}
    ok = verdict_test01(perf, acc, 1.0e-3, 1.05e-3, "latency")
    assert ok["verdict"] == PASS and ok["figures"]["responses_compared"] == 3
    perf[4] = np.array([4.0, 8.5], dtype="<f4")
    bad = verdict_test01(perf, acc, 1.0e-3, 1.0e-3, "latency")
    assert bad["verdict"] == FAIL and "1 of 3 logged responses differ" in bad["reason"]
    assert "samples [4]" in bad["reason"]
    slow = verdict_test01({1: acc[1]}, acc, 1.0e-3, 1.2e-3, "latency")
    assert slow["verdict"] == FAIL and "1.200x the submission's" in slow["reason"]
    assert verdict_test01({}, acc, 1.0, 1.0, "latency")["verdict"] == FAIL
    fast = verdict_test01({1: acc[1]}, acc, 1.0e-3, 0.88e-3, "latency")  # two-sided
    assert fast["verdict"] == FAIL and "outside +-10%" in fast["reason"]
    short = verdict_test01({1: acc[1]}, acc, 0.15e-3, 0.17e-3, "latency", "SingleStream")
    assert short["verdict"] == PASS and short["figures"]["tolerance"] == 0.20


def test_figure_of_merit_per_scenario():
    ss = {"scenario": "SingleStream", "latency_s": {"percentiles_s": {"90": 0.002, "99": 0.003}}}
    assert figure_of_merit(ss) == (0.002, "latency", "p90 latency (s)")
    # LoadGen's early-stopping estimate, when logged, is the figure (as MLPerf's scripts)
    assert figure_of_merit({**ss, "early_stopping_latency_s": 0.0021}) == (
        0.0021, "latency", "early-stopping p90 latency estimate (s)")
    ms = {"scenario": "MultiStream", "latency_s": {"percentiles_s": {"90": 0.002, "99": 0.003}}}
    assert figure_of_merit(ms)[0] == 0.003
    assert figure_of_merit({"scenario": "Offline", "samples_per_second": 250.0})[1] == "throughput"
    with pytest.raises(Exception, match="has no samples/s"):
        figure_of_merit({"scenario": "Server"})


class Memoiser:
    """A deliberately caching SUT (test double): 20 ms per new sample, instant on a repeat
    (20 ms: far above the scheduling noise of a loaded machine, which put a 2 ms SUT's
    repeat run's p90 above its reference run's)."""

    name = "memoiser"
    response_dtype = "<f4"

    def __init__(self):
        self.cache = {}

    def issue(self, indices):
        out = []
        for i in indices:
            if i not in self.cache:
                time.sleep(0.02)
                self.cache[i] = np.array([float(i)], dtype="<f4")
            out.append(self.cache[i])
        return out


SETTINGS = LoadGenSettings(scenario="SingleStream", min_query_count=64, min_duration_s=0,
                           expected_latency_s=0.02)


def test_memoising_sut_fails_test04(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    library = InMemoryLibrary("ids", lambda i: i, 100_000)  # unique samples: hardly any repeat
    sut = Memoiser()
    # 300 queries: the early-stopping p90 estimate of 64 would be about the maximum, i.e. the
    # one cache miss of the same-sample run
    settings = SETTINGS.model_copy(update={"min_query_count": 300})
    reference = run_test(sut, library, settings, tmp_path / "perf")
    verdicts = run_compliance(sut, library, settings, reference, None, tmp_path / "audit", ("TEST04",))
    v = verdicts["TEST04"]
    assert v["verdict"] == FAIL and v["figures"]["speedup"] > 10, v
    assert parse_detail(tmp_path / "audit/TEST04/mlperf_log_detail.txt").values[
        "effective_performance_issue_same"] is True


def test_test01_and_test05_reach_loadgen(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    library = InMemoryLibrary("values", lambda i: np.float32(i), 256)
    sut = StagedSUT("double", library, lambda x: x * 2, lambda f: np.array([f, f + 1], dtype="<f4"))
    reference = run_test(sut, library, SETTINGS, tmp_path / "perf")
    accuracy = run_test(sut, library, SETTINGS.model_copy(update={"mode": "AccuracyOnly"}),
                        tmp_path / "acc")
    verdicts = run_compliance(sut, library, SETTINGS, reference, accuracy, tmp_path / "audit",
                              ("TEST01", "TEST05"))
    t01 = verdicts["TEST01"]["figures"]
    assert t01["responses_compared"] > 0 and t01["responses_mismatched"] == 0
    assert t01["accuracy_check"] is True  # the timing check depends on this busy machine
    # the figure compared is LoadGen's early-stopping p90 estimate, read from the detail log
    estimate = parse_detail(tmp_path / "perf/mlperf_log_detail.txt").values["early_stopping_latency_ss"]
    assert reference.summary["early_stopping_latency_s"] == pytest.approx(estimate * 1e-9)
    assert t01["reference"] == reference.summary["early_stopping_latency_s"]
    seeds = parse_detail(tmp_path / "audit/TEST05/mlperf_log_detail.txt").values
    assert seeds["effective_qsl_rng_seed"] == TEST05_SEEDS["test05_qsl_rng_seed"]
    assert verdicts["TEST05"]["figures"]["validity"] == "VALID"
    # TEST05 runs when named, and says that MLPerf retired it
    assert "retired by MLPerf in November 2024" in verdicts["TEST05"]["retired"]
    assert format_verdicts({"TEST05": verdicts["TEST05"]})[0].startswith("TEST05 (retired) ")
    assert "retired" not in verdicts["TEST01"]
    sut.stateful = "keeps state between queries"
    assert run_compliance(sut, library, SETTINGS, reference, accuracy, tmp_path / "again",
                          ("TEST01",))["TEST01"] == {"verdict": NOT_APPLICABLE, "figures": {},
                                                    "reason": "stateful SUT: keeps state between queries"}


def test_compliance_cli_on_a_registered_sut(tmp_path, capsys):
    pytest.importorskip("mlperf_loadgen")
    from neuromark.cli import main
    from neuromark.registry import suts
    from neuromark.system.sut import BuiltSUT

    suts.register("memoiser", lambda samples=300: BuiltSUT(Memoiser(), InMemoryLibrary(
        "ids", lambda i: i, samples)))
    try:
        config = tmp_path / "memo.yaml"
        config.write_text("task: system\nbenchmark: {id: memo}\nsut: {name: memoiser}\ntiming: {warmup: 0}\n"
                          "loadgen: {min_query_count: 64, min_duration_s: 0, expected_latency_s: 0.02}\n")
        assert main(["system", "compliance", str(config), "--out", str(tmp_path / "out"),
                     "--tests", "TEST04"]) == 1
        out = capsys.readouterr().out
        assert "memo:\n  TEST04 FAIL: issuing the same sample is" in out
        saved = json.loads(next((tmp_path / "out").glob("memo--*.json")).read_text())
        assert saved["details"]["compliance"]["TEST04"]["verdict"] == FAIL
        assert (tmp_path / "out/memo/compliance/TEST04/mlperf_log_summary.txt").is_file()
        assert main(["system", "compliance", str(config), "--tests", "TEST09"]) == 1
        assert "--tests: unknown test 'TEST09'; known: TEST01, TEST04, TEST05" in capsys.readouterr().err
    finally:
        suts._entries.pop("memoiser")


def test_mlperf_requires_test01_and_test04_today():
    """``compliance: true`` and ``neuromark system compliance`` run what MLPerf Inference
    requires today: TEST01 and TEST04; TEST05 (retired November 2024) only when named."""
    import argparse

    from neuromark.commands import system as system_command
    from neuromark.system.compliance import KNOWN_TESTS, RETIRED, TESTS

    assert TESTS == ("TEST01", "TEST04") and set(RETIRED) == {"TEST05"}
    assert KNOWN_TESTS == ("TEST01", "TEST04", "TEST05")
    parser = argparse.ArgumentParser()
    system_command.register(parser.add_subparsers())
    args = parser.parse_args(["system", "compliance", "c.yaml"])
    assert args.tests == "TEST01,TEST04"


def test_esn_test01_needs_per_query_resets(tmp_path):
    """The stateful ESN says why TEST01 cannot apply; with ``context`` each sample carries its
    warm-up window, the reservoir is reset per query, and the logged responses match."""
    pytest.importorskip("mlperf_loadgen")
    from neuromark.benchmarks.mackey_glass.sut import esn
    from neuromark.config import parse_yaml
    from neuromark.system.track.task import TASK

    stateful = esn(samples=8, reservoir_size=20)
    try:
        assert "keeps its reservoir state between queries" in stateful.sut.stateful
    finally:
        stateful.close()
    text = ("task: system\nsut: {name: esn, options: {samples: 64, reservoir_size: 50, context: 20}}\n"
            "timing: {warmup: 2}\nloadgen: {min_query_count: 64, min_duration_s: 0, "
            "expected_latency_s: 0.0005}\ncompliance: [TEST01]\n")
    res = plan_and_run(TASK, parse_yaml(text, tmp_path / "esn.yaml"), tmp_path / "out")[0]
    t01 = res.details["compliance"]["TEST01"]["figures"]
    assert t01["responses_compared"] > 0 and t01["responses_mismatched"] == 0
    assert res.details["sut"]["state"] == "reset per query; each sample carries its 20-step warm-up window"
