"""The event readers' input contract (issue 32, point 1): Prophesee ``.dat`` events,
``_bbox.npy`` boxes and DVS Gesture ``.npy`` events. Each rule refuses its case before any
work, naming the file, the record and the rule; ``on_invalid: drop`` drops and counts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neuromark.benchmarks.dvs_gesture.reader import DVSGesture, read_sample
from neuromark.benchmarks.event_detection.stream import event_file, list_files
from neuromark.data import event_contract
from neuromark.data.event_dtypes import make_camera_events
from neuromark.data.prophesee import DAT_RECORD, make_boxes, read_boxes, read_dat, write_boxes, write_dat
from neuromark.errors import DataError

W, H = 64, 36


def _raw_dat(path, t, x, y, p=None, width=W, height=H):
    """A version-2 ``.dat`` of any records (write_dat refuses invalid ones)."""
    t = np.asarray(t, np.uint64)
    p = np.zeros(len(t), np.int64) if p is None else np.asarray(p)
    records = np.empty(len(t), DAT_RECORD)
    records["t"] = t
    records["w"] = (np.asarray(x) | (np.asarray(y) << 14) | (p << 28)).astype(np.uint32)
    with open(path, "wb") as f:
        f.write(f"% Version 2\n% Height {height}\n% Width {width}\n".encode() + bytes([12, 8]))
        records.tofile(f)
    return path


def _clean(n=400, span=3_000_000, seed=0):
    rng = np.random.default_rng(seed)
    return (np.sort(rng.integers(0, span, n)), rng.integers(0, W, n), rng.integers(0, H, n))


def _refused(path, rule, record):
    return pytest.raises(DataError, match=rf"{path.name}: record {record}: {rule}")


# ---- Prophesee .dat ------------------------------------------------------------------------


def test_dat_time_order_shuffled_records_refused(tmp_path):
    t, x, y = _clean()
    t[[100, 101]] = t[101] + 5, t[100]
    dat = _raw_dat(tmp_path / "a_td.dat", t, x, y)
    with _refused(dat, "time order", 101):
        event_file(dat)
    with _refused(dat, "time order", 101):
        read_dat(dat)


def test_dat_time_order_reversed_records_refused(tmp_path):
    t, x, y = _clean()
    dat = _raw_dat(tmp_path / "a_td.dat", t[::-1] + 1, x, y)
    with pytest.raises(DataError, match=r"record 1: time order: .*\(399 record\(s\)"):
        event_file(dat)


def test_dat_time_order_checked_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(event_contract, "_CHUNK", 64)
    t, x, y = _clean()
    t[128] = 0  # the first record of the third chunk is earlier than the chunk before
    with _refused(_raw_dat(tmp_path / "a_td.dat", t, x, y), "time order", 128):
        event_file(tmp_path / "a_td.dat")


@pytest.mark.parametrize("axis", ["x", "y"])
def test_dat_inside_the_sensor(tmp_path, axis):
    t, x, y = _clean()
    (x if axis == "x" else y)[7] = W if axis == "x" else H
    dat = _raw_dat(tmp_path / "a_td.dat", t, x, y)
    with _refused(dat, "inside the sensor", 7):
        event_file(dat)
    with _refused(dat, "inside the sensor", 7):
        read_dat(dat, backend="numpy")


def test_dat_time_gap_refuses_an_absurd_time(tmp_path):
    """One event at t = 2^32-1 µs would make a 3-s file 71 minutes of empty windows."""
    t, x, y = _clean()
    t[-1] = 2 ** 32 - 1
    dat = _raw_dat(tmp_path / "a_td.dat", t, x, y)
    with pytest.raises(DataError, match=r"a_td\.dat: record 399: time gap: .* \(limit 60 s"):
        event_file(dat)


def test_dat_time_gap_before_the_first_event(tmp_path):
    t, x, y = _clean()
    dat = _raw_dat(tmp_path / "a_td.dat", t + 2 ** 31, x, y)
    with _refused(dat, "time gap", 0):
        event_file(dat)


def test_dat_drop_counts_and_streams_as_the_clean_file(tmp_path):
    """Injected records dropped and counted per rule; the windows equal the clean file's."""
    t, x, y = _clean()
    clean = write_dat(tmp_path / "clean_td.dat", make_camera_events(t, x, y, np.zeros_like(t)),
                      width=W, height=H)
    bad_t = np.insert(t, [50, 200, 200, 400], [t[50], 0, t[200], 2 ** 32 - 1])
    bad_x = np.insert(x, [50, 200, 200, 400], [W + 3, 1, 2, 3])
    bad_y = np.insert(y, [50, 200, 200, 400], [1, 1, H, 3])
    dirty = _raw_dat(tmp_path / "dirty_td.dat", bad_t, bad_x, bad_y)
    f = event_file(dirty, "drop")
    assert f.invalid == {"inside the sensor": 2, "time order": 1, "time gap": 1}
    assert f.dropped.tolist() == [50, 201, 202, 403]
    g = event_file(clean)
    assert f.duration_us == g.duration_us and not g.invalid
    for start in range(0, g.duration_us, 250_000):
        a = read_dat(dirty, start_us=start, end_us=start + 250_000, backend="numpy", dropped=f.dropped)
        b = read_dat(clean, start_us=start, end_us=start + 250_000, backend="numpy")
        assert np.array_equal(a, b)
    assert np.array_equal(read_dat(dirty, on_invalid="drop", backend="numpy"), read_dat(clean))


def test_dat_valid_file_reads_unchanged(tmp_path):
    t, x, y = _clean()
    ev = make_camera_events(t, x, y, np.ones_like(t))
    dat = write_dat(tmp_path / "a_td.dat", ev, width=W, height=H)
    f = event_file(dat, "drop")
    assert not f.invalid and len(f.dropped) == 0 and f.duration_us == t[-1] + 1
    assert np.array_equal(read_dat(dat, backend="numpy"), ev)


def test_on_invalid_must_be_error_or_drop(tmp_path):
    t, x, y = _clean()
    with pytest.raises(ValueError, match="on_invalid"):
        event_file(_raw_dat(tmp_path / "a_td.dat", t, x, y), "ignore")


# ---- boxes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value", "rule"), [("x", np.nan, "finite box"),
                                                       ("h", np.inf, "finite box"),
                                                       ("w", -4.0, "positive size"),
                                                       ("h", 0.0, "positive size")])
def test_boxes_finite_box_and_positive_size(tmp_path, field, value, rule):
    boxes = make_boxes(np.arange(1, 6) * 50_000, 10, 5, 20, 20, 2)
    boxes[field][3] = value
    path = write_boxes(tmp_path / "a_bbox.npy", boxes)
    with _refused(path, rule, 3):
        read_boxes(path)
    assert len(read_boxes(path, "drop")) == 4


def test_boxes_refused_when_files_are_listed(tmp_path):
    t, x, y = _clean()
    write_dat(tmp_path / "a_td.dat", make_camera_events(t, x, y, np.zeros_like(t)), width=W, height=H)
    boxes = make_boxes(np.arange(1, 6) * 50_000, 10, 5, 20, 20, 2)
    boxes["w"][0] = -1
    write_boxes(tmp_path / "a_bbox.npy", boxes)
    with _refused(tmp_path / "a_bbox.npy", "positive size", 0):
        list_files(tmp_path)
    files, _ = list_files(tmp_path, "drop")
    assert files[0].invalid == {"boxes: positive size": 1}


# ---- DVS Gesture -----------------------------------------------------------------------------


def _gesture(root, raw, name="3.npy", split="ibmGestureTest"):
    folder = root / split / "user01_led"
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / name, raw)
    return folder / name


def _columns(n=300, dtype=np.int64):
    rng = np.random.default_rng(1)
    return np.stack([rng.integers(0, 128, n), rng.integers(0, 128, n), rng.integers(0, 2, n),
                     np.sort(rng.integers(0, 6000, n))], 1).astype(dtype)


def test_dvs_finite_time(tmp_path):
    raw = _columns(dtype=np.float64)
    raw[17, 3] = np.nan
    with _refused(_gesture(tmp_path, raw), "finite time", 17):
        read_sample(tmp_path / "ibmGestureTest/user01_led/3.npy")


def test_dvs_time_range_refuses_overflow(tmp_path):
    """t = 2^62 ms overflows int64 once converted to µs."""
    raw = _columns()
    raw[-1, 3] = 2 ** 62
    with _refused(_gesture(tmp_path, raw), "time range", 299):
        read_sample(tmp_path / "ibmGestureTest/user01_led/3.npy")


def test_dvs_time_gap(tmp_path):
    raw = _columns()
    raw[-1, 3] = 10 ** 9  # ms: 11 days after the others
    with _refused(_gesture(tmp_path, raw), "time gap", 299):
        read_sample(tmp_path / "ibmGestureTest/user01_led/3.npy")


@pytest.mark.parametrize(("col", "value"), [(0, -1), (1, 128), (0, 500)])
def test_dvs_inside_the_sensor(tmp_path, col, value):
    raw = _columns()
    raw[40, col] = value
    with pytest.raises(DataError, match=r"3\.npy: record 40: inside the sensor: .*128x128"):
        read_sample(_gesture(tmp_path, raw))


def test_dvs_time_order(tmp_path):
    raw = _columns()[::-1].copy()
    with _refused(_gesture(tmp_path, raw), "time order", 1):
        read_sample(tmp_path / "ibmGestureTest/user01_led/3.npy")


def test_dvs_refused_when_samples_are_listed_before_any_work(tmp_path):
    raw = _columns(dtype=np.float64)
    raw[5, 3] = np.inf
    _gesture(tmp_path, _columns(), "1.npy")
    _gesture(tmp_path, raw, "2.npy")
    with _refused(tmp_path / "2.npy", "finite time", 5):
        len(DVSGesture(tmp_path, "test"))


def test_dvs_drop_counts_per_file(tmp_path):
    good = _columns()
    raw = np.concatenate([good[:10], [[200, 1, 0, 5], [3, 3, 1, 2 ** 62]], good[10:]])
    _gesture(tmp_path, raw, "2.npy")
    _gesture(tmp_path, good, "1.npy")
    ds = DVSGesture(tmp_path, "test", on_invalid="drop")
    assert len(ds) == 2
    assert ds.invalid_records == {"user01_led/2.npy": {"inside the sensor": 1, "time range": 1}}
    assert np.array_equal(ds.events(1), read_sample(tmp_path / "ibmGestureTest/user01_led/1.npy"))
    assert np.array_equal(ds.events(1)["t"], good[:, 3] * 1000)


# ---- the count lands in the results ----------------------------------------------------------


DET = """task: detection
benchmark: {id: det-dirty, version: "1.0"}
data:
  root: data
  network: [32, 18]
  box_filter: {resolution: [640, 360]}
  on_invalid: MODE
model: {name: event_detector, options: {width: 4}, checkpoint: w.pt}
train: {epochs: 1, batch_size: 1}
eval: {metrics: [coco_map], time_tol_us: 50000}
"""


def test_detection_on_invalid_drop_counts_in_results(tmp_path, monkeypatch, capsys):
    from neuromark.cli import main

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    for split in ("train", "test"):
        (tmp_path / "data" / split).mkdir(parents=True)
        t, x, y = _clean(span=1_000_000)
        if split == "test":
            t[-1] = 2 ** 32 - 1
        _raw_dat(tmp_path / "data" / split / "a_td.dat", t, x, y)
        write_boxes(tmp_path / "data" / split / "a_bbox.npy",
                    make_boxes(np.arange(1, 20) * 50_000, 10, 5, 20, 20, 2))
    cfg = tmp_path / "det.yaml"
    cfg.write_text(DET.replace("MODE", "error"))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    assert "a_td.dat: record 399: time gap" in capsys.readouterr().err
    cfg.write_text(DET.replace("MODE", "drop"))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out2"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out2" / "det-dirty--event_detector.json").read_text())
    assert res["details"]["invalid_records_dropped"] == {"test/a_td.dat": {"time gap": 1}}


def test_dvs_gesture_on_invalid_drop_counts_in_results(tmp_path, monkeypatch, capsys):
    from neuromark.cli import main
    from neuromark.registry import generators

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    generators.get("gestures").write_gesture_corpus(tmp_path / "data", train_users=1, test_users=1,
                                                    duration_s=0.15, seed=0)
    target = sorted((tmp_path / "data" / "ibmGestureTest").glob("user*/3.npy"))[0]
    raw = np.load(target)
    np.save(target, np.concatenate([raw, [[1, 1, 0, 2 ** 62]]]).astype(raw.dtype))
    cfg = tmp_path / "g.yaml"
    text = """task: classification
benchmark: {id: gesture-dirty, version: "1.0"}
dataset:
  name: dvs_gesture
  options: {root: data, n_time_bins: 4, train_time_bins: 3, on_invalid: MODE}
model: {name: dvs_gesture_snn, checkpoint: g.pt}
train: {epochs: 1, batch_size: 11}
eval: {postprocessor: spike_count, metrics: [classification_accuracy]}
"""
    cfg.write_text(text.replace("MODE", "error"))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    assert f"3.npy: record {len(raw)}: time range" in capsys.readouterr().err
    cfg.write_text(text.replace("MODE", "drop"))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out2"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out2" / "gesture-dirty--dvs_gesture_snn.json").read_text())
    name = target.relative_to(target.parents[1]).as_posix()
    assert res["details"]["invalid_records_dropped"] == {name: {"time range": 1}}


# ---- Prophesee EVT2/EVT3 .raw ----------------------------------------------------------------


def _raw_file(path, encoding, t, x, y, p=None, geometry=True):
    """An EVT2/EVT3 ``.raw`` written by expelliarmus' encoder, with a ``% geometry`` line
    as Prophesee's own headers carry (expelliarmus writes none)."""
    expelliarmus = pytest.importorskip("expelliarmus")
    arr = np.zeros(len(t), [("t", "<i8"), ("x", "<i2"), ("y", "<i2"), ("p", "u1")])
    arr["t"], arr["x"], arr["y"] = t, x, y
    arr["p"] = 0 if p is None else p
    expelliarmus.Wizard(encoding=encoding).save(str(path), arr)
    if geometry:
        data = path.read_bytes()
        path.write_bytes(f"% geometry {W}x{H}\n".encode() + data)
    return path


def _dense(n=300):
    rng = np.random.default_rng(3)
    return np.sort(rng.integers(0, 3000, n)), rng.integers(0, W, n), rng.integers(0, H, n)


@pytest.mark.parametrize("encoding", ["evt2", "evt3"])
def test_raw_inside_the_sensor(tmp_path, encoding):
    from neuromark.data.prophesee import read_raw, read_raw_checked

    t, x, y = _dense()
    x[50] = W + 3
    raw = _raw_file(tmp_path / "a.raw", encoding, t, x, y)
    with _refused(raw, "inside the sensor", 50):
        read_raw(raw, encoding)
    events, counts = read_raw_checked(raw, encoding, on_invalid="drop")
    assert counts == {"inside the sensor": 1} and len(events) == len(t) - 1
    assert np.array_equal(events["t"], np.delete(t, 50))


def test_raw_time_order(tmp_path):
    """EVT2 stores absolute time-high words, so reversed records decode reversed (EVT3's
    decoder reads a lower time-high as a wrap round, so its times never decrease)."""
    from neuromark.data.prophesee import read_raw

    t, x, y = _dense()
    raw = _raw_file(tmp_path / "a.raw", "evt2", t[::-1].copy(), x, y)
    with pytest.raises(DataError, match=r"a\.raw: record \d+: time order"):
        read_raw(raw, "evt2")


def test_raw_time_gap_refuses_an_absurd_time(tmp_path):
    from neuromark.data.prophesee import read_raw

    t, x, y = _dense()
    t[-1] = 2 ** 30  # 18 minutes after the others
    raw = _raw_file(tmp_path / "a.raw", "evt2", t, x, y)
    with _refused(raw, "time gap", len(t) - 1):
        read_raw(raw, "evt2")


def test_raw_sensor_size_from_the_header_or_the_call(tmp_path):
    from neuromark.data.prophesee import raw_geometry, read_raw

    t, x, y = _dense()
    named = _raw_file(tmp_path / "named.raw", "evt3", t, x, y, geometry=False)
    assert b"hal_plugin_gen41" in named.read_bytes()[:300]  # expelliarmus names a Gen4.1
    assert len(read_raw(named)) == len(t)  # 1280x720 from the plugin name, EVT3 from '% evt'
    raw = tmp_path / "a.raw"
    raw.write_bytes(named.read_bytes().replace(b"% plugin_name hal_plugin_gen41_evk3 \n", b""))
    with pytest.raises(DataError, match=r"a\.raw: the header states no sensor size"):
        read_raw(raw, "evt3")
    assert len(read_raw(raw, "evt3", width=W, height=H)) == len(t)
    unknown = tmp_path / "u.raw"
    unknown.write_bytes(b"% sensor_generation 9.9\n" + raw.read_bytes())
    with pytest.raises(DataError, match=r"u\.raw: the header names sensor 'gen9\.9'"):
        read_raw(unknown)
    with pytest.raises(DataError, match="states encoding 'evt3', the call 'evt2'"):
        read_raw(raw, "evt2")
    fmt = tmp_path / "b.raw"
    fmt.write_bytes(f"% format EVT3;height={H};width={W}\n".encode() + raw.read_bytes())
    assert raw_geometry(fmt) == (W, H)
    with pytest.raises(DataError, match="states a 64x36 sensor, the call 32x36"):
        read_raw(fmt, "evt3", width=32, height=H)


# ---- DVS Gesture: polarity and whole pixels ---------------------------------------------------


@pytest.mark.parametrize("value", [-1, 2, 0.5])
def test_dvs_polarity(tmp_path, value):
    raw = _columns(dtype=np.float64)
    raw[12, 2] = value
    with _refused(_gesture(tmp_path, raw), "polarity", 12):
        read_sample(tmp_path / "ibmGestureTest/user01_led/3.npy")


def test_dvs_integer_coordinates(tmp_path):
    raw = _columns(dtype=np.float64)
    raw[30, 1] = 7.5
    with _refused(_gesture(tmp_path, raw), "integer coordinates", 30):
        read_sample(tmp_path / "ibmGestureTest/user01_led/3.npy")
    events, counts = __import__("neuromark.benchmarks.dvs_gesture.reader", fromlist=["x"]).read_checked(
        tmp_path / "ibmGestureTest/user01_led/3.npy", "drop")
    assert counts == {"integer coordinates": 1} and len(events) == len(raw) - 1
