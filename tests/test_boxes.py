"""Gen4 label preprocessing: clipping, class mapping, box filter resolution, skip, bins."""

from __future__ import annotations

import numpy as np

from neuromark.benchmarks.event_detection.boxes import (
    BoxFilter,
    LabelPipeline,
    bin_labels,
    clip_boxes,
    map_classes,
)
from neuromark.data.prophesee import make_boxes


def test_clip_and_map():
    b = make_boxes([0, 0, 0], [-10, 1270, 100], [5, 5, 700], [50, 30, 40], [40, 40, 40], [2, 6, 0])
    c = clip_boxes(b, 1280, 720)
    assert c["x"].tolist() == [0, 1270, 100] and c["w"].tolist() == [40, 10, 40]
    assert c["h"].tolist() == [40, 40, 20]
    assert clip_boxes(make_boxes([0], [1279], [0], [10], [10], [0]), 1280, 720).size == 0  # 1 px left
    m = map_classes(c)
    assert m["class_id"].tolist() == [2, 0]  # traffic light removed


def test_filter_resolution_setting():
    # 50x50 px at 1280x720: diagonal 70.7 at label resolution, 35.4 at 640x360
    b = make_boxes([0], [0], [0], [50], [50], [2])
    assert BoxFilter(resolution=(640, 360))(b, (1280, 720)).size == 0  # NeuroBench's rule
    assert BoxFilter(resolution=(1280, 720))(b, (1280, 720)).size == 1  # the toolbox's paper rule
    wide = make_boxes([0], [0], [0], [1100], [100], [2])
    assert BoxFilter()(wide, (1280, 720)).size == 0  # wider than 0.8 W


def test_pipeline_and_bins():
    b = make_boxes([400_000, 600_000, 610_000, 640_000], [0, 0, 0, 0], [0, 0, 0, 0],
                   [200, 200, 200, 200], [200, 200, 200, 200], [2, 2, 0, 2])
    out = LabelPipeline()(b)
    assert out["t"].tolist() == [600_000, 610_000, 640_000]  # first 0.5 s skipped
    assert out["w"].tolist() == [100, 100, 100]  # rescaled to 640x360
    frames = bin_labels(out, 550_000, 50_000, 3)
    assert [f["t"].tolist() for f in frames] == [[600_000], [650_000], []]
    assert frames[1]["class_id"].tolist() == [2]  # the last label time in (600, 650] ms
    assert np.all(frames[0]["class_id"] == 2)
