"""Cases of ``bench/hostile_sweep.py`` for ``neuromark check`` on MLPerf power results folders
(issue 59): every number read from the folder is checked (finite, in range, of the right
sign), naming the file and the field. Each case edits one thing in a copy of the real
MLPerf v1.0 Xavier NX folder (``tests/mlperf_folders.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hostile_common import case, cli
from mlperf_folders import copy_folder, set_json, set_log_value

TESTS = "test_mlperf_results_hostile.py"
QPS = "result_qps_with_loadgen_overhead"


def _checked(folder: Path) -> Any:
    return lambda: cli("check", folder)


@case("mlperf-qps-negative", "query rate > 0", f"{TESTS}::test_query_rate_must_be_a_positive_number",
      needs=("run_1/mlperf_log_detail.txt", QPS, "-330.028", "expected a finite number > 0"))
def _(tmp: Path) -> Any:
    return _checked(set_log_value(copy_folder(tmp / "perf"), QPS, -330.028))


@case("mlperf-qps-zero", "query rate > 0", f"{TESTS}::test_query_rate_must_be_a_positive_number",
      needs=("mlperf_log_detail.txt", QPS, "is 0,"))
def _(tmp: Path) -> Any:
    return _checked(set_log_value(copy_folder(tmp / "perf"), QPS, 0))


@case("mlperf-qps-text", "query rate a number", f"{TESTS}::test_query_rate_must_be_a_positive_number",
      needs=("mlperf_log_detail.txt", QPS, "'330 per s'"))
def _(tmp: Path) -> Any:
    return _checked(set_log_value(copy_folder(tmp / "perf"), QPS, "330 per s"))


@case("mlperf-qps-1e400", "query rate finite", f"{TESTS}::test_query_rate_must_be_a_positive_number",
      needs=("mlperf_log_detail.txt", QPS, "inf"))
def _(tmp: Path) -> Any:
    return _checked(set_log_value(copy_folder(tmp / "perf"), QPS, float("inf")))


@case("mlperf-multistream-no-queries", "query count >= 1",
      f"{TESTS}::test_multistream_needs_queries",
      needs=("mlperf_log_detail.txt", "generated_query_count", "is 0", "whole number >= 1"))
def _(tmp: Path) -> Any:
    folder = set_log_value(copy_folder(tmp / "perf"), "effective_scenario", "MultiStream")
    return _checked(set_log_value(folder, "generated_query_count", 0))


@case("mlperf-samples-per-query-fraction", "query count whole",
      f"{TESTS}::test_samples_per_query_zero_is_named",
      needs=("generated_samples_per_query", "0.5", "whole number >= 1"))
def _(tmp: Path) -> Any:
    folder = set_log_value(copy_folder(tmp / "perf"), "effective_scenario", "MultiStream")
    set_log_value(folder, "generated_query_count", 40)
    return _checked(set_log_value(folder, "generated_samples_per_query", 0.5))


@case("mlperf-timezone-nan", "timezone finite", f"{TESTS}::test_timezone_must_be_a_real_offset",
      needs=("power/client.json", "'timezone' nan", "seconds west of UTC"))
def _(tmp: Path) -> Any:
    return _checked(set_json(copy_folder(tmp / "perf"), "power/client.json", "timezone", float("nan")))


@case("mlperf-timezone-a-day", "timezone within UTC-12..UTC+14",
      f"{TESTS}::test_timezone_must_be_a_real_offset",
      needs=("power/server.json", "'timezone' 86400", "within"))
def _(tmp: Path) -> Any:
    return _checked(set_json(copy_folder(tmp / "perf"), "power/server.json", "timezone", 86400))


@case("mlperf-power-end-first", "power window positive", f"{TESTS}::test_power_end_before_power_begin",
      needs=("mlperf_log_detail.txt", "'power_end'", "is not after"))
def _(tmp: Path) -> Any:
    return _checked(set_log_value(copy_folder(tmp / "perf"), "power_end", "03-17-2021 07:40:00.000"))


@case("mlperf-results-huge-file", "bounded hashing", f"{TESTS}::test_a_huge_result_file_is_named_not_hashed",
      needs=("run_1/big.bin", "not hashed", "power/server.json"))
def _(tmp: Path) -> Any:
    from neuromark.system.power import mlperf_results

    folder = copy_folder(tmp / "perf")
    (folder / "run_1" / "big.bin").write_bytes(b"\0" * (2 << 20))  # over the 1-MiB limit below
    set_json(folder, "power/server.json", "results", {"run_1/big.bin": "0" * 40})

    def act() -> Any:
        saved = mlperf_results.MAX_HASHED_BYTES
        mlperf_results.MAX_HASHED_BYTES = 1 << 20  # the sweep reads every file: no 7 GB here
        try:
            return cli("check", folder)
        finally:
            mlperf_results.MAX_HASHED_BYTES = saved
    return act


@case("mlperf-results-outside", "results inside the folder",
      f"{TESTS}::test_a_huge_result_file_is_named_not_hashed",
      needs=("power/client.json", "../../../etc/hostname", "outside the folder"))
def _(tmp: Path) -> Any:
    folder = copy_folder(tmp / "perf")
    return _checked(set_json(folder, "power/client.json", "results", {"../../../etc/hostname": "0" * 40}))


@case("mlperf-spl-power-factor-2", "power factor within -1..1",
      "test_system_ptd.py::test_bad_spl_lines_name_file_and_line",
      needs=("run_1/spl.txt:3", "power factor 2 within -1..1"))
def _(tmp: Path) -> Any:
    folder = copy_folder(tmp / "perf")
    spl = folder / "run_1" / "spl.txt"
    lines = spl.read_text().splitlines(keepends=True)
    parts = lines[2].split(",")
    parts[9] = "2.000000"
    lines[2] = ",".join(parts)
    spl.write_text("".join(lines))
    return _checked(folder)
