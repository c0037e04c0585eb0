"""The harness hands the benchmark's test data to a remote SUT (issue 57.5): a served SUT
that declares ``takes_data`` has no library of its own; neuromark sends the task's test
samples (the labels stay here) and the run scores its answers; ``sut.label`` names it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.cli import main
from neuromark.errors import ConfigError
from neuromark.system.chips.features import SPOKEN_DIGITS_8, task_counts
from neuromark.system.remote_server import Limits, Sample, Session
from neuromark.system.suts.remote import remote
from tests.test_remote_hostile import running

pytest.importorskip("mlperf_loadgen")

DATA_LIMITS = Limits(header_bytes=1 << 16, payload_bytes=1 << 14, json_depth=8, message_s=5.0,
                     idle_s=10.0, reply_bytes=1 << 20)  # 16 KiB: the data goes in slices


class EnergyDetector:
    """A served SUT that never sees the corpus but through the harness: it answers class
    scores from the total event count of each (42, 16) raster it is handed (a poor but
    deterministic classifier), and records what it got."""

    name, response_dtype, takes_data = "energy-detector", "<f4", True
    info = {"label": "my-board"}

    def __init__(self):
        self.announced = None
        self.seen = []

    def accept_data(self, description):
        if description["shape"] != (SPOKEN_DIGITS_8.steps, SPOKEN_DIGITS_8.groups):
            raise ValueError(f"expected ({SPOKEN_DIGITS_8.steps}, 16) rasters")
        self.announced = description

    def preprocess(self, sample: Sample):
        assert isinstance(sample, Sample)
        values = sample.to_numpy()
        self.seen.append(values.copy())
        return int(values.sum())

    def infer(self, total):
        scores = np.zeros(8, dtype="<f4")
        scores[min(7, total // 200)] = 1.0
        return scores


def test_remote_sut_runs_on_the_data_the_harness_hands_it(tmp_path, capsys):
    sut = EnergyDetector()
    with running(sut, DATA_LIMITS) as (host, port):
        config = tmp_path / "remote.yaml"
        config.write_text(
            "task: system\nbenchmark: {id: spoken_digits_8-acc-singlestream, version: '1.0'}\n"
            f"sut: {{name: remote, label: team-board, options: {{address: '{host}:{port}', "
            "data: spoken_digits_8, samples: 24, calibration: 20}}\n"
            "accuracy: true\ntiming: {warmup: 0}\n"
            "loadgen: {min_query_count: 64, min_duration_s: 0, expected_latency_s: 0.001}\n")
        out = tmp_path / "out"
        assert main(["system", "run", str(config), "--out", str(out), "--quiet"]) == 0, \
            capsys.readouterr().err
    res = json.loads((out / "spoken_digits_8-acc-singlestream--team-board.json").read_text())
    _, test, _ = task_counts(SPOKEN_DIGITS_8)
    assert sut.announced["total_count"] == 24 and sut.announced["dtype"] == "<i2"
    # what the SUT saw is the harness's data, sample for sample
    assert any(np.array_equal(seen, test.x[0]) for seen in sut.seen)
    handed = res["details"]["sut"]["data"]
    assert handed["samples"] == 24 and handed["task"]["name"] == "spoken_digits_8"
    assert res["details"]["system"]["label"] == "team-board"
    expected = np.mean([min(7, int(x.sum()) // 200) == y for x, y in zip(test.x[:24], test.y[:24])])
    assert res["scores"]["classification_accuracy"]["value"] == pytest.approx(expected)


def test_data_mismatches_are_refused_with_their_reason():
    with running(EnergyDetector(), DATA_LIMITS) as (host, port):
        with pytest.raises(ConfigError, match="takes the harness's data.*sut.options.data"):
            remote(address=f"{host}:{port}", calibration=2)
    session = Session(EnergyDetector())
    reply, _ = session.handle({"op": "data", "name": "x", "total_count": 2, "dtype": "<i2",
                               "shape": [3, 3]})
    assert reply["ok"] is False and "expected (42, 16) rasters" in reply["error"]
    reply, _ = session.handle({"op": "put", "indices": [0]}, b"\0\0")
    assert reply["ok"] is False and "put before data" in reply["error"]
    reply, _ = session.handle({"op": "data", "name": "x", "total_count": 2, "dtype": "<i2",
                               "shape": [42, 16]})
    assert reply["ok"] is True
    reply, _ = session.handle({"op": "put", "indices": [0]}, b"\0" * 10)
    assert reply["ok"] is False and "10 bytes for 1 samples of 1344 bytes" in reply["error"]
    reply, _ = session.handle({"op": "issue", "indices": [1]})
    assert reply["ok"] is False and "not handed over" in reply["error"]
