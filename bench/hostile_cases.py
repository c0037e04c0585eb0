"""Cases of ``bench/hostile_sweep.py``: the data readers (Prophesee ``.dat``/``.raw`` and
boxes, DVS Gesture, primate reaching, keyword lists, decoded audio), NIR graphs and the data
sets' generators. Inputs are written here in the real formats; the tools' cases (configs,
checker, leaderboard, energy, seeds) are in ``hostile_cases_tools.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from hostile_common import case, cli

W, H = 64, 36
SESSION = "indy_20160622_01"


# ---- Prophesee .dat and boxes (through the detection reader, as a run lists its files) --------


def _dat(path: Path, t: Any, x: Any, y: Any, width: int = W, height: int = H) -> Path:
    from neuromark.data.prophesee import DAT_RECORD

    records = np.empty(len(t), DAT_RECORD)
    records["t"] = np.asarray(t, np.uint64)
    records["w"] = (np.asarray(x) | (np.asarray(y) << 14)).astype(np.uint32)
    with open(path, "wb") as f:
        f.write(f"% Version 2\n% Height {height}\n% Width {width}\n".encode() + bytes([12, 8]))
        records.tofile(f)
    return path


def _clean(n: int = 400, span: int = 3_000_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return np.sort(rng.integers(0, span, n)), rng.integers(0, W, n), rng.integers(0, H, n)


def _boxes(path: Path, **change: float) -> Path:
    from neuromark.data.prophesee import make_boxes, write_boxes

    cols = {"t": [500_000, 1_000_000], "x": [4.0, 10.0], "y": [3.0, 5.0], "w": [8.0, 6.0],
            "h": [6.0, 4.0], "class_id": [0, 1]}
    for key, value in change.items():
        cols[key][1] = value
    return write_boxes(path, make_boxes(*(np.asarray(cols[k]) for k in ("t", "x", "y", "w", "h",
                                                                        "class_id"))))


def _listed(tmp: Path, t: Any, x: Any, y: Any, /, **box_change: float) -> Any:
    from neuromark.benchmarks.event_detection.stream import list_files

    folder = tmp / "data" / "test"
    folder.mkdir(parents=True)
    _dat(folder / "rec_td.dat", t, x, y)
    _boxes(folder / "rec_bbox.npy", **box_change)
    return lambda: len(list_files(folder)[0])


def _dat_case(id: str, rule: str, test: str, record: int) -> Any:
    return case(id, rule, f"test_event_contract.py::{test}",
                needs=("rec_td.dat", f"record {record}", rule))


@_dat_case("dat-shuffled-records", "time order", "test_dat_time_order_shuffled_records_refused", 101)
def _(tmp: Path) -> Any:
    t, x, y = _clean()
    t[[100, 101]] = t[101] + 5, t[100]
    return _listed(tmp, t, x, y)


@_dat_case("dat-reversed-records", "time order", "test_dat_time_order_reversed_records_refused", 1)
def _(tmp: Path) -> Any:
    t, x, y = _clean()
    return _listed(tmp, t[::-1] + 1, x, y)


@_dat_case("dat-outside-sensor", "inside the sensor", "test_dat_inside_the_sensor", 7)
def _(tmp: Path) -> Any:
    t, x, y = _clean()
    x[7] = W + 5
    return _listed(tmp, t, x, y)


@_dat_case("dat-time-2^32-1", "time gap", "test_dat_time_gap_refuses_an_absurd_time", 399)
def _(tmp: Path) -> Any:
    t, x, y = _clean()
    t[-1] = 2 ** 32 - 1
    return _listed(tmp, t, x, y)


@case("boxes-nan-x", "finite box", "test_event_contract.py::test_boxes_finite_box_and_positive_size",
      needs=("rec_bbox.npy", "record 1", "finite box"))
def _(tmp: Path) -> Any:
    return _listed(tmp, *_clean(), x=float("nan"))


@case("boxes-negative-width", "positive size",
      "test_event_contract.py::test_boxes_finite_box_and_positive_size",
      needs=("rec_bbox.npy", "record 1", "positive size"))
def _(tmp: Path) -> Any:
    return _listed(tmp, *_clean(), w=-3.0)


@case("boxes-infinite-height", "finite box",
      "test_event_contract.py::test_boxes_finite_box_and_positive_size",
      needs=("rec_bbox.npy", "record 1", "finite box"))
def _(tmp: Path) -> Any:
    return _listed(tmp, *_clean(), h=float("inf"))


DET = """task: detection
benchmark: {{id: det-hostile, version: "1.0"}}
data:
  root: {root}
  {extra}
  network: [32, 18]
  box_filter: {{resolution: [640, 360]}}
model: {{name: event_detector, options: {{width: 4}}, checkpoint: cache:det.pt}}
train: {{epochs: 1, batch_size: 1}}
eval: {{metrics: [coco_map], time_tol_us: 50000}}
"""


@case("detection-drop-counted", "on_invalid: drop",
      "test_event_contract.py::test_detection_on_invalid_drop_counts_in_results", expect="result",
      check=lambda v: v == {"test/rec_td.dat": {"time gap": 1}} or f"dropped {v}")
def _(tmp: Path) -> Any:
    import json

    for split in ("train", "test"):
        (tmp / "data" / split).mkdir(parents=True)
        t, x, y = _clean(span=1_000_000)
        if split == "test":
            t[-1] = 2 ** 32 - 1
        _dat(tmp / "data" / split / "rec_td.dat", t, x, y)
        _boxes(tmp / "data" / split / "rec_bbox.npy")
    (tmp / "det.yaml").write_text(DET.format(root="data", extra="on_invalid: drop"))

    def act() -> Any:
        cli("run", tmp / "det.yaml", "--out", tmp / "out", "--quiet")
        data = json.loads(next((tmp / "out").glob("det-hostile*.json")).read_text())
        return data["details"]["invalid_records_dropped"]
    return act


@case("detection-synthesize-into-user-folder", "never write into a folder it did not create",
      "test_dataset_contract.py::TestGen4::test_synthesize_writes_a_verified_deterministic_layout",
      needs=("NOTES.txt",))
def _(tmp: Path) -> Any:
    user = tmp / "mine"
    user.mkdir()
    (user / "NOTES.txt").write_text("my notes")
    _dat(user / "recording_td.dat", *_clean())
    synth = ("synthesize: {files: {train: 1, test: 1}, duration_s: 1.2, height: 36, width: 64, "
             "seed: 3}")
    (tmp / "det.yaml").write_text(DET.format(root="mine", extra=synth))
    return lambda: cli("run", tmp / "det.yaml", "--out", tmp / "out", "--quiet")


# ---- Prophesee EVT2/EVT3 .raw ------------------------------------------------------------------


def _raw(path: Path, encoding: str, t: Any, x: Any, y: Any, geometry: bool = True) -> Path:
    import expelliarmus

    arr = np.zeros(len(t), [("t", "<i8"), ("x", "<i2"), ("y", "<i2"), ("p", "u1")])
    arr["t"], arr["x"], arr["y"] = t, x, y
    expelliarmus.Wizard(encoding=encoding).save(str(path), arr)
    if geometry:  # as Prophesee's own headers state the sensor
        path.write_bytes(f"% geometry {W}x{H}\n".encode() + path.read_bytes())
    return path


def _dense() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return np.sort(rng.integers(0, 3000, 300)), rng.integers(0, W, 300), rng.integers(0, H, 300)


@case("raw-evt3-outside-sensor", "inside the sensor",
      "test_event_contract.py::test_raw_inside_the_sensor", needs=("a.raw", "record 50", "inside the sensor"))
def _(tmp: Path) -> Any:
    from neuromark.data.prophesee import read_raw

    t, x, y = _dense()
    x[50] = W + 3
    path = _raw(tmp / "a.raw", "evt3", t, x, y)
    return lambda: len(read_raw(path, "evt3"))


@case("raw-evt2-reversed", "time order", "test_event_contract.py::test_raw_time_order",
      needs=("a.raw", "record 1", "time order"))
def _(tmp: Path) -> Any:
    from neuromark.data.prophesee import read_raw

    t, x, y = _dense()
    path = _raw(tmp / "a.raw", "evt2", t[::-1].copy(), x, y)
    return lambda: len(read_raw(path, "evt2"))


@case("raw-evt2-absurd-time", "time gap",
      "test_event_contract.py::test_raw_time_gap_refuses_an_absurd_time",
      needs=("a.raw", "record 299", "time gap"))
def _(tmp: Path) -> Any:
    from neuromark.data.prophesee import read_raw

    t, x, y = _dense()
    t[-1] = 2 ** 30
    path = _raw(tmp / "a.raw", "evt2", t, x, y)
    return lambda: len(read_raw(path, "evt2"))


@case("raw-no-sensor-size", "sensor size stated",
      "test_event_contract.py::test_raw_sensor_size_from_the_header_or_the_call",
      needs=("a.raw", "states no sensor size"))
def _(tmp: Path) -> Any:
    from neuromark.data.prophesee import read_raw

    path = _raw(tmp / "a.raw", "evt3", *_dense(), geometry=False)
    # expelliarmus's header names a Gen4.1 plugin (a known 1280x720 sensor): without it the
    # header states nothing the sensor size can come from
    path.write_bytes(path.read_bytes().replace(b"% plugin_name hal_plugin_gen41_evk3 \n", b""))
    return lambda: len(read_raw(path, "evt3"))


@case("raw-evt3-drop-counted", "on_invalid: drop", "test_event_contract.py::test_raw_inside_the_sensor",
      expect="result", check=lambda v: v == (299, {"inside the sensor": 1}) or "wrong count")
def _(tmp: Path) -> Any:
    from neuromark.data.prophesee import read_raw_checked

    t, x, y = _dense()
    y[10] = H
    path = _raw(tmp / "a.raw", "evt3", t, x, y)

    def act() -> Any:
        events, counts = read_raw_checked(path, "evt3", on_invalid="drop")
        return len(events), counts
    return act


# ---- DVS Gesture (files listed as a run lists them) --------------------------------------------


def _gesture(tmp: Path, change: Any, dtype: Any = np.float64) -> Any:
    from neuromark.benchmarks.dvs_gesture.reader import DVSGesture

    rng = np.random.default_rng(1)
    raw = np.stack([rng.integers(0, 128, 300), rng.integers(0, 128, 300), rng.integers(0, 2, 300),
                    np.sort(rng.integers(0, 6000, 300))], 1).astype(dtype)
    raw = change(raw)
    folder = tmp / "dvs" / "ibmGestureTest" / "user01_led"
    folder.mkdir(parents=True)
    np.save(folder / "3.npy", raw)
    return lambda: len(DVSGesture(tmp / "dvs", "test"))


def _dvs_case(id: str, rule: str, test: str, record: int) -> Any:
    return case(id, rule, f"test_event_contract.py::{test}", needs=("3.npy", f"record {record}", rule))


def _set(row: int, col: int, value: float) -> Any:
    def change(raw: np.ndarray) -> np.ndarray:
        raw[row, col] = value
        return raw
    return change


@_dvs_case("dvs-nan-time", "finite time", "test_dvs_finite_time", 17)
def _(tmp: Path) -> Any:
    return _gesture(tmp, _set(17, 3, np.nan))


@_dvs_case("dvs-time-2^62-ms", "time range", "test_dvs_time_range_refuses_overflow", 299)
def _(tmp: Path) -> Any:
    return _gesture(tmp, _set(299, 3, 2 ** 62), np.int64)


@_dvs_case("dvs-negative-x", "inside the sensor", "test_dvs_inside_the_sensor", 40)
def _(tmp: Path) -> Any:
    return _gesture(tmp, _set(40, 0, -1))


@_dvs_case("dvs-y-outside-128", "inside the sensor", "test_dvs_inside_the_sensor", 41)
def _(tmp: Path) -> Any:
    return _gesture(tmp, _set(41, 1, 128))


@_dvs_case("dvs-unsorted", "time order", "test_dvs_time_order", 1)
def _(tmp: Path) -> Any:
    return _gesture(tmp, lambda raw: raw[::-1].copy())


@_dvs_case("dvs-polarity-minus-1", "polarity", "test_dvs_polarity", 12)
def _(tmp: Path) -> Any:
    return _gesture(tmp, _set(12, 2, -1))


@_dvs_case("dvs-fractional-x", "integer coordinates", "test_dvs_integer_coordinates", 30)
def _(tmp: Path) -> Any:
    return _gesture(tmp, _set(30, 0, 7.5))


# ---- primate reaching (the task, on recorded-layout files) -------------------------------------


def _session(tmp: Path, samples: int = 400, cursor_nan_at: int | None = None, spikes: bool = True,
             channels: int = 4) -> Path:
    from neuromark.benchmarks.primate_reaching.generator import write_mat73

    t = 0.002 + 0.004 * np.arange(samples)
    cursor = np.stack([np.sin(np.arange(samples) / 20), np.cos(np.arange(samples) / 30)], 1) * 50
    target = np.zeros((samples, 2))
    for i, start in enumerate(range(0, samples, samples // 8)):
        target[start:, i % 2] = float(i + 1)
    if cursor_nan_at is not None:
        cursor[cursor_nan_at, 0] = np.nan
    rng = np.random.default_rng(0)
    cells = [[np.sort(rng.uniform(t[0], t[-1], 300)) if spikes else None] for _ in range(channels)]
    (tmp / "mat").mkdir(exist_ok=True)
    return write_mat73(tmp / "mat" / f"{SESSION}.mat", t, cursor, target, cells)


PRIMATE = """task: primate_reaching
benchmark: {{id: pr-hostile}}
data: {{root: mat, surrogate: null, sessions: [{session}], chunk: 50}}
model: {{name: ridge_decoder}}
checkpoint_dir: cache:ckpt
"""


def _primate_run(tmp: Path) -> Any:
    (tmp / "pr.yaml").write_text(PRIMATE.format(session=SESSION))
    return lambda: cli("run", tmp / "pr.yaml", "--out", tmp / "out", "--quiet")


def _primate_case(id: str, rule: str, test: str, needs: tuple[str, ...], **session: Any) -> None:
    def build(tmp: Path) -> Any:
        _session(tmp, **session)
        return _primate_run(tmp)
    case(id, rule, f"test_primate_contract.py::{test}", needs=(f"{SESSION}.mat", *needs))(build)


_primate_case("primate-nan-cursor-train", "finite cursor",
              "test_finite_cursor_nan_in_train_split_names_file_session_and_sample",
              ("cursor_pos is not finite at sample 20",), cursor_nan_at=20)
_primate_case("primate-nan-cursor-test", "finite cursor",
              "test_finite_cursor_nan_in_test_split_names_the_sample",
              ("cursor_pos is not finite at sample 390",), cursor_nan_at=390)
_primate_case("primate-all-cells-empty", "spikes present",
              "test_spikes_all_cells_empty_names_the_session", ("every spike cell is empty",),
              spikes=False)


@case("primate-zero-channels", "channels", "test_primate_contract.py::test_zero_channels_named",
      needs=(f"{SESSION}.mat", "at least one unit and channel"))
def _(tmp: Path) -> Any:
    import h5py

    (tmp / "mat").mkdir()
    with h5py.File(tmp / "mat" / f"{SESSION}.mat", "w") as f:
        f.create_dataset("t", data=(0.004 * np.arange(12))[None, :])
        for name in ("cursor_pos", "target_pos"):
            f.create_dataset(name, data=np.zeros((2, 12)))
        f.create_dataset("spikes", shape=(1, 0), dtype=h5py.ref_dtype)
    return _primate_run(tmp)


def _dropped_ok(v: Any) -> Any:
    """A NaN cursor at sample 20 dropped with the two velocities that reach it, labels finite."""
    return v[0] == {"finite cursor": 1, "finite velocity": 2} and v[1] or f"counts {v}"


@case("primate-drop-nan-cursor", "on_invalid: drop",
      "test_primate_contract.py::test_on_invalid_drop_nan_cursor_dropped_and_counted",
      expect="result", check=lambda v: _dropped_ok(v))
def _(tmp: Path) -> Any:
    from neuromark.benchmarks.primate_reaching.reader import PrimateReaching

    _session(tmp, cursor_nan_at=20)

    def act() -> Any:
        train = PrimateReaching(tmp / "mat", SESSION, "train", on_invalid="drop")
        return train.invalid_records, bool(np.isfinite(train.arrays()[1]).all())
    return act


@case("primate-task-drop-nan-cursor", "on_invalid: drop (task)",
      "test_primate_on_invalid.py::test_on_invalid_drop_counts_per_split_and_flags",
      expect="result", check=lambda v: _dropped_ok(v))
def _(tmp: Path) -> Any:
    _session(tmp, cursor_nan_at=20)
    (tmp / "pr.yaml").write_text(PRIMATE.format(session=SESSION).replace(
        "chunk: 50}", "chunk: 50, on_invalid: drop}"))

    def act() -> Any:
        cli("run", tmp / "pr.yaml", "--out", tmp / "out", "--quiet")
        res = json.loads(next((tmp / "out").rglob("pr-hostile--*.json")).read_text())
        return (res["details"]["per_session"][SESSION]["invalid_records"]["train"],
                any("on_invalid: drop" in f for f in res["flags"]))
    return act


# ---- keyword lists and decoded audio ----------------------------------------------------------


@case("mswc-latin1-base-test", "UTF-8 lists",
      "test_text_lists_contract.py::test_utf8_mswc_latin1_list_names_file_and_line",
      needs=("base_test.csv:3", "not UTF-8", "0xe9"))
def _(tmp: Path) -> Any:
    from neuromark.benchmarks.keywords.mswc import KEYWORDS, MSWC

    folder = tmp / "data" / "MSWC"
    folder.mkdir(parents=True)
    word = KEYWORDS[0]
    for name in ("base_train.csv", "base_val.csv", "base_test.csv"):
        rows = ["LINK,WORD,LANG"] + [f"en/clips/{word}/c{i}.opus,{word},en" for i in range(4)]
        rows[2] = f"en/clips/{word}/caf\u00e9.opus,{word},en"
        (folder / name).write_bytes(("\n".join(rows) + "\n").encode(
            "latin-1" if name == "base_test.csv" else "utf-8"))
    return lambda: len(MSWC(tmp / "data", "base_test"))


@case("gsc-latin1-testing-list", "UTF-8 lists",
      "test_text_lists_contract.py::test_utf8_speech_commands_latin1_list_names_file_and_line",
      needs=("testing_list.txt:2", "not UTF-8", "0xe9"))
def _(tmp: Path) -> Any:
    from neuromark.benchmarks.keywords.speech_commands import SpeechCommands

    folder = tmp / "gsc"
    (folder / "yes").mkdir(parents=True)
    for name in ("a_nohash_0.wav", "b_nohash_0.wav", "caf\u00e9_nohash_0.wav"):
        (folder / "yes" / name).write_bytes(b"")
    (folder / "testing_list.txt").write_bytes("yes/a_nohash_0.wav\nyes/caf\u00e9_nohash_0.wav\n"
                                              .encode("latin-1"))
    (folder / "validation_list.txt").write_text("yes/b_nohash_0.wav\n")
    return lambda: len(SpeechCommands(folder, "testing"))


@case("gsc-decoded-into-data-folder", "decoded audio in the cache",
      "test_decoded_cache.py::test_speech_commands_decodes_into_the_cache_folder_not_the_data_folder",
      expect="result", check=lambda v: v or "decoded outside the cache")
def _(tmp: Path) -> Any:
    import soundfile as sf

    from neuromark.benchmarks.keywords.models import speech_commands

    data = tmp / "gsc"
    (data / "yes").mkdir(parents=True)
    for name in ("s1_nohash_0", "s2_nohash_0"):
        sf.write(data / "yes" / f"{name}.wav", np.zeros(16000, np.float32), 16000)
    (data / "testing_list.txt").write_text("yes/s1_nohash_0.wav\n")
    (data / "validation_list.txt").write_text("yes/s2_nohash_0.wav\n")
    return lambda: speech_commands("test", root=str(data)).recipe_file.is_relative_to(tmp / "cache")


@case("mswc-decoded-beside-a-users-file", "decoded audio in the cache",
      "test_decoded_cache.py::test_a_file_neuromark_did_not_write_is_never_replaced",
      expect="result", check=lambda v: v == (2, 48000) or f"shape {v}")
def _(tmp: Path) -> Any:
    import soundfile as sf

    from neuromark.benchmarks.keywords.mswc import KEYWORDS, MSWC

    folder = tmp / "data" / "MSWC"
    word = KEYWORDS[0]
    (folder / "en" / "clips" / word).mkdir(parents=True)
    for i in range(2):
        sf.write(folder / "en" / "clips" / word / f"c{i}.opus", np.full(48000, 0.1 * i, np.float32),
                 48000, format="OGG", subtype="OPUS")
    (folder / "base_test.csv").write_text("LINK,WORD,LANG\n" + "".join(
        f"{word}/c{i}.opus,{word},en\n" for i in range(2)))
    (folder / "decoded").mkdir()  # where neuromark once wrote its cache: the user's now
    np.save(folder / "decoded" / "base_test.npy", np.ones(3))
    return lambda: MSWC(tmp / "data", "base_test").arrays(tmp / "cache").shape


@case("mswc-nan-audio-over-a-users-file", "decoded audio finite; no file replaced",
      "test_decoded_cache.py::test_nan_decoded_audio_is_refused_before_anything_is_written",
      needs=("clip 1 decodes to NaN",))
def _(tmp: Path) -> Any:
    from neuromark.data.clips import decoded_cache, decoded_files

    recipe = {"dataset": "mswc", "clips_sha256": "abc", "samples": 8}
    users = tmp / "mine"  # a user's own file where a cache file would go: never replaced
    users.mkdir()
    (users / decoded_files(tmp / "cache", "base_test", recipe)[0].name).write_bytes(b"mine")

    def clip(i: int) -> np.ndarray:
        return np.full(8, np.nan if i == 1 else 0.0, np.float32)
    return lambda: decoded_cache(tmp / "cache", "base_test", recipe, 3, clip)


# ---- NIR graphs (.nir files, imported as a config's nir model is) ------------------------------


def _nir_file(tmp: Path, tau: Any = None, weight: Any = None, threshold: Any = None,
              orphan: bool = False) -> Path:
    import nir

    n = 2
    lif = nir.LIF(tau=np.full(n, 2e-4) if tau is None else np.asarray(tau), r=np.full(n, 2.0),
                  v_leak=np.zeros(n), v_reset=np.zeros(n),
                  v_threshold=np.ones(n) if threshold is None else np.asarray(threshold))
    w = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 2.0]]) if weight is None else weight
    nodes = {"input": nir.Input(np.array([3])), "fc": nir.Linear(w), "lif": lif,
             "output": nir.Output(np.array([2]))}
    edges = [("input", "fc"), ("fc", "lif"), ("lif", "output")]
    if orphan:
        nodes["stray"] = nir.Linear(np.ones((2, 2)))
        edges.append(("stray", "lif"))
    nir.write(str(tmp / "net.nir"), nir.NIRGraph(nodes=nodes, edges=edges))
    return tmp / "net.nir"


def _nir_case(id: str, test: str, *needs: str) -> Any:
    return case(id, needs[-1], f"test_nir_contract.py::{test}", needs=needs)


def _imported(path: Path) -> Any:
    from neuromark.models.nir_model import from_nir

    return lambda: type(from_nir(path)).__name__


@_nir_case("nir-nan-tau", "test_finite_nan_time_constant_named", "'lif'", "'tau'", "non-finite")
def _(tmp: Path) -> Any:
    return _imported(_nir_file(tmp, tau=[2e-4, np.nan]))


@_nir_case("nir-nan-weight-column", "test_finite_nan_weight_column_named", "'fc'", "'weight'",
           "non-finite")
def _(tmp: Path) -> Any:
    w = np.array([[1.0, np.nan, 0.0], [0.0, np.nan, 2.0]])
    return _imported(_nir_file(tmp, weight=w))


@_nir_case("nir-nan-threshold", "test_finite_nan_threshold_named", "'lif'", "'v_threshold'",
           "non-finite")
def _(tmp: Path) -> Any:
    return _imported(_nir_file(tmp, threshold=[1.0, np.nan]))


@_nir_case("nir-negative-tau", "test_positive_time_constant_negative_tau_named", "'lif'", "'tau'",
           "must be > 0")
def _(tmp: Path) -> Any:
    return _imported(_nir_file(tmp, tau=[2e-4, -2e-4]))


@_nir_case("nir-tau-below-dt", "test_time_constant_at_least_dt_named", "'lif'", "'tau'",
           "below the step dt")
def _(tmp: Path) -> Any:
    return _imported(_nir_file(tmp, tau=[2e-4, 5e-5]))


@_nir_case("nir-orphan-node", "test_no_orphan_unconnected_node_named", "'stray'", "orphan")
def _(tmp: Path) -> Any:
    return _imported(_nir_file(tmp, orphan=True))


import hostile_cases_contracts  # noqa: E402, F401 - issue 59: contract checks, output files
import hostile_cases_mlperf  # noqa: E402, F401 - issue 59: numbers of MLPerf power folders
import hostile_cases_network  # noqa: E402, F401 - issue 41a: network peers, power samples, searches
import hostile_cases_nmnist  # noqa: E402, F401 - issue 53: the N-MNIST reader and layouts
import hostile_cases_qubo  # noqa: E402, F401 - issue 59: QUBO files, limits, submissions
import hostile_cases_readers  # noqa: E402, F401 - issue 59: real-file readers, NIR, untrained flag
import hostile_cases_tools  # noqa: E402, F401 - the tools' cases, after these
import hostile_cases_writers  # noqa: E402, F401 - issue 41b: writers, user code, portability
