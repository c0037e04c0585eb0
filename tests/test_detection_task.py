"""The detection task: sequential streaming (slots, file-start resets, padding), the
detector's per-slot state reset, and an end-to-end run on synthetic files."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neuromark.benchmarks.event_detection.boxes import BoxFilter, LabelPipeline
from neuromark.benchmarks.event_detection.model import DetectorConfig, EventDetector
from neuromark.benchmarks.event_detection.stream import SequentialStream, list_files
from neuromark.data.event_dtypes import make_camera_events
from neuromark.data.prophesee import make_boxes, write_boxes, write_dat
from neuromark.processors.event_frames import EventTensor

#: A detection config that trains and runs in seconds (shared with other tests).
DET_TINY = """task: detection
benchmark: {id: det-tiny, version: "1.0"}
data:
  root: cache:det_tiny
  synthesize: {files: {train: 1, test: 1}, duration_s: 1.2, height: 36, width: 64, seed: 3}
  network: [32, 18]
  box_filter: {resolution: [640, 360]}
model: {name: event_detector, options: {width: 4}, checkpoint: cache:det_tiny.pt}
train: {epochs: 1, batch_size: 1}
eval: {metrics: [coco_map, synaptic_operations], time_tol_us: 50000}
"""


def _files(folder, durations=(1_300_000, 700_000, 1_000_000)):
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for i, d in enumerate(durations):
        n = 2000
        ev = make_camera_events(np.sort(rng.integers(0, d, n)), rng.integers(0, 64, n),
                                rng.integers(0, 36, n), rng.integers(0, 2, n))
        ev["t"][-1] = d - 1
        write_dat(folder / f"f{i}_td.dat", ev, width=64, height=36)
        t = np.arange(1, d // 50_000 + 1) * 50_000
        write_boxes(folder / f"f{i}_bbox.npy", make_boxes(t, 10, 5, 20, 20, 2))
    write_dat(folder / "nolabels_td.dat", ev, width=64, height=36)
    return list_files(folder)


def test_stream_slots_resets_and_padding(tmp_path):
    files, skipped = _files(tmp_path / "test")
    assert [f.stream for f in files] == ["f0", "f1", "f2"]
    assert [p.name for p in skipped] == ["nolabels_td.dat"]
    tensor = EventTensor("histo", num_tbins=12, height=36, width=64, downsample=0)
    labels = LabelPipeline((64, 36), (64, 36), BoxFilter((64, 36), 0, 0), skip_us=500_000)
    stream = SequentialStream(files, tensor, labels, batch_size=2)
    batches = list(stream)
    assert len(batches) == len(stream) == 4
    keeps = [b[0][1].tolist() for b in batches]
    streams = [[s for s, _ in b[1]] for b in batches]
    # slot 0: f0 (3 windows of 600 ms); slot 1: f1 (2 windows) then f2 (2 windows); then padding
    assert streams == [["f0", "f1"], ["f0", "f1"], ["f0", "f2"], [None, "f2"]]
    assert keeps == [[0, 0], [1, 1], [1, 0], [0, 1]]
    assert stream.padded_samples == 1
    (x, _), targets = batches[1]
    assert x.shape == (2, 12, 2, 36, 64)
    gt = targets[0][1]
    assert gt["t"].min() >= 650_000 and gt["t"].max() <= 1_200_000  # skip 0.5 s; stamped at bin ends
    assert np.all(gt["t"] % 50_000 == 0)


@pytest.mark.parametrize("memory", ["gru", "lif"])
def test_detector_resets_state_at_file_start(memory):
    torch.manual_seed(0)
    net = EventDetector(DetectorConfig(in_channels=2, width=4, memory=memory, threshold=0.05)).eval()
    a, b = torch.rand(1, 3, 2, 16, 16), torch.rand(1, 3, 2, 16, 16)
    with torch.no_grad():
        net((a, torch.zeros(1)))
        carried = net((b, torch.ones(1)))
        reset = net((b, torch.zeros(1)))
        net.forget()
        alone = net((b, torch.zeros(1)))
    assert torch.equal(reset, alone) and not torch.allclose(carried, alone)


def test_task_end_to_end(tmp_path, monkeypatch):
    from neuromark.cli import main

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    cfg = tmp_path / "det.yaml"
    cfg.write_text(DET_TINY)
    assert main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "det-tiny--event_detector.json").read_text())
    score = res["scores"]["coco_map"]
    assert 0.0 <= score["value"] <= 1.0 and score["raw"]["time_tol_us"] == 50000
    assert score["raw"]["images"] > 0 and res["details"]["trained_now"] is True
    assert res["details"]["network"] == [32, 18]
    assert res["scores"]["synaptic_operations"]["value"]["Dense"] > 0
    assert main(["run", str(cfg), "--out", str(tmp_path / "out2"), "--quiet"]) == 0
    again = json.loads((tmp_path / "out2" / "det-tiny--event_detector.json").read_text())
    assert again["details"]["trained_now"] is False
    assert again["scores"]["coco_map"]["value"] == pytest.approx(score["value"])


def test_a_python_factory_is_checked_at_plan(tmp_path):
    """``model: {name: python, ...}`` in a detection config: a missing file, a keyword the
    factory does not take and a missing checkpoint fail at plan time, naming file:line."""
    from neuromark.benchmarks.event_detection.task import TASK
    from neuromark.config import parse_yaml
    from neuromark.context import RunContext
    from neuromark.errors import ConfigError

    (tmp_path / "det_net.py").write_text("import torch\n\ndef build(width=4):\n"
                                         "    return torch.nn.Conv2d(2, width, 3)\n")

    def plan(model: str) -> None:
        text = DET_TINY.replace("model: {name: event_detector, options: {width: 4}, checkpoint: "
                                "cache:det_tiny.pt}", model).replace("train: {epochs: 1, "
                                                                     "batch_size: 1}\n", "")
        TASK.plan(parse_yaml(text, tmp_path / "d.yaml"), RunContext.build(environ={}))

    plan('model: {name: python, options: {factory: "det_net.py:build", kwargs: {width: 2}}}')
    with pytest.raises(ConfigError, match=r"d\.yaml:\d+: .*nope\.py"):
        plan('model: {name: python, options: {factory: "nope.py:build"}}')
    with pytest.raises(ConfigError, match=r"d\.yaml:\d+: .*depth"):
        plan('model: {name: python, options: {factory: "det_net.py:build", kwargs: {depth: 2}}}')
    with pytest.raises(ConfigError, match=r"d\.yaml:\d+: model\.checkpoint: .*w\.pt: no such file"):
        plan('model: {name: python, options: {factory: "det_net.py:build"}, checkpoint: w.pt}')
