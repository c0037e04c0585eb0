"""``neuromark check`` on MLPerf v1.0 power folders whose numbers cannot be right (issue 59):
each is a finding naming the file and the field, never a traceback, never a figure printed
beside VALID. Built from the real Xavier NX folder (tests/mlperf_folders.py)."""

from __future__ import annotations

import os

import pytest

from neuromark.cli import main
from neuromark.system.power import mlperf_results
from neuromark.system.power.mlperf_results import audit_mlperf_results
from tests.mlperf_folders import copy_folder, set_json, set_log_value

QPS = "result_qps_with_loadgen_overhead"


def check(folder, capsys) -> tuple[int, str]:
    code = main(["check", str(folder)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out + captured.err


@pytest.mark.parametrize("value, shown", [(-330.028, "-330.028"), (0, "0"), ("fast", "'fast'"),
                                          (float("inf"), "inf"), (True, "True")])
def test_query_rate_must_be_a_positive_number(tmp_path, capsys, value, shown):
    folder = set_log_value(copy_folder(tmp_path / "f"), QPS, value)
    code, out = check(folder, capsys)
    assert code == 1
    assert f"mlperf_log_detail.txt: field '{QPS}' is {shown}, expected a finite number > 0" in out
    assert "testing: SingleStream" not in out and "J/sample" not in out  # no figure beside VALID


@pytest.mark.parametrize("count", [0, -3, 2.5, "many"])
def test_multistream_needs_queries(tmp_path, capsys, count):
    folder = copy_folder(tmp_path / "f")
    set_log_value(folder, "effective_scenario", "MultiStream")
    set_log_value(folder, "generated_query_count", count)
    code, out = check(folder, capsys)
    assert code == 1 and "field 'generated_query_count' is" in out
    assert "expected a whole number >= 1" in out and "J/sample" not in out


def test_samples_per_query_zero_is_named(tmp_path):
    folder = copy_folder(tmp_path / "f")
    set_log_value(folder, "effective_scenario", "MultiStream")
    set_log_value(folder, "generated_query_count", 100)
    set_log_value(folder, "generated_samples_per_query", 0)
    audit = audit_mlperf_results(folder)
    assert audit["testing"] is None
    assert any("field 'generated_samples_per_query' is 0" in f["message"] for f in audit["findings"])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 90000, "28800", None])
def test_timezone_must_be_a_real_offset(tmp_path, capsys, value):
    """A NaN (or absurd) timezone is named as such, not blamed on the client's clock."""
    folder = set_json(copy_folder(tmp_path / "f"), "power/client.json", "timezone", value)
    code, out = check(folder, capsys)
    assert code == 1
    assert f"power/client.json: mlperf/timezone: 'timezone' {value!r} is not a number of seconds" in out
    assert "clock sync" not in out and "no power samples" not in out
    assert "timezone that cannot be used" in out


def test_power_end_before_power_begin(tmp_path):
    folder = copy_folder(tmp_path / "f")
    set_log_value(folder, "power_end", "03-17-2021 07:40:00.000")
    audit = audit_mlperf_results(folder)
    assert audit["testing"] is None
    text = " ".join(f["message"] for f in audit["findings"])
    assert "field 'power_end' 03-17-2021 07:40:00.000 is not after 'power_begin'" in text
    assert "clock sync" not in text


def test_power_times_that_do_not_parse(tmp_path):
    folder = set_log_value(copy_folder(tmp_path / "f"), "power_begin", "yesterday")
    audit = audit_mlperf_results(folder)
    assert audit["testing"] is None
    assert any("field 'power_begin' 'yesterday' or 'power_end'" in f["message"] for f in audit["findings"])


def test_a_huge_result_file_is_named_not_hashed(tmp_path, capsys):
    """A results entry naming a 7-GB file: the check says the file is too large to hash,
    at once, instead of reading it (it used to end in a bare 'out of memory')."""
    folder = copy_folder(tmp_path / "f")
    big = folder / "run_1" / "big.bin"
    with big.open("wb") as f:  # sparse: 7 GB on paper, nothing on disk
        f.truncate(7 * 10**9)
    set_json(folder, "power/server.json", "results",
             {"run_1/big.bin": "0" * 40, "../../outside.txt": "0" * 40})
    code, out = check(folder, capsys)
    assert code == 1
    assert "run_1/big.bin: mlperf/sha1: 7,000,000,000 bytes, more than the 1,073,741,824" in out
    assert "power/server.json: mlperf/sha1: power/server.json: results['../../outside.txt'] names " \
           "a file outside the folder" in out
    assert os.path.getsize(big) == 7 * 10**9


def test_hashing_reads_in_blocks(tmp_path, monkeypatch):
    """Files are hashed in blocks: a 3-MiB file gives the SHA-1 of its bytes."""
    import hashlib

    data = os.urandom(3 << 20)
    file = tmp_path / "x.bin"
    file.write_bytes(data)
    assert mlperf_results._sha1(file) == hashlib.sha1(data).hexdigest()


def test_the_real_folder_still_passes_its_numbers():
    audit = audit_mlperf_results(copy_folder.__globals__["FOLDER"])
    assert audit["testing"]["samples"] == 600 and audit["testing"]["energy"] > 0
