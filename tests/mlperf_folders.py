"""Hostile variants of a real MLPerf v1.0 power results folder (NVIDIA's Xavier NX MaxQ,
ResNet-50 SingleStream, ``tests/fixtures/realdata/mlperf``), for the tests and for
``bench/hostile_cases_mlperf.py``: each helper copies the folder and changes one thing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

FOLDER = (Path(__file__).resolve().parent / "fixtures" / "realdata" / "mlperf"
          / "Xavier_NX_TRT_MaxQ_resnet50_SingleStream")
DETAIL = Path("run_1") / "mlperf_log_detail.txt"


def copy_folder(dest: Path) -> Path:
    """A copy of the real folder at ``dest``."""
    return Path(shutil.copytree(FOLDER, dest))


def set_log_value(folder: Path, key: str, value: Any) -> Path:
    """Set (or add) the MLLOG record ``key`` of run_1's detail log to ``value``."""
    file = folder / DETAIL
    lines, found = [], False
    for line in file.read_text().splitlines(keepends=True):
        if line.startswith(":::MLLOG ") and json.loads(line[9:])["key"] == key:
            record = json.loads(line[9:])
            record["value"] = value
            line, found = ":::MLLOG " + json.dumps(record) + "\n", True
        lines.append(line)
    if not found:
        record = {"key": key, "value": value, "time_ms": 0.0, "namespace": "mlperf::logging",
                  "event_type": "POINT_IN_TIME", "metadata": {"is_error": False, "is_warning": False}}
        lines.append(":::MLLOG " + json.dumps(record) + "\n")
    file.write_text("".join(lines))
    return folder


def set_json(folder: Path, rel: str, key: str, value: Any) -> Path:
    """Set ``key`` of the JSON file ``folder/rel`` (NaN written as JSON's ``NaN``)."""
    file = folder / rel
    data = json.loads(file.read_text())
    data[key] = value
    file.write_text(json.dumps(data))
    return folder
