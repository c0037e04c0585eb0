"""The primate-reaching reader's input contract (issue 32): hostile MATLAB v7.3 files written
here in the real layout; each is refused at read time, naming the file, the session and the
sample, before any binning or training."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_primate_reaching_data import T0, K, tiny, write_mat73

from neuromark.benchmarks.primate_reaching.reader import PrimateReaching, read_session
from neuromark.config import ConfigFile
from neuromark.errors import DataError
from neuromark.networks.ridge_decoder import RidgeOptions, TrainData, fit_ridge
from neuromark.registry import tasks
from neuromark.tasks.base import plan_and_run

SESSION = "indy_20160622_01"


def session_file(tmp_path: Path, *, cursor_nan_at: int | None = None, target_nan_at: int | None = None,
                 channels: int = 4, spikes: bool = True, samples: int = K) -> Path:
    """A small session (``samples`` 4-ms samples, four reaches) in the real layout."""
    t = T0 + 0.004 * np.arange(samples)
    cursor = np.stack([np.arange(samples) ** 2, -np.arange(samples, dtype=float)], 1).astype(float)
    target = np.zeros((samples, 2))
    for i, start in enumerate(range(0, samples, samples // 4)):
        target[start:, i % 2] = float(i + 1)
    if cursor_nan_at is not None:
        cursor[cursor_nan_at, 1] = np.nan
    if target_nan_at is not None:
        target[target_nan_at, 0] = np.inf
    rng = np.random.default_rng(0)
    cells: list[list[np.ndarray | None]] = [
        [np.sort(rng.uniform(t[0], t[-1], 40)) if spikes else None] for _ in range(channels)]
    return write_mat73(tmp_path / f"{SESSION}.mat", t, cursor, target, cells)


def test_finite_cursor_nan_in_train_split_names_file_session_and_sample(tmp_path):
    path = session_file(tmp_path, cursor_nan_at=1)  # sample 1 lies in the first (train) reach
    with pytest.raises(DataError, match=rf"{SESSION}\.mat: session '{SESSION}': cursor_pos is not "
                                        r"finite at sample 1 "):
        read_session(path)
    with pytest.raises(DataError, match="cursor_pos is not finite at sample 1"):
        len(PrimateReaching(tmp_path, SESSION, "train"))


def test_finite_cursor_nan_in_test_split_names_the_sample(tmp_path):
    session_file(tmp_path, cursor_nan_at=K - 1)
    with pytest.raises(DataError, match=f"cursor_pos is not finite at sample {K - 1} "):
        len(PrimateReaching(tmp_path, SESSION, "test"))


def test_finite_target_inf_names_the_sample(tmp_path):
    path = session_file(tmp_path, target_nan_at=5)
    with pytest.raises(DataError, match="target_pos is not finite at sample 5 "):
        read_session(path)


def test_zero_channels_named(tmp_path):
    t = T0 + 0.004 * np.arange(K)
    path = tmp_path / f"{SESSION}.mat"
    import h5py

    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=t[None, :])
        for name in ("cursor_pos", "target_pos"):
            f.create_dataset(name, data=np.zeros((2, K)))
        f.create_dataset("spikes", shape=(1, 0), dtype=h5py.ref_dtype)
    with pytest.raises(DataError, match=r"'spikes' must be a \(units, channels\) array .* at least "
                                        r"one unit and channel, got object \(1, 0\)"):
        read_session(path)


def test_spikes_all_cells_empty_names_the_session(tmp_path):
    path = session_file(tmp_path, spikes=False)
    with pytest.raises(DataError, match=rf"session '{SESSION}': every spike cell is empty \(no spike "
                                        r"in any of 4 channels\)"):
        read_session(path)


def test_spikes_none_in_train_split_refused_before_fitting(tmp_path):
    """Spikes only after the training reaches: the ridge fit would be singular."""
    t = T0 + 0.004 * np.arange(40)
    target = np.zeros((40, 2))
    for i, start in enumerate((10, 20, 30)):
        target[start:, i % 2] = float(i + 1)
    cells: list[list[np.ndarray | None]] = [[np.array([t[-2]])], [None]]
    write_mat73(tmp_path / f"{SESSION}.mat", t, np.zeros((40, 2)) + np.arange(40)[:, None],
                target, cells)
    data = {"task": "primate_reaching", "benchmark": {"id": "pr-hostile"},
            "data": {"root": str(tmp_path), "surrogate": None, "sessions": [SESSION], "chunk": 10},
            "model": {"name": "ridge_decoder"}, "checkpoint_dir": str(tmp_path / "ckpt")}
    cfg = tmp_path / "pr.yaml"
    cfg.write_text(json.dumps(data))
    with pytest.raises(DataError, match=rf"session '{SESSION}': the train split holds no spike in "
                                        r"any of its 2 channels"):
        plan_and_run(tasks.get("primate_reaching"), ConfigFile(data=data, path=cfg), tmp_path / "out",
                     quiet=True)
    assert not (tmp_path / "ckpt").exists() or not any((tmp_path / "ckpt").iterdir())


def test_ridge_fit_on_constant_features_is_refused_not_singular():
    x = np.zeros((50, 3), dtype=np.uint8)
    data = TrainData(x, np.random.default_rng(0).normal(size=(50, 2)).astype(np.float32), [(0, 50)])
    with pytest.raises(DataError, match="input features do not vary .* singular"):
        fit_ridge(RidgeOptions(), data)


def test_ridge_fit_alpha_zero_silent_channel_is_refused_not_singular():
    x = np.random.default_rng(1).integers(0, 2, size=(60, 3)).astype(np.uint8)
    x[:, 1] = 0  # a channel that never spikes
    data = TrainData(x, np.random.default_rng(0).normal(size=(60, 2)).astype(np.float32), [(0, 60)])
    with pytest.raises(DataError, match=r"normal equations are singular \(alpha=0 .*set alpha > 0"):
        fit_ridge(RidgeOptions(alpha=0.0), data)
    fit_ridge(RidgeOptions(), data)  # the default penalty fits it


def test_valid_session_still_reads(tmp_path):
    rec = read_session(tiny(tmp_path))
    assert np.isfinite(rec.cursor).all() and rec.channels == 96


def test_on_invalid_drop_nan_cursor_dropped_and_counted(tmp_path):
    """drop: the NaN-cursor sample and the two whose central-difference velocity reaches it
    leave the train split; the reaches, and so the split, stay those of the clean file."""
    (tmp_path / "clean").mkdir()
    clean = session_file(tmp_path / "clean", samples=48)  # four reaches of 12 samples
    session_file(tmp_path, cursor_nan_at=10, target_nan_at=20, samples=48)
    ref = {s: PrimateReaching(clean.parent, SESSION, s) for s in ("train", "test")}
    train = PrimateReaching(tmp_path, SESSION, "train", on_invalid="drop")
    assert len(train) == len(ref["train"]) - 4
    assert train.invalid_records == {"finite cursor": 1, "finite target": 1, "finite velocity": 2}
    assert not set(train.indices) & {9, 10, 11, 20}
    assert np.isfinite(train.arrays()[1]).all()
    test = PrimateReaching(tmp_path, SESSION, "test", on_invalid="drop")
    assert test.invalid_records == {} and np.array_equal(test.indices, ref["test"].indices)
    assert np.array_equal(test.arrays()[1], ref["test"].arrays()[1])
    with pytest.raises(Exception, match="on_invalid must be 'error' or 'drop'"):
        PrimateReaching(tmp_path, SESSION, "train", on_invalid="skip")


def test_on_invalid_drop_nan_spike_time_counted(tmp_path):
    t = T0 + 0.004 * np.arange(K)
    cursor = np.stack([np.arange(K) ** 2.0, np.zeros(K)], 1)
    target = np.zeros((K, 2))
    target[K // 2:, 0] = 1.0
    path = write_mat73(tmp_path / f"{SESSION}.mat", t, cursor, target,
                       [[np.array([t[3], np.nan, t[9]])], [np.array([t[5]])]])
    with pytest.raises(DataError, match=r"spikes\[unit 0, channel 0\]: finite spike times: spike 1"):
        read_session(path)
    assert read_session(path, "drop").dropped_spikes == 1
    assert PrimateReaching(tmp_path, SESSION, "train", on_invalid="drop").invalid_records == {
        "finite spike times": 1}
