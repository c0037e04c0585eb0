"""DVS Gesture: tonic's preprocessed layout, sorted order, and the peer's transforms equal
to tonic 1.7.0's on the same events (Denoise 10 ms, Downsample 0.25, ToFrame by bins)."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.benchmarks.dvs_gesture.reader import DVSGesture, list_samples, read_sample
from neuromark.benchmarks.dvs_gesture.transforms import denoise, downsample, to_frame_time_bins
from neuromark.errors import DataError


def _raw(seed: int, n: int = 3000) -> np.ndarray:
    """(N, 4) x, y, p, t[ms] as in the preprocessed files: clustered, with isolated noise."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.integers(0, 1500, n))
    cx = 64 + 30 * np.sin(t / 200)
    x = np.clip(np.where(rng.random(n) < 0.8, cx + rng.normal(0, 3, n), rng.integers(0, 128, n)), 0, 127)
    y = np.clip(np.where(rng.random(n) < 0.8, 64 + rng.normal(0, 3, n), rng.integers(0, 128, n)), 0, 127)
    return np.stack([x.astype(int), y.astype(int), rng.integers(0, 2, n), t], 1).astype(np.int64)


def _write(root, split="test", users=(24, 25)):
    folder = root / ("ibmGestureTest" if split == "test" else "ibmGestureTrain")
    for u in users:
        for label in (10, 2, 0):  # written out of order on purpose
            (folder / f"user{u:02d}_led").mkdir(parents=True, exist_ok=True)
            np.save(folder / f"user{u:02d}_led" / f"{label}.npy", _raw(u * 100 + label))
    return folder


def test_layout_order_and_units(tmp_path):
    _write(tmp_path)
    samples = list_samples(tmp_path, "test")
    assert [(s[2], s[1]) for s in samples] == [(24, 0), (24, 2), (24, 10), (25, 0), (25, 2), (25, 10)]
    ev = read_sample(samples[0][0])
    raw = np.load(samples[0][0])
    assert np.array_equal(ev["t"], raw[:, 3] * 1000) and np.array_equal(ev["x"], raw[:, 0])
    data = DVSGesture(tmp_path, "test", n_time_bins=20)
    frames, label = data[2]
    assert tuple(frames.shape) == (20, 2, 32, 32) and label == 10
    np.save(samples[0][0].parent / "x.npy", np.zeros((3, 4)))
    with pytest.raises(DataError, match="class index"):
        list_samples(tmp_path, "test")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_transforms_equal_tonic(seed):
    tonic = pytest.importorskip("tonic")
    from numpy.lib import recfunctions

    raw = _raw(seed)
    tonic_events = raw.copy()
    tonic_events[:, 3] *= 1000
    tonic_events = recfunctions.unstructured_to_structured(tonic_events, tonic.datasets.DVSGesture.dtype)
    ref = tonic.transforms.Compose([tonic.transforms.Denoise(filter_time=10000),
                                    tonic.transforms.Downsample(spatial_factor=0.25),
                                    tonic.transforms.ToFrame(sensor_size=(32, 32, 2), n_time_bins=150)])
    expected = ref(tonic_events)
    ev = np.empty(len(raw), dtype=[("t", "<i8"), ("x", "<i2"), ("y", "<i2"), ("p", "i1")])
    ev["x"], ev["y"], ev["p"], ev["t"] = raw[:, 0], raw[:, 1], raw[:, 2], raw[:, 3] * 1000
    den = denoise(ev, 10_000)
    assert 0 < len(den) < len(ev)  # the filter did something
    np.testing.assert_array_equal(den["t"], tonic.transforms.Denoise(filter_time=10000)(tonic_events)["t"])
    got = to_frame_time_bins(downsample(den, 0.25), (32, 32, 2), 150)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_gesture_net_dense_equals_peer_count():
    """Dense synaptic operations of the peer's architecture: 5,941,376 per frame (convs
    counted over their valid taps on 'same' padding), 8.91e8 for 150 frames."""
    pytest.importorskip("snntorch")
    import torch

    from neuromark.benchmarks.dvs_gesture.model import dvs_gesture_snn
    from neuromark.metrics.complexity import SynapticOperations
    from neuromark.runner import Benchmark

    model = dvs_gesture_snn()
    frames = torch.zeros(2, 3, 2, 32, 32)
    frames[:, :, :, 5:9, 5:9] = 1.0
    loader = [(frames, torch.tensor([0, 1]))]
    res = Benchmark(model, loader, [], [lambda out: out.sum(1).argmax(-1)], [SynapticOperations()],
                    quiet=True).run()
    dense = res.scores["synaptic_operations"].value["Dense"]
    per_frame = 16 * 2 * 154 ** 2 + 32 * 16 * 74 ** 2 + 64 * 32 * 34 ** 2 + 1024 * 11
    assert per_frame == 5_941_376
    assert dense == pytest.approx(3 * per_frame)
    assert 150 * per_frame == pytest.approx(8.91e8, rel=1e-3)


def test_missing_data_is_a_clear_error_at_first_use(tmp_path):
    data = DVSGesture(tmp_path / "nowhere", "test")  # a config validates before the data exist
    with pytest.raises(DataError, match="ibmGestureTest: no such folder"):
        len(data)
    with pytest.raises(DataError, match="split must be one of"):
        DVSGesture(tmp_path, "valid")


def test_surrogate_and_checkpoint_made_on_first_use(tmp_path, monkeypatch):
    """The config route of the suites: validation writes nothing; the first run writes the
    surrogate and trains the family's checkpoint, the second reuses both."""
    pytest.importorskip("snntorch")
    import json

    from neuromark.benchmarks.dvs_gesture.model import DVS_GESTURE_SNN
    from neuromark.cli import main

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    cfg = tmp_path / "g.yaml"
    cfg.write_text("""task: classification
benchmark: {id: gesture-tiny, version: "1.0"}
dataset:
  name: dvs_gesture
  options:
    root: cache:gestures
    synthesize: {train_users: 1, test_users: 1, duration_s: 0.15, seed: 0}
    n_time_bins: 4
    train_time_bins: 3
model: {name: dvs_gesture_snn, checkpoint: cache:gesture.pt}
train: {epochs: 1, batch_size: 11, lr: 0.008, optimizer: adam, schedule: cosine}
eval: {postprocessor: spike_count, metrics: [classification_accuracy, synaptic_operations]}
""")
    assert main(["validate", str(cfg)]) == 0
    assert not (tmp_path / "cache" / "gestures").exists()
    assert main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "gesture-tiny--dvs_gesture_snn.json").read_text())
    assert res["details"]["trained_now"] is True and res["details"]["train_samples"] == 11
    assert 0 <= res["scores"]["classification_accuracy"]["value"] <= 1
    assert (tmp_path / "cache" / "gestures" / ".complete").is_file()
    assert main(["run", str(cfg), "--out", str(tmp_path / "out2"), "--quiet"]) == 0
    again = json.loads((tmp_path / "out2" / "gesture-tiny--dvs_gesture_snn.json").read_text())
    assert again["details"]["trained_now"] is False
    accuracy = res["scores"]["classification_accuracy"]["value"]
    assert again["scores"]["classification_accuracy"]["value"] == accuracy
    model, meta = DVS_GESTURE_SNN.load(tmp_path / "cache" / "gesture.pt")
    assert meta["kind"] == "dvs_gesture_snn" and model.module.drop.p == 0.5
    (tmp_path / "foreign.pt").write_bytes((tmp_path / "cache" / "gesture.pt").read_bytes()[:100])
    with pytest.raises(DataError, match="foreign.pt"):
        DVS_GESTURE_SNN.load(tmp_path / "foreign.pt")


def test_surrogate_never_overwrites_other_files(tmp_path):
    from neuromark.benchmarks.dvs_gesture.generator import GestureSurrogate, ensure_gesture_corpus

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "ibmGestureTest").mkdir()
    with pytest.raises(DataError, match="not a neuromark surrogate"):
        ensure_gesture_corpus(tmp_path / "real", GestureSurrogate(train_users=1, test_users=1))


def test_sample_round_trip_exact(tmp_path):
    from neuromark.benchmarks.dvs_gesture.reader import write_sample
    from neuromark.data.event_dtypes import make_camera_events

    ev = make_camera_events([0, 1000, 1000, 57_000], [0, 127, 5, 64], [3, 0, 127, 64], [1, 0, 1, 0])
    path = write_sample(tmp_path / "ibmGestureTest" / "user24_led" / "7.npy", ev)
    np.testing.assert_array_equal(read_sample(path), ev)
    with pytest.raises(ValueError, match="whole milliseconds"):
        write_sample(tmp_path / "x.npy", make_camera_events([1500], [0], [0], [1]))


def test_training_is_seeded():
    """Initial weights, batch order and dropout come from the recipe's seed."""
    pytest.importorskip("snntorch")
    import torch

    from neuromark.benchmarks.dvs_gesture.model import GestureSNN, fit_gesture

    gen = torch.Generator().manual_seed(0)
    data = [((torch.rand(3, 2, 32, 32, generator=gen) < 0.2).float(), k) for k in range(4)]
    first = fit_gesture(GestureSNN, data, epochs=1, lr=0.01, batch_size=2, seed=7)[0]
    torch.rand(5)  # the global generator moves between runs; the seed decides
    again = fit_gesture(GestureSNN, data, epochs=1, lr=0.01, batch_size=2, seed=7)[0]
    for (name, a), b in zip(first.state_dict().items(), again.state_dict().values()):
        assert torch.equal(a, b), name
