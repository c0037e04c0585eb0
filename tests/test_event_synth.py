"""The event simulator's sensor model and the offline generators' layouts."""

from __future__ import annotations

import numpy as np

from neuromark.benchmarks.dvs_gesture.generator import render_gesture, write_gesture_corpus
from neuromark.benchmarks.dvs_gesture.reader import read_sample
from neuromark.data.prophesee import read_boxes, read_dat
from neuromark.synth.camera_events import SensorModel, simulate, write_detection_files


def test_threshold_crossings_count_and_sign():
    # one pixel steps from 0.1 to 0.8 at 10 ms and back at 30 ms: floor(log ratio / C) events each way
    def render(t):
        img = np.full((2, 3), 0.1)
        img[1, 2] = 0.8 if 0.010 <= t < 0.030 else 0.1
        return img

    sensor = SensorModel(threshold=0.3, threshold_sigma=0.0, noise_hz=0.0, frame_us=2000,
                         max_events_per_frame=99)
    ev = simulate(render, 2, 3, 50_000, np.random.default_rng(0), sensor)
    n = int(np.floor(np.log(0.81 / 0.11) / 0.3))
    assert len(ev) == 2 * n and set(zip(ev["x"].tolist(), ev["y"].tolist())) == {(2, 1)}
    assert ev["p"][:n].tolist() == [1] * n and ev["p"][n:].tolist() == [0] * n
    assert np.all(np.diff(ev["t"]) >= 0) and 8_000 <= ev["t"][0] <= 10_000 and ev["t"][-1] <= 30_000


def test_detection_files_layout(tmp_path):
    paths = write_detection_files(tmp_path, files={"test": 1}, duration_s=0.7, height=36, width=64, seed=3)
    ev = read_dat(paths[0])
    boxes = read_boxes(str(paths[0]).replace("_td.dat", "_bbox.npy"))
    assert len(ev) > 100 and ev["x"].max() < 64 and ev["y"].max() < 36
    assert len(boxes) and set(boxes["class_id"].tolist()) <= {0, 1, 2, 3}
    again = write_detection_files(tmp_path / "b", files={"test": 1}, duration_s=0.7, height=36, width=64,
                                  seed=3)
    assert again[0].read_bytes() == paths[0].read_bytes()  # seeded


def test_gesture_surrogate_layout(tmp_path):
    ev = render_gesture(3, {"freq": 2.0, "amp": 20, "dx": 0, "dy": 0, "radius": 5, "shade": 0.9,
                            "threshold": 0.25, "noise_hz": 0.1}, 0.2, np.random.default_rng(0))
    assert len(ev) > 50 and np.all(ev["t"] % 1000 == 0) and ev["x"].max() < 128
    files = write_gesture_corpus(tmp_path, train_users=0, test_users=1, duration_s=0.1)
    assert [f.stem for f in files] == [str(k) for k in range(11)]
    assert files[0].parent.parent.name == "ibmGestureTest" and files[0].parent.name.startswith("user01_")
    assert np.load(files[0]).shape[1] == 4 and len(read_sample(files[0])) > 0
