"""A real MLPerf Inference v1.0 power submission, audited by ``neuromark check`` (issue 42).

NVIDIA's Xavier NX MaxQ, ResNet-50, SingleStream (``tests/fixtures/realdata/mlperf``,
provenance in ``PROVENANCE.md``): LoadGen of 2021-02-25 logged power_begin/power_end in the
SUT's local time, PTDaemon the director's; both ``timezone`` fields are 28800 s. MLPerf's
checker rule gives 12.054108 W over 600 samples. The submission's ``ranging/`` folder and
``power/client.log`` / ``server.log`` were not copied: the audit must name them and still
compute the figure.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta

import pytest

from neuromark.system.power.mlperf_results import audit_mlperf_results, loadgen_rules
from tests.realdata import REALDATA

FOLDER = REALDATA / "mlperf" / "Xavier_NX_TRT_MaxQ_resnet50_SingleStream"
QPS_WITH_OVERHEAD = 330.028  # result_qps_with_loadgen_overhead of the detail log


def test_the_v1_0_submission_gives_mlperfs_figure():
    audit = audit_mlperf_results(FOLDER)
    assert audit["rules"]["name"] == "v1.0" and audit["rules"]["local_times"]
    assert audit["timezones_s"] == {"server": 28800.0, "client": 28800.0}
    testing = audit["testing"]
    assert (round(testing["avg_power_w"], 6), testing["samples"]) == (12.054108, 600)
    assert testing["validity"] == "VALID" and testing["scenario"] == "SingleStream"
    assert testing["duration_s"] == pytest.approx(600.004)
    # v1.0 logs have no result_query_count: samples = qps with overhead x the window
    assert testing["energy_unit"] == "J/sample"
    assert testing["energy"] == pytest.approx(testing["avg_power_w"] / QPS_WITH_OVERHEAD, rel=1e-12)
    assert audit["missing"] == ["power/client.log", "power/server.log", "ranging/"]
    assert audit["ranging"] is None
    assert not [f for f in audit["findings"] if f["rule"] != "mlperf/layout"]  # SHA-1s match


def test_check_command_prints_the_figure_and_what_is_missing(capsys):
    from neuromark.cli import main

    assert main(["check", str(FOLDER)]) == 1  # files are missing
    text = capsys.readouterr().out
    assert "average power 12.054108 W over 600 samples" in text
    assert "ranging/: mlperf/layout: folder missing" in text
    assert main(["check", str(FOLDER), "--json"]) == 1
    audit = json.loads(capsys.readouterr().out)
    assert audit["testing"]["samples"] == 600 and "ranging/" in audit["missing"]


def _shift_power_times(detail, hours):
    lines = []
    for line in detail.read_text().splitlines(keepends=True):
        for key in ('"power_begin"', '"power_end"'):
            if f'"key": {key}' in line:
                record = json.loads(line[len(":::MLLOG "):])
                stamp = datetime.strptime(record["value"], "%m-%d-%Y %H:%M:%S.%f") + timedelta(hours=hours)
                record["value"] = stamp.strftime("%m-%d-%Y %H:%M:%S.%f")[:-3]
                line = ":::MLLOG " + json.dumps(record) + "\n"
        lines.append(line)
    detail.write_text("".join(lines))


def test_each_side_is_shifted_by_its_own_timezone(tmp_path):
    """A SUT logging UTC beside a director 8 h east: the v1.0 rule shifts each side by its
    own timezone and finds the same 600 samples; taking both as UTC finds none."""
    folder = shutil.copytree(FOLDER, tmp_path / "perf")
    _shift_power_times(folder / "run_1" / "mlperf_log_detail.txt", hours=8)
    client = json.loads((folder / "power" / "client.json").read_text())
    client["timezone"] = 0
    (folder / "power" / "client.json").write_text(json.dumps(client))
    audit = audit_mlperf_results(folder)
    assert (round(audit["testing"]["avg_power_w"], 6), audit["testing"]["samples"]) == (12.054108, 600)
    utc = audit_mlperf_results(folder, round_override="current")
    assert utc["testing"] is None
    assert any("no power samples" in f["message"] for f in utc["findings"])


def test_a_changed_file_is_named_by_its_recorded_sha1(tmp_path):
    folder = shutil.copytree(FOLDER, tmp_path / "perf")
    spl = folder / "run_1" / "spl.txt"
    spl.write_text(spl.read_text().replace("Watts,4.599000", "Watts,4.599001"))
    audit = audit_mlperf_results(folder)
    assert {"file": "run_1/spl.txt", "rule": "mlperf/sha1",
            "message": "SHA-1 differs from the one power/server.json recorded"} in audit["findings"]
    assert audit["testing"]["samples"] == 600  # the changed sample lies after power_end


def test_current_loadgen_logs_utc_and_count_queries(tmp_path):
    """The same logs as a current LoadGen would write them (version 4.0, UTC times,
    result_query_count): no timezone shift, energy in mJ per logged query."""
    folder = shutil.copytree(FOLDER, tmp_path / "perf")
    detail = folder / "run_1" / "mlperf_log_detail.txt"
    text = detail.read_text().replace('"value": ".5a1 @ 6958607d52"', '"value": "4.0.0 @ 6958607d52"')
    record = {"key": "result_query_count", "value": 198017, "time_ms": 0.0, "namespace":
              "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {"is_error": False,
                                                                            "is_warning": False}}
    detail.write_text(text + ":::MLLOG " + json.dumps(record) + "\n")
    _shift_power_times(detail, hours=8)  # to UTC, as PTDaemon's local time + 28800 s
    spl = folder / "run_1" / "spl.txt"
    lines = []
    for line in spl.read_text().splitlines(keepends=True):
        parts = line.split(",")
        stamp = datetime.strptime(parts[1], "%m-%d-%Y %H:%M:%S.%f") + timedelta(hours=8)
        parts[1] = stamp.strftime("%m-%d-%Y %H:%M:%S.%f")[:-3]
        lines.append(",".join(parts))
    spl.write_text("".join(lines))
    audit = audit_mlperf_results(folder)
    assert audit["rules"]["name"] == "current" and audit["timezones_s"] == {"server": 0.0, "client": 0.0}
    testing = audit["testing"]
    assert (round(testing["avg_power_w"], 6), testing["samples"]) == (12.054108, 600)
    assert testing["query_count_from"] == "result_query_count" and testing["unit"] == "mJ/query"
    assert testing["metric"] == pytest.approx(testing["avg_power_w"] * 600.004 * 1000 / 198017)


@pytest.mark.parametrize(("values", "name"), [
    ({"loadgen_version": "1.1.0 @ abc"}, "current"),
    ({"loadgen_version": ".5a1 @ x", "loadgen_git_commit_date": "2021-02-25T09:45:46-08:00"}, "v1.0"),
    ({"loadgen_version": ".5a1 @ x", "loadgen_git_commit_date": "2021-07-20T09:45:46-08:00"}, "current"),
])
def test_loadgen_rules_from_the_log(values, name):
    assert loadgen_rules(values).name == name


def test_the_docs_quote_what_the_check_prints(capsys):
    from pathlib import Path

    from neuromark.system.power.mlperf_results import format_audit

    text = format_audit(audit_mlperf_results(FOLDER))
    doc = (Path(__file__).parents[1] / "docs" / "real_files.md").read_text()
    quoted = "average power 12.054108 W over 600 samples\n(600.004 s)"
    assert quoted.replace("\n", " ") in text and quoted in doc
    assert "0.0365245 J/sample" in text and "0.0365245 J/sample" in doc


def test_bad_files_in_the_folder_are_findings_not_tracebacks(tmp_path):
    folder = shutil.copytree(FOLDER, tmp_path / "perf")
    (folder / "power" / "server.json").write_text("[1, 2]")
    (folder / "run_1" / "spl.txt").write_text("Time,garbage\n")
    audit = audit_mlperf_results(folder)
    rules = {(f["file"], f["rule"]) for f in audit["findings"]}
    assert ("power/server.json", "mlperf/timezone") in rules
    assert ("run_1/", "mlperf/power-metric") in rules and audit["testing"] is None
    messages = " ".join(f["message"] for f in audit["findings"])
    assert "spl.txt:1: expected Time," in messages
