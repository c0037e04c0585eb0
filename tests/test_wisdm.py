"""WISDM reader (raw UCI 507 layout and NeuroBench's arrays), splits and generator; fixtures
are written here in the real layouts."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.benchmarks.activity.cases import write_raw
from neuromark.benchmarks.activity.wisdm import WISDM, read_npz, window_split
from neuromark.benchmarks.activity.wisdm_raw import NEUROBENCH_CLASSES, first_per_bin
from neuromark.data.splits import subject_split
from neuromark.errors import DataError

STEP = 50_000_000  # ns




def test_windows_labels_and_shape(tmp_path):
    root = write_raw(tmp_path)
    data = WISDM.load(root, "train", split_by="window")
    x, y = data[0]
    assert tuple(x.shape) == (40, 6) and str(x.dtype) == "torch.float32"
    total = sum(len(WISDM.load(root, s, split_by="window")) for s in ("train", "valid", "test"))
    assert total == 3 * 7 * 2  # 100 samples -> 2 windows, tail of 20 dropped
    report = data.data_report()
    assert report["dropped_rows"] == {"partial_window_tail": 3 * 7 * 20}
    # label k carries the activity's accel x mean k (the fixture's code order = class order)
    xs, ys = data.arrays()
    assert np.allclose(xs[:, :, 0].mean(1).round(), ys, atol=0.6)


def test_join_takes_latest_gyro_at_or_before_and_counts_drops(tmp_path):
    raw = tmp_path / "wisdm-dataset" / "raw" / "watch"
    accel = [f"1600,P,{10**12 + i * STEP},{i},0,0;" for i in range(45)]
    accel.insert(3, f"1600,P,{10**12 + 2 * STEP + 10},99,0,0;")  # same 50-ms bin as sample 2
    gyro = [f"1600,P,{10**12 + i * STEP + 5 * STEP},{i},1,1;" for i in range(45)]  # starts 5 bins late
    for sensor, lines in (("accel", accel), ("gyro", gyro)):
        (raw / sensor).mkdir(parents=True)
        (raw / sensor / f"data_1600_{sensor}_watch.txt").write_text("\n".join(lines) + "\n")
    data = WISDM.load(tmp_path, "test", split_by="window", seed=0)
    report = data.data_report()["dropped_rows"]
    assert report["same_50ms_bin"] == 1 and report["no_gyro_at_or_before"] == 5
    assert "partial_window_tail" not in report and report["gyro_unused"] == 5
    x = np.concatenate([WISDM.load(tmp_path, s, split_by="window", seed=0).arrays()[0]
                        for s in ("train", "valid", "test")])
    assert x.shape == (1, 40, 6)
    assert (x[0, :, 3] == x[0, :, 0] - 5).all()  # accel sample i took gyro sample i - 5


def test_first_per_bin_keeps_the_earliest_row():
    kept, start = first_per_bin(np.array([40, 10, 120, 60, 110, 10]), 50)
    assert kept.tolist() == [1, 3, 4] and start.tolist() == [0, 50, 100]


@pytest.mark.parametrize("line, rule", [
    ("1600,P,123,1.0,2.0;", "fields"),
    ("1600,P,123,1.0,nan,2.0;", "non_finite_value"),
    ("1600,N,123,1.0,2.0,3.0;", "unknown_activity"),
    ("1600,P,12.5,1.0,2.0,3.0;", "timestamp_not_integer"),
    ("1600,P,123,1.0,abc,3.0;", "value_not_number"),
    ("1601,P,123,1.0,2.0,3.0;", "subject_not_1600"),
])
def test_bad_line_names_file_line_and_rule(tmp_path, line, rule):
    root = write_raw(tmp_path, extra={(1600, "accel"): [line]})
    with pytest.raises(DataError, match=rf"data_1600_accel_watch.txt:701: {rule}"):
        len(WISDM.load(root, "test"))
    dropped = WISDM.load(root, "test", on_invalid="drop")
    assert dropped.invalid_records == {"wisdm-dataset/raw/watch/accel/data_1600_accel_watch.txt": {rule: 1}}


def test_non_utf8_names_line_and_byte(tmp_path):
    root = write_raw(tmp_path)
    path = root / "wisdm-dataset/raw/watch/gyro/data_1601_gyro_watch.txt"
    path.write_bytes(path.read_bytes() + b"1601,P,5,1.0,2.0,\xe9;\n")
    with pytest.raises(DataError, match=r"data_1601_gyro_watch.txt:701: byte \d+ .*not UTF-8"):
        len(WISDM.load(root, "test"))


def test_missing_sensor_file_is_named(tmp_path):
    root = write_raw(tmp_path)
    (root / "wisdm-dataset/raw/watch/gyro/data_1602_gyro_watch.txt").unlink()
    with pytest.raises(DataError, match="data_1602_gyro_watch.txt: missing"):
        len(WISDM.load(root, "test"))
    with pytest.raises(DataError, match="data_1602_gyro_watch.txt"):
        WISDM.verify(root)


def test_subject_split_refuses_a_subject_in_two_splits(tmp_path):
    root = write_raw(tmp_path)
    lists = {"train": [1600, 1601], "valid": [1602], "test": [1601]}
    with pytest.raises(DataError, match="subject 1601 is in both the train and the test split"):
        len(WISDM.load(root, "test", subjects=lists))
    ok = {"train": [1600], "valid": [1601], "test": [1602]}
    parts = {s: set(WISDM.load(root, s, subjects=ok).subject_ids.tolist()) for s in ok}
    assert parts == {"train": {1600}, "valid": {1601}, "test": {1602}}


def test_seeded_subject_split_is_disjoint():
    subjects = np.repeat(np.arange(1600, 1610), 5)
    parts = subject_split(subjects, seed=3)
    sets = [set(subjects[parts[s]].tolist()) for s in ("train", "valid", "test")]
    assert sets[0].isdisjoint(sets[1]) and sets[0].isdisjoint(sets[2]) and sets[1].isdisjoint(sets[2])
    assert sum(len(p) for p in parts.values()) == 50


def test_window_split_is_scikit_learns():
    sklearn = pytest.importorskip("sklearn.model_selection")
    n = 36201  # neurobench 2.3.0's watch_subset2_40.npz: 21720 / 7240 / 7241
    parts = window_split(n, 42)
    train, rest = sklearn.train_test_split(np.arange(n), test_size=0.4, random_state=42)
    valid, test = sklearn.train_test_split(rest, test_size=0.5, random_state=42)
    assert [len(parts[s]) for s in ("train", "valid", "test")] == [21720, 7240, 7241]
    for name, expected in (("train", train), ("valid", valid), ("test", test)):
        assert (parts[name] == expected).all()


def test_npz_one_hot_and_integer_labels(tmp_path):
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(n, 40, 6)).astype(np.float32) for n in (5, 3, 2)]
    ys = [rng.integers(0, 7, len(x)) for x in xs]
    np.savez(tmp_path / "watch_subset2_40.npz", *xs, *[np.eye(7, dtype=np.uint8)[y] for y in ys])
    np.savez(tmp_path / "subset_watch_2s_gho.npz", *xs, *ys)
    for name in ("watch_subset2_40.npz", "subset_watch_2s_gho.npz"):
        data = WISDM.load(tmp_path, "valid", source="npz", file=name)
        assert len(data) == 3 and data.targets.tolist() == ys[1].tolist()
    bad = [x.copy() for x in xs]
    bad[2][1, 3, 0] = np.nan
    np.savez(tmp_path / "bad.npz", *bad, *ys)
    with pytest.raises(DataError, match=r"bad.npz: arr_2 \(test x\): window 1 holds NaN"):
        read_npz(tmp_path / "bad.npz", 7)
    np.savez(tmp_path / "few.npz", *xs)
    with pytest.raises(DataError, match="expected keys arr_0..arr_5"):
        read_npz(tmp_path / "few.npz", 7)


def test_generator_classes_are_separable_by_window_statistics(tmp_path):
    root = WISDM.synthesize(tmp_path / "s", subjects=5, seconds=30, activities="".join(NEUROBENCH_CLASSES),
                            phone=False, arrays=True, seed=1)
    WISDM.verify(root)
    train, test = (WISDM.load(root, s, split_by="subject", seed=0) for s in ("train", "test"))

    def stats(x):
        return np.concatenate([x.mean(1), x.std(1)], 1)

    (xa, ya), (xb, yb) = train.arrays(), test.arrays()
    centroids = np.stack([stats(xa)[ya == c].mean(0) for c in range(7)])
    scale = stats(xa).std(0)
    pred = (((stats(xb)[:, None] - centroids[None]) / scale) ** 2).sum(-1).argmin(1)
    assert (pred == yb).mean() > 0.6  # chance: 1/7
    assert len(WISDM.load(root, "test", source="npz")) > 0


def test_baselines_have_the_stated_parameter_counts():
    pytest.importorskip("snntorch")
    from neuromark.benchmarks.activity.models import FFSNN, SCNN, WindowANN

    counts = [sum(p.numel() for p in m.parameters()) for m in (SCNN(), FFSNN(), WindowANN())]
    assert counts == [57_647, 10_231, 31_751]  # SCNN: neurobench examples/nehar/SCNN.py (main)


def test_classification_run_trains_selects_on_valid_and_reports_drops(tmp_path, monkeypatch):
    """The config route: the surrogate is written on first use, the family trained with the
    validation split choosing the epoch, the reader's drop counts in the results."""
    pytest.importorskip("snntorch")
    import json

    from neuromark.cli import main

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    cfg = tmp_path / "w.yaml"
    cfg.write_text("""task: classification
benchmark: {id: wisdm-tiny, version: "1.0"}
dataset:
  name: wisdm
  options:
    root: cache:wisdm
    synthesize: {subjects: 5, seconds: 10, activities: POFQRGS, phone: false, seed: 0}
model: {name: nehar_ffsnn, checkpoint: cache:ffsnn.pt}
train: {epochs: 2, batch_size: 32}
eval: {metrics: [classification_accuracy, synaptic_operations]}
""")
    assert main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "wisdm-tiny--nehar_ffsnn.json").read_text())
    details = res["details"]
    assert details["trained_now"] is True and details["epochs"] == 2
    from neuromark.benchmarks.activity.models import NEHAR_FFSNN

    _, meta = NEHAR_FFSNN.load(tmp_path / "cache" / "ffsnn.pt")
    assert len(meta["valid_accuracy"]) == 2 and meta["best_epoch"] in (1, 2)
    report = details["data_report"]
    assert report["split_by"] == "subject" and report["dropped_rows"]["same_50ms_bin"] > 0
    assert set(report["subjects"]["test"]).isdisjoint(report["subjects"]["train"])
    assert details["decoding"]["rule"] == "spike_count"
    assert res["scores"]["synaptic_operations"]["value"]["Dense"] == 397_680


def test_download_refuses_without_a_trusted_checksum(tmp_path):
    with pytest.raises(DataError, match="publishes no checksum.*sha256"):
        WISDM.download(tmp_path)
    assert not any(tmp_path.iterdir())  # nothing fetched


def test_window_stats_module_predicts_as_scikit_learns_lda():
    sklearn = pytest.importorskip("sklearn.discriminant_analysis")
    import torch

    from neuromark.benchmarks.activity.models import fit_window_stats, window_features

    rng = np.random.default_rng(0)
    y = np.arange(140) % 7
    x = rng.normal(size=(140, 40, 6)) + y[:, None, None] * np.linspace(0, 1, 6)
    net = fit_window_stats({"inputs": 6, "classes": 7}, x, y)
    lda = sklearn.LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(window_features(x), y)
    got = net(torch.from_numpy(x).float()).argmax(1).numpy()
    assert (got == lda.predict(window_features(x))).mean() >= 0.99


# --- hostile inputs (#41): overflow, empty files, timestamps in the wrong unit ------------


def test_wisdm_value_beyond_float32_is_a_bad_line_not_nan_in_sklearn(tmp_path):
    root = write_raw(tmp_path, extra={(1600, "accel"): ["1600,P,123,1.0,3.5e38,2.0;"]})
    with pytest.raises(DataError, match=r"data_1600_accel_watch.txt:701: value_overflows_float32"):
        len(WISDM.load(root, "test"))
    dropped = WISDM.load(root, "test", on_invalid="drop")
    assert dropped.invalid_records == {
        "wisdm-dataset/raw/watch/accel/data_1600_accel_watch.txt": {"value_overflows_float32": 1}}
    assert np.isfinite(dropped.arrays()[0]).all()


def test_wisdm_subject_file_with_no_rows_is_refused_naming_it(tmp_path):
    root = write_raw(tmp_path)
    path = root / "wisdm-dataset/raw/watch/gyro/data_1601_gyro_watch.txt"
    path.write_text("")
    with pytest.raises(DataError, match=r"data_1601_gyro_watch.txt: no valid row \(0 line"):
        len(WISDM.load(root, "test", split_by="window"))
    path.write_text("1601,P,1,nan,0,0;\n")  # every line dropped: the subject would vanish
    with pytest.raises(DataError, match=r"data_1601_gyro_watch.txt: no valid row \(1 line\(s\), 1 invalid"):
        len(WISDM.load(root, "test", split_by="window", on_invalid="drop"))


def test_wisdm_all_rows_at_one_timestamp_is_refused(tmp_path):
    root = write_raw(tmp_path)
    path = root / "wisdm-dataset/raw/watch/accel/data_1602_accel_watch.txt"
    path.write_text("".join(f"1602,P,{10**12},{i},0,0;\n" for i in range(200)))
    with pytest.raises(DataError, match=r"data_1602_accel_watch.txt: all 200 rows have the timestamp"):
        len(WISDM.load(root, "test", split_by="window"))


def test_wisdm_timestamp_unit_is_checked_against_the_data_span(tmp_path):
    # a real WISDM timestamp (ns since boot) read as ms overflows int64 nanoseconds
    root = write_raw(tmp_path / "a", extra={(1600, "accel"): ["1600,P,252207666810782,1.0,2.0,3.0;"]})
    overflow = r"data_1600_accel_watch.txt:701: timestamp_overflows_int64_at_unit_ms"
    with pytest.raises(DataError, match=overflow):
        len(WISDM.load(root, "test", timestamp_unit="ms"))
    # the fixture's ns timestamps read as ms: steps of 5e7 ms, named with the unit that fits
    root = write_raw(tmp_path / "b")
    with pytest.raises(DataError, match=r"timestamps is 5e\+07 ms .*timestamp_unit: ns would fit"):
        len(WISDM.load(root, "test", timestamp_unit="ms"))
    # milliseconds written, nanoseconds declared: steps of 50 ns, named with the unit that fits
    for sensor in ("accel", "gyro"):
        for sid in (1600, 1601, 1602):
            path = root / f"wisdm-dataset/raw/watch/{sensor}/data_{sid}_{sensor}_watch.txt"
            rows = [line.split(",") for line in path.read_text().splitlines()]
            path.write_text("".join(f"{r[0]},{r[1]},{int(r[2]) // 1_000_000},{','.join(r[3:])}\n"
                                    for r in rows))
    with pytest.raises(DataError, match=r"timestamps is 50 ns .*timestamp_unit: ms would fit"):
        len(WISDM.load(root, "test", split_by="window"))
    assert len(WISDM.load(root, "test", split_by="window", timestamp_unit="ms")) > 0


def test_ffsnn_membrane_readout_decodes_by_the_mean_membrane():
    import torch

    from neuromark.benchmarks.activity.models import FFSNN
    spiking, leaky = FFSNN(), FFSNN(readout="membrane")
    assert sum(p.numel() for p in leaky.parameters()) == sum(p.numel() for p in spiking.parameters())
    outputs = torch.tensor([[[0.0, 1.0], [2.0, 1.0]]])  # (B, T, K)
    assert leaky.logits(outputs).tolist() == [[1.0, 1.0]]
    assert spiking.logits(outputs).tolist() == [[2.0, 2.0]]
    with pytest.raises(ValueError, match="readout must be 'spikes' or 'membrane'"):
        FFSNN(readout="count")
