"""``neuromark check``: a submission written by ``neuromark system run`` (test profile) passes;
a missing file, a too-short run, an INVALID summary, a missing report section and a power
window with too few meter samples each fail with a precise line (file: rule: message)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.system.timing import now_s

pytest.importorskip("mlperf_loadgen")

ESN = "sut: {name: esn, options: {samples: 64, reservoir_size: 50}}\ntiming: {warmup: 4}\n"
GOOD = "{scenario: SingleStream, min_query_count: 64, min_duration_s: 0, expected_latency_s: 0.0002}"


def write_config(tmp, name, loadgen=GOOD, extra=""):
    config = tmp / f"{name}.yaml"
    config.write_text(f"task: system\nbenchmark: {{id: {name}}}\n{ESN}loadgen: {loadgen}\n{extra}")
    return config


def system_run(tmp, out, *configs, code=0):
    flags = ["--allow-invalid"] if code else []  # an INVALID result exits 1 without it
    assert main(["system", "run", *map(str, configs), "--out", str(tmp / out), "--quiet"]) == code
    if code:
        assert main(["system", "run", *map(str, configs), "--out", str(tmp / out), "--quiet",
                     "--overwrite", *flags]) == 0
    return tmp / out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("submissions")
    t = np.arange(now_s() - 1.0, now_s() + 300.0, 0.05)  # a 20 Hz instrument on the host clock
    (tmp / "sparse.csv").write_text("t_s,power_w\n" + "\n".join(f"{v:.6f},2.5" for v in t))
    short = write_config(tmp, "short", GOOD.replace("64", "16"))
    # 64 queries pre-generated at 10 ms expected latency run out long before 0.5 s
    invalid = write_config(tmp, "invalid", "{scenario: SingleStream, min_query_count: 64, "
                                           "min_duration_s: 0.5, expected_latency_s: 0.01}")
    sparse = write_config(tmp, "sparse", extra="meter: {name: csv, point: board, options: {path: sparse.csv, "
                                               "offset_s: 0}}\npower: {floor_s: 0.2, active_s: 0.7}\n")
    return {"good": system_run(tmp, "good", write_config(tmp, "good")),
            "bad": system_run(tmp, "bad", short, invalid, code=1),
            "sparse": system_run(tmp, "sparse", sparse)}


def check(folder, capsys):
    code = main(["check", str(folder)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("profile: ")
    # one verdict, last: passed or not, the profile, and what to run for a valid submission
    assert lines[-1].startswith("verdict: ") and sum(ln.startswith("verdict: ") for ln in lines) == 1
    assert ("'test' profile" in lines[-1]) == lines[0].startswith("profile: test")
    assert ("passes" in lines[-1]) == (code == 0)
    if lines[0].startswith("profile: test"):
        assert "NOT an MLPerf-valid" in lines[0] and "profile: submission" in lines[-1]
        assert "submission passes every check" not in "\n".join(lines)
    findings = [line for line in lines[1:] if ": " in line and not line.startswith("verdict: ")]
    return code, lines[0], findings


def copy(runs, tmp_path, name="good"):
    return shutil.copytree(runs[name], tmp_path / name)


def test_a_system_run_submission_passes(runs, capsys):
    code, profile, findings = check(runs["good"], capsys)
    assert findings == [] and code == 0
    assert profile.startswith("profile: test (short minimums") and "NOT an MLPerf-valid" in profile
    manifest = json.loads((runs["good"] / "submission.json").read_text())
    assert manifest["profile"] == "test" and manifest["benchmarks"][0]["loadgen_logs"] == {
        "PerformanceOnly": "good/loadgen/performanceonly", "AccuracyOnly": "good/loadgen/accuracyonly"}
    report = (runs["good"] / "submission/submission.md").read_text()
    assert "- good: power not measured: no power meter configured." in report


def test_missing_file(runs, tmp_path, capsys):
    folder = copy(runs, tmp_path)
    (folder / "good/loadgen/accuracyonly/mlperf_log_accuracy.json").unlink()
    code, _, findings = check(folder, capsys)
    assert code == 1 and findings == ["good/loadgen/accuracyonly/mlperf_log_accuracy.json: "
                                      "layout/loadgen-logs: required AccuracyOnly LoadGen log is missing"]


def test_too_short_run_and_invalid_summary(runs, capsys):
    code, _, findings = check(runs["bad"], capsys)
    assert code == 1 and len(findings) == 3
    assert ("short/loadgen/performanceonly/mlperf_log_summary.txt: settings/min-query-count: run holds "
            "16 queries (LoadGen minimum set to 16); the rule is at least 32 (SingleStream, test "
            "profile)") in findings
    # LoadGen itself also refuses it: early stopping needs 64 queries for the p90
    assert ("short/loadgen/performanceonly/mlperf_log_summary.txt: loadgen/valid: result is INVALID: "
            "early stopping not met: Only processed 16 queries. Need to process at least 64 queries "
            "for early stopping.") in findings
    assert ("invalid/loadgen/performanceonly/mlperf_log_summary.txt: loadgen/valid: result is "
            "INVALID: min duration not met (500 ms requested); Decrease the expected latency so the "
            "loadgen pre-generates more queries.") in findings


def test_missing_report_section(runs, tmp_path, capsys):
    folder = copy(runs, tmp_path)
    report = folder / "submission/submission.md"
    text = report.read_text()
    start, end = text.index("## Algorithm"), text.index("## Workflow")
    report.write_text(text[:start] + text[end:])
    code, _, findings = check(folder, capsys)
    assert code == 1 and findings == [
        "submission/submission.md: report/section: section '## Algorithm' is missing"]


def test_too_few_power_samples(runs, capsys):
    code, _, findings = check(runs["sparse"], capsys)
    assert code == 1 and len(findings) == 1
    assert findings[0].startswith("sparse--esn.json: power/samples: power window 'floor' holds ")
    assert findings[0].endswith("meter samples (< 10); lengthen it or raise the meter's sample rate")


def test_profile_and_compliance_rules(runs, tmp_path, capsys):
    folder = copy(runs, tmp_path)
    manifest = json.loads((folder / "submission.json").read_text())
    manifest["profile"] = "submission"
    (folder / "submission.json").write_text(json.dumps(manifest))
    results = json.loads((folder / "good--esn.json").read_text())
    results["config"]["effective"]["compliance"] = True
    (folder / "good--esn.json").write_text(json.dumps(results))
    code, profile, findings = check(folder, capsys)
    assert code == 1 and profile.startswith("profile: submission (MLPerf minimums")
    text = "\n".join(findings)
    assert ("good--esn.json: rules/profile: config declares profile 'test', the submission "
            "'submission'") in text
    assert ("settings/min-duration: effective minimum duration 0 s < 600 s (SingleStream, "
            "submission profile)") in text
    assert "settings/seeds: qsl_rng_seed 0 is not the official seed 2085463073848966840" in text
    for test in ("TEST01", "TEST04"):
        assert f"good--esn.json: compliance/{test}: required by compliance: true, but not run" in text
    assert "TEST05" not in text  # retired by MLPerf (Nov 2024): not required by compliance: true


def test_qubo_rules(tmp_path):
    from neuromark.benchmarks.qubo.checker_rules import check_qubo_results
    from neuromark.system.checker import _Audit

    data = {"config": {"task": "qubo", "workloads": {"sizes": [10, 7777], "densities": [0.05],
                                                     "seeds": [0, 1]},
                       "seeds": [0], "fixed_timeout": {"timeouts": [0.01, 0.1]}},
            "details": {"entries": [{"scenario": "fixed_timeout", "n": n, "density": 0.05,
                                     "graph_seed": g, "seed": 0, "timeout_s": 0.01}
                                    for n in (10, 7777) for g in (0, 1)]}}
    audit = _Audit(tmp_path)
    check_qubo_results(audit, tmp_path / "q.json", data)
    lines = [str(f) for f in audit.findings]
    assert lines[0] == "q.json: qubo/seeds: 2 graph seeds [0, 1]; a submission runs the 5 announced seeds"
    test_profile = _Audit(tmp_path)  # the test profile ("any seeds", the default suite's)
    check_qubo_results(test_profile, tmp_path / "q.json", data, official_seeds=False)
    assert not [f for f in test_profile.findings if "qubo/seeds" in str(f)]
    assert [str(f) for f in test_profile.findings][0] == lines[1]
    assert lines[1] == ("q.json: qubo/timeouts: timeout 0.1 s of the sweep is missing for 4 workload(s), "
                        "e.g. n=10, density=0.05, graph seed 0, solver seed 0")
    assert lines[2].startswith("q.json: qubo/bks-provenance: no BKS row for n=7777, density=0.05, seed 0")
    assert len(lines) == 4  # and seed 1


def test_checker_rules_are_looked_up_by_the_results_task(tmp_path):
    """The kernel checker names no task: a result whose task has a ``checker_rules`` entry
    is audited by it, with the profile's seeds rule (no submission.json: official seeds, and
    no system-track findings); the QUBO family declares its rule in its MANIFEST."""
    from neuromark.registry import checker_rules
    from neuromark.system.checker import check_submission

    assert checker_rules.family_of("qubo") == "qubo"
    seen = []

    def toy_rule(audit, file, data, official_seeds):
        seen.append((Path(file).name, official_seeds))
        audit.add(file, "toy/rule", f"ran {effective['task']}")

    effective = {"task": "toy-task"}
    checker_rules.register("toy-task", toy_rule)
    try:
        (tmp_path / "r.json").write_text(json.dumps({"config": effective, "details": {}}))
        (tmp_path / "other.json").write_text(json.dumps({"config": {"task": "none"}, "details": {}}))
        profile, findings = check_submission(tmp_path)
    finally:
        for table in (checker_rules._entries, checker_rules._origins, checker_rules._families):
            table.pop("toy-task", None)
    assert profile is None and [str(f) for f in findings] == ["r.json: toy/rule: ran toy-task"]
    assert seen == [("r.json", True)]


def test_report_reads_a_submission_folder(runs, tmp_path, capsys):
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "docs/system_track_example_system.yaml"
    assert main(["report", str(runs["good"]), "--system", str(example), "--out", str(tmp_path)]) == 0
    assert "(1 result file(s))" in capsys.readouterr().out  # submission.json is not a result


def test_a_folder_without_a_manifest(runs, tmp_path, capsys):
    folder = copy(runs, tmp_path)
    (folder / "submission.json").unlink()
    assert main(["check", str(folder)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "submission.json: layout/manifest: required file is missing"
    assert main(["check", str(tmp_path / "nowhere")]) == 1
    assert "nowhere: layout/folder: not a folder" in capsys.readouterr().out


def test_power_point_definitions_and_window_length(runs, tmp_path, capsys):
    """Results must say where the meter measured and record each window's definitions; in
    the submission profile a window shorter than 10 s fails (NeuroBench system rules)."""
    folder = copy(runs, tmp_path, "sparse")
    results = json.loads((folder / "sparse--esn.json").read_text())
    assert results["details"]["power_meter"]["point"] == "board"
    floor = results["details"]["power"]["floor"]
    assert floor["sample_rate_hz"] == pytest.approx(floor["meter_samples"] / floor["duration_s"])
    assert floor["peak_power_w"] == pytest.approx(2.5)
    assert results["scores"]["floor_peak_power"]["value"] == 2.5
    assert any(f.startswith("power window 'floor' lasts 0.2") and "s (< 10 s): board capacitance "
               "biases short windows" in f for f in results["flags"])
    results["details"]["power_meter"]["point"] = None
    del results["details"]["power"]["active"]["inference"]["peak_power_w"]
    (folder / "sparse--esn.json").write_text(json.dumps(results))
    manifest = json.loads((folder / "submission.json").read_text())
    manifest["profile"] = "submission"
    (folder / "submission.json").write_text(json.dumps(manifest))
    _, _, findings = check(folder, capsys)
    text = "\n".join(findings)
    assert ("sparse--esn.json: power/point: the meter's measurement point is None; declare "
            "meter.point as one of wall, board, shunt, rail, package") in text
    assert "power/definitions: power window 'inference' does not record peak_power_w" in text
    assert "power/window-length: power window 'floor' lasts 0.2" in text
    assert "s (< 10 s: board capacitance biases short windows)" in text


def test_split_rule_follows_the_stages_a_sut_declares(tmp_path):
    """The sleep SUT has no pre-processing (it declares ["inference"]) and the null SUT no
    stage at all: their submissions pass latency/split; a result whose SUT declares both
    stages but times one is still flagged."""
    from neuromark.cli import main
    from neuromark.system.checker import check_submission

    root = Path(__file__).resolve().parents[1] / "configs/system"
    for stem in ("sleep_1ms", "null_overhead"):
        out = tmp_path / stem
        assert main(["system", "run", str(root / f"{stem}.yaml"), "--out", str(out), "--quiet",
                     "--allow-invalid"]) == 0
        _, findings = check_submission(out)
        assert not [f for f in findings if "latency/split" in str(f)], stem
    [result] = (tmp_path / "sleep_1ms").glob("sleep_1ms*--*.json")
    data = json.loads(result.read_text())
    data["details"]["sut"]["stages"] = ["preprocess", "inference"]
    result.write_text(json.dumps(data))
    _, findings = check_submission(tmp_path / "sleep_1ms")
    assert any("latency/split" in str(f) and "no preprocess latency" in str(f) for f in findings)


def test_verdict_names_the_profile_and_the_next_step():
    from neuromark.system.rules import PROFILES, verdict

    test, submission = PROFILES["test"], PROFILES["submission"]
    assert verdict(test, 0).startswith("verdict: passes every check of the 'test' profile, which "
                                       "is NOT an MLPerf-valid submission")
    assert "set `profile: submission`" in verdict(test, 0)
    assert verdict(test, 2).startswith("verdict: FAILS: 2 finding(s) above under the 'test'")
    assert "profile: submission" in verdict(test, 2)
    assert verdict(submission, 0).startswith("verdict: passes every check of the 'submission'")
    assert "NOT" not in verdict(submission, 0)
    assert verdict(None, 1).startswith("verdict: FAILS: 1 finding(s) above, and no readable profile")
