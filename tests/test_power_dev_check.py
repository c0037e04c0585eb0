"""power-dev's own ``compliance/check.py`` (mlcommons/power-dev, in ``../shared/tools``) on a
fresh two-pass folder made by neuromark: a fake PTDaemon 1.11.1 (tests/fake_ptd.py) driven
through the ranging and testing passes of real LoadGen runs (the system task, after an
earlier PTD session of its own power windows). Every check passes but the two
source-checksum checks, which fail by design: the files are neuromark's, not power-dev's
client and server."""

from __future__ import annotations

import json
import re
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


@pytest.fixture
def two_pass_folder(tmp_path):
    pytest.importorskip("mlperf_loadgen", reason="mlperf_loadgen (extra 'system') not installed")
    from neuromark.config import parse_yaml
    from neuromark.system.track.task import TASK
    from neuromark.tasks.base import plan_and_run

    ptd = FakePtd(tmp_path / "ptd_log.txt")
    try:
        text = ("task: system\nbenchmark: {id: ptd_toy, version: '1.0'}\nsut: {name: sleep, "
                "options: {sleep_s: 0.0005, samples: 8}}\nloadgen: {scenario: SingleStream, "
                "min_query_count: 64, min_duration_s: 0.5, expected_latency_s: 0.001}\n"
                f"meter: {{name: ptd, options: {{path: ptd_log.txt, address: '{ptd.address}', "
                "interval_ms: 20, settle_s: 0, two_pass: true}}\npower: {floor_s: 0.3, active_s: 0.3}\n")
        plan_and_run(TASK, parse_yaml(text, tmp_path / "p.yaml"), tmp_path / "out")
    finally:
        ptd.close()
    return tmp_path / "out" / "mlperf_power"


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
