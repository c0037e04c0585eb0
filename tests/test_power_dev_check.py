"""power-dev's own ``compliance/check.py`` (mlcommons/power-dev, in ``../shared/tools``) on a
fresh two-pass folder made by neuromark: a fake PTDaemon 1.11.1 (tests/fake_ptd.py) driven
through the ranging and testing passes of real LoadGen runs (the system task, after an
earlier PTD session of its own power windows). Every check passes but the two
source-checksum checks, which fail by design: the files are neuromark's, not power-dev's
client and server."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neuromark.system.power.mlperf import check_layout
from tests.fake_ptd import FakePtd

TOOLS = Path(__file__).resolve().parents[1].parent / "shared" / "tools"
CHECK = TOOLS / "power-dev" / "compliance" / "check.py"
SOURCE_CHECKS = {"Check client sources checksum", "Check server sources checksum"}


def run_check(folder: Path) -> tuple[set[str], set[str], str]:
    """``(passed, failed, output)`` of check.py on ``folder`` (its ``[x]`` / ``[ ]`` lines)."""
    proc = subprocess.run([sys.executable, str(CHECK), str(folder)], capture_output=True,
                          text=True, timeout=120)
    out = proc.stdout + proc.stderr
    passed = set(re.findall(r"\[x\] (.+)", out))
    failed = set(re.findall(r"\[ \] (.+)", out))
    return passed, failed, out


@pytest.fixture(scope="module")
def two_pass_run(tmp_path_factory):
    """A ``neuromark system run`` (power windows, then the two passes) against the fake
    PTDaemon, with its MLPerf submission tree: ``(run folder, tree)``."""
    pytest.importorskip("mlperf_loadgen", reason="mlperf_loadgen (extra 'system') not installed")
    from neuromark.cli import main

    tmp = tmp_path_factory.mktemp("two_pass")
    ptd = FakePtd(tmp / "ptd_log.txt")
    try:
        (tmp / "p.yaml").write_text(
            "task: system\nbenchmark: {id: ptd_toy, version: '1.0'}\nsut: {name: sleep, "
            "options: {sleep_s: 0.0005, samples: 8}}\nloadgen: {scenario: SingleStream, "
            "min_query_count: 64, min_duration_s: 0.5, expected_latency_s: 0.001}\n"
            f"meter: {{name: ptd, options: {{path: ptd_log.txt, address: '{ptd.address}', "
            "interval_ms: 20, settle_s: 0, two_pass: true}}\npower: {floor_s: 0.3, active_s: 0.3}\n")
        assert main(["system", "run", str(tmp / "p.yaml"), "--out", str(tmp / "out"), "--quiet",
                     "--submission-tree", str(tmp / "tree"), "--submitter", "acme"]) == 0
    finally:
        ptd.close()
    return tmp / "out", tmp / "tree"


@pytest.fixture
def two_pass_folder(two_pass_run, tmp_path):
    return Path(shutil.copytree(two_pass_run[0] / "p" / "mlperf_power", tmp_path / "mlperf_power"))


def test_power_dev_check_passes_all_but_the_source_checksums(two_pass_folder):
    if not CHECK.is_file():
        pytest.skip(f"power-dev's checker not found at {CHECK}")
    folder = two_pass_folder
    assert check_layout(folder) == []
    server = json.loads((folder / "power/server.json").read_text())
    cmds = [m["cmd"] for m in server["ptd_messages"]]
    assert cmds[:3] == ["Hello", "Identify", "RR"] and cmds.count("Hello") == 1  # one session
    assert [m["reply"] for m in server["ptd_messages"] if m["cmd"] == "Stop"][-1] == \
        "Error: no measurement to stop"
    assert server["ptd_config"][0]["device_type"] == 49
    assert server["messages"][0]["cmd"] == "mlcommons/power client v3"
    logs = (folder / "power/ptd_logs.txt").read_text()
    assert "Uncertainty checking for YokogawaWT310 is activated" in logs
    assert logs.count("Accepted connection") == 1  # the earlier session's lines left out
    passed, failed, out = run_check(folder)
    assert failed == SOURCE_CHECKS, out
    assert len(passed) == 9, out


def test_power_dev_check_sees_a_tampered_folder(two_pass_folder):
    """The checker is not a rubber stamp: a sample added to run_1/spl.txt after the fact
    fails its results-checksum check."""
    if not CHECK.is_file():
        pytest.skip(f"power-dev's checker not found at {CHECK}")
    spl = two_pass_folder / "run_1" / "spl.txt"
    spl.write_text(spl.read_text() + spl.read_text().splitlines()[-1] + "\n")
    _, failed, out = run_check(two_pass_folder)
    assert failed == SOURCE_CHECKS | {"Check results checksum"}, out


def test_mlperfs_checker_runs_power_devs_checks_on_the_tree(two_pass_run, tmp_path):
    """The MLPerf tree of the two-pass run: MLPerf's submission checker finds the power result,
    runs power-dev's checks on it, and fails it only for reasons the docs list (the source
    checksums among them)."""
    from neuromark.system.mlperf_tree import KNOWN_FAILURES
    from tests.test_mlperf_tree import CHECKER, _run_checker

    if not (CHECKER / "submission_checker" / "main.py").is_file():
        pytest.skip(f"MLPerf's submission checker not found at {CHECKER}")
    out = _run_checker(two_pass_run[1], tmp_path)
    assert re.search(r"Results=0, NoResults=1", out), out
    assert "Check server sources checksum" in out and "Check PTD commands and replies" in out
    assert "[x] Check PTD commands and replies" in out and "[x] Check results checksum" in out
    errors = [line for line in out.splitlines() if " ERROR] " in line]
    unexplained = [line for line in errors if not any(re.search(p, line) for p, _ in KNOWN_FAILURES)]
    assert not unexplained, "\n".join(unexplained)
