"""``neuromark check`` distrusts its input (issue 32.5): files out of the submission, impossible
LoadGen and results figures, and malformed JSON of any depth or type each give one finding
line naming the file, the key and the rule; never a traceback. Each test breaks a copy of a
submission written by ``neuromark system run`` (test profile)."""

from __future__ import annotations

import json
import shutil

import pytest

from neuromark.cli import main

pytest.importorskip("mlperf_loadgen")

CONFIG = ("task: system\nbenchmark: {id: good}\nsut: {name: esn, options: {samples: 64, "
          "reservoir_size: 50}}\ntiming: {warmup: 4}\nloadgen: {scenario: SingleStream, "
          "min_query_count: 64, min_duration_s: 0, expected_latency_s: 0.0002}\n")
PERF = "good/loadgen/performanceonly"
DETAIL = f"{PERF}/mlperf_log_detail.txt"


@pytest.fixture(scope="module")
def submission(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile-check")
    (tmp / "good.yaml").write_text(CONFIG)
    assert main(["system", "run", str(tmp / "good.yaml"), "--out", str(tmp / "sub"), "--quiet"]) == 0
    return tmp / "sub"


@pytest.fixture
def sub(submission, tmp_path):
    return shutil.copytree(submission, tmp_path / "sub")


def check(folder, capsys):
    code = main(["check", str(folder)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    findings = [line for line in captured.out.splitlines() if ": " in line
                and not line.startswith(("profile: ", "verdict: "))]
    return code, findings


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def edit_log(path, **values):
    """Set MLLOG records ``key -> value`` of a detail log."""
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith(":::MLLOG "):
            record = json.loads(line[len(":::MLLOG "):])
            if record["key"] in values:
                record["value"] = values[record["key"]]
                line = ":::MLLOG " + json.dumps(record)
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")


def test_valid_submission_still_passes(sub, capsys):
    assert check(sub, capsys) == (0, [])


def test_layout_outside_symlinked_report(sub, tmp_path, capsys):
    report = sub / "submission/submission.md"
    outside = tmp_path / "elsewhere.md"
    shutil.move(report, outside)
    report.symlink_to(outside)
    code, findings = check(sub, capsys)
    assert code == 1
    assert any(f.startswith("submission/submission.md: layout/outside: report is a symlink")
               for f in findings), findings


def test_layout_outside_absolute_log_folder(sub, tmp_path, capsys):
    outside = shutil.copytree(sub / PERF, tmp_path / "perf-elsewhere")
    edit_json(sub / "submission.json",
              lambda m: m["benchmarks"][0]["loadgen_logs"].update(PerformanceOnly=str(outside)))
    code, findings = check(sub, capsys)
    assert code == 1
    assert any(f.startswith(f"{outside}: layout/outside: PerformanceOnly LoadGen log folder")
               and "outside the submission folder" in f for f in findings), findings


def test_layout_outside_symlinked_log(sub, tmp_path, capsys):
    log = sub / DETAIL
    outside = tmp_path / "detail.txt"
    shutil.move(log, outside)
    log.symlink_to(outside)
    code, findings = check(sub, capsys)
    assert code == 1
    assert any(f.startswith(f"{DETAIL}: layout/outside:") for f in findings), findings


def test_loadgen_figures_negative_p90(sub, capsys):
    edit_log(sub / DETAIL, **{"result_90.00_percentile_latency_ns": -196101})
    code, findings = check(sub, capsys)
    assert code == 1
    assert f"{DETAIL}: loadgen/figures: result_90.00_percentile_latency_ns = -196101: a LoadGen " \
           "figure is finite and not negative" in findings


def test_loadgen_figures_min_above_max(sub, capsys):
    edit_log(sub / DETAIL, result_min_latency_ns=10**9)
    code, findings = check(sub, capsys)
    assert code == 1
    assert any(f.startswith(f"{DETAIL}: loadgen/figures: min latency 1000000000 ns > max latency")
               for f in findings), findings


def test_loadgen_figures_qps_against_duration_and_count(sub, capsys):
    edit_log(sub / DETAIL, result_qps_with_loadgen_overhead=1e30)
    code, findings = check(sub, capsys)
    assert code == 1
    assert any(f.startswith(f"{DETAIL}: loadgen/figures: 1e+30 QPS over 64 queries means a run of")
               for f in findings), findings


def test_loadgen_figures_string_value(sub, capsys):
    edit_log(sub / DETAIL, result_max_latency_ns="lots")
    code, findings = check(sub, capsys)
    assert code == 1
    assert f"{DETAIL}: layout/schema: result_max_latency_ns is str 'lots', expected a number" \
        in findings


def test_results_figures_negative_latency_and_throughput(sub, capsys):
    def change(data):
        data["scores"]["throughput"]["value"] = -6400.0
        data["details"]["timing"]["inference"]["mean_s"] = -1e-4
    edit_json(sub / "good--esn.json", change)
    code, findings = check(sub, capsys)
    assert code == 1
    assert any(f.startswith("good--esn.json: results/figures: scores.throughput = -6400.0")
               for f in findings), findings
    assert any(f.startswith("good--esn.json: results/figures: details.timing.inference.mean_s = "
                            "-0.0001") for f in findings), findings


def test_layout_schema_manifest_entry_string(sub, capsys):
    edit_json(sub / "submission.json", lambda m: m.update(benchmarks=["good--esn.json"]))
    code, findings = check(sub, capsys)
    assert code == 1
    assert "submission.json: layout/schema: benchmarks[0] is str 'good--esn.json', expected " \
           "dict" in findings


def test_layout_json_too_deep(sub, capsys):
    depth = 200_000
    (sub / "good--esn.json").write_text("[" * depth + "]" * depth)
    (sub / "submission.json").write_text('{"a": ' * depth + "1" + "}" * depth)
    code, findings = check(sub, capsys)
    assert code == 1
    assert "good--esn.json: layout/json: JSON nested too deep to read" in findings
    assert "submission.json: layout/json: JSON nested too deep to read" in findings


def test_layout_json_list_results(sub, capsys):
    (sub / "extra.json").write_text("[1, 2]")
    code, findings = check(sub, capsys)
    assert code == 1
    assert "extra.json: layout/json: holds a JSON list, not an object" in findings


def test_layout_schema_compliance_verdict_string(sub, capsys):
    def change(data):
        data["config"]["effective"]["compliance"] = ["TEST04"]
        data["details"]["compliance"] = {"TEST04": "PASS"}
    edit_json(sub / "good--esn.json", change)
    code, findings = check(sub, capsys)
    assert code == 1
    assert "good--esn.json: layout/schema: details.compliance.TEST04 is str 'PASS', expected " \
           "dict" in findings


def test_layout_schema_qubo_string_timeouts(tmp_path, capsys):
    folder = tmp_path / "qubo"
    folder.mkdir()
    (folder / "maxcut.json").write_text(json.dumps({
        "config": {"task": "qubo", "fixed_timeout": {"timeouts": ["1", "10"]},
                   "workloads": {"sizes": [10], "densities": [0.5], "seeds": [1, 2, 3, 4, 5]}},
        "details": {"entries": [], "over_deadline": {}}}))
    code, findings = check(folder, capsys)
    assert code == 1
    assert "maxcut.json: layout/schema: fixed_timeout.timeouts is ['1', '10'], expected a list " \
           "of finite numbers" in findings


@pytest.mark.parametrize(("bks", "finding"), [
    ("/etc/neuromark/bks.csv", "layout/outside: bks table '/etc/neuromark/bks.csv' lies outside "
                               "the submission folder"),
    ("../bks.csv", "layout/outside: bks table '../bks.csv' lies outside the submission folder"),
    (["bks.csv"], "layout/schema: config.bks is list"),
])
def test_layout_outside_qubo_bks_table_path(tmp_path, capsys, bks, finding):
    """A QUBO result's bks: table travels with the submission: a relative path inside it."""
    folder = tmp_path / "qubo"
    folder.mkdir()
    (tmp_path / "bks.csv").write_text("num_vertices,density,random_seed,c_optimal\n10,0.5,1,-3\n")
    (folder / "maxcut.json").write_text(json.dumps({
        "config": {"task": "qubo", "bks": bks, "fixed_timeout": {"timeouts": []},
                   "workloads": {"sizes": [10], "densities": [0.5], "seeds": [1]}},
        "details": {"entries": [], "over_deadline": {}}}))
    code, findings = check(folder, capsys)
    assert code == 1 and any(finding in line for line in findings), findings
    assert not any("bks-provenance" in line for line in findings)  # never read
