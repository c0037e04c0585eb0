"""``data.on_invalid`` of the primate-reaching tasks end to end (issue 32): a session file
written here in the real MATLAB v7.3 layout with a NaN cursor and a NaN spike time is
refused by default and, with ``drop``, scored on the remaining samples with the per-rule
counts of each split in the results and a flag; ``error`` keeps the decoders' recipe hash."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_primate_reaching_data import T0, write_mat73

from neuromark.benchmarks.primate_reaching.task import DataSettings
from neuromark.config import ConfigFile
from neuromark.context import RunContext
from neuromark.errors import ConfigError, DataError
from neuromark.registry import tasks
from neuromark.tasks.base import plan_and_run

SESSION = "indy_20160622_01"


def reaching_session(folder: Path, *, reaches: int = 17, length: int = 200, channels: int = 4,
                     cursor_nan_at: int | None = None, spike_nan: bool = False) -> Path:
    """``reaches`` reaches of ``length`` 4-ms samples, target jumping by 50 mm in direction
    (i % 8) * 45°, the cursor following it (first-order lag), random spikes per channel."""
    k = reaches * length
    t = T0 + 0.004 * np.arange(k)
    target, pos = np.zeros((k, 2)), np.zeros(2)
    for i in range(1, reaches):
        pos = pos + 50 * np.array([np.cos(i % 8 * np.pi / 4), np.sin(i % 8 * np.pi / 4)])
        target[i * length:] = pos
    cursor = np.zeros((k, 2))
    for j in range(1, k):
        cursor[j] = cursor[j - 1] + 0.05 * (target[j - 1] - cursor[j - 1])
    if cursor_nan_at is not None:
        cursor[cursor_nan_at, 0] = np.nan
    rng = np.random.default_rng(0)
    cells: list[list[np.ndarray | None]] = [[np.sort(rng.uniform(t[0], t[-1], k // 5))]
                                            for _ in range(channels)]
    if spike_nan:
        cells[1][0] = np.concatenate([cells[1][0], [np.nan]])
    folder.mkdir(parents=True, exist_ok=True)
    return write_mat73(folder / f"{SESSION}.mat", t, cursor, target, cells)


def reaching_config(tmp_path: Path, root: Path, **data: object) -> ConfigFile:
    doc = {"task": "primate_reaching", "benchmark": {"id": "pr-on-invalid"},
           "data": {"root": str(root), "surrogate": None, "sessions": [SESSION], "chunk": 250,
                    **data},
           "model": {"name": "ridge_decoder"}, "checkpoint_dir": str(tmp_path / "ckpt")}
    path = tmp_path / f"pr-{len(list(tmp_path.glob('pr-*.yaml')))}.yaml"
    path.write_text(json.dumps(doc))
    return ConfigFile(data=doc, path=path)


def test_on_invalid_setting_validated_at_load(tmp_path):
    cfg = reaching_config(tmp_path, tmp_path, on_invalid="skip")
    with pytest.raises(ConfigError, match=r"data\.on_invalid"):
        tasks.get("primate_reaching").plan(cfg, RunContext.build())


def test_on_invalid_error_keeps_the_recipe_hash_drop_changes_it():
    assert DataSettings().reader_kwargs() == {"bin_width": 0.004, "train_ratio": 0.5}
    assert DataSettings(on_invalid="error").reader_kwargs() == {"bin_width": 0.004, "train_ratio": 0.5}
    assert DataSettings(on_invalid="drop").reader_kwargs()["on_invalid"] == "drop"


def test_on_invalid_drop_counts_per_split_and_flags(tmp_path):
    task = tasks.get("primate_reaching")
    root = tmp_path / "hostile"
    reaching_session(root, cursor_nan_at=300, spike_nan=True)  # sample 300: the first reaches (train)
    with pytest.raises(DataError, match=r"finite spike times|cursor_pos is not finite"):
        plan_and_run(task, reaching_config(tmp_path, root), tmp_path / "out0", quiet=True)
    (res,) = plan_and_run(task, reaching_config(tmp_path, root, on_invalid="drop"), tmp_path / "out1",
                          quiet=True)
    entry = res.details["per_session"][SESSION]
    assert entry["invalid_records"] == {
        "train": {"finite spike times": 1, "finite cursor": 1, "finite velocity": 2},
        "test": {"finite spike times": 1}}
    assert np.isfinite(res["r2"]) and any("on_invalid: drop" in f and SESSION in f for f in res.flags)
    # a clean file: nothing dropped, no flag, and the error-mode decoder is a different checkpoint
    clean = tmp_path / "clean"
    reaching_session(clean)
    (ok,) = plan_and_run(task, reaching_config(tmp_path, clean, on_invalid="drop"), tmp_path / "out2",
                         quiet=True)
    assert ok.details["per_session"][SESSION]["invalid_records"] == {"train": {}, "test": {}}
    assert not ok.flags
    (plain,) = plan_and_run(task, reaching_config(tmp_path, clean), tmp_path / "out3", quiet=True)
    (explicit,) = plan_and_run(task, reaching_config(tmp_path, clean, on_invalid="error"), tmp_path / "out4",
                               quiet=True)
    assert "invalid_records" not in plain.details["per_session"][SESSION]
    assert not explicit.details["per_session"][SESSION]["trained_now"]
    assert (explicit.details["per_session"][SESSION]["checkpoint"]
            == plain.details["per_session"][SESSION]["checkpoint"]
            != ok.details["per_session"][SESSION]["checkpoint"])


def psth_config(tmp_path: Path, root: Path, on_invalid: str) -> ConfigFile:
    doc = {"task": "psth_predictivity", "benchmark": {"id": "psth-on-invalid"},
           "data": {"root": str(root), "surrogate": None, "sessions": [SESSION],
                    "on_invalid": on_invalid},
           "ceiling": {"n_splits": 2, "n_bootstrap": 10, "min_reliability": -1},
           "mapping": {"folds": 2}, "controller": {"hidden": 4, "iterations": 1}}
    path = tmp_path / f"psth-{on_invalid}.yaml"
    path.write_text(json.dumps(doc))
    return ConfigFile(data=doc, path=path)


def test_psth_on_invalid_drop_counts_spike_times_refuses_samples(tmp_path):
    task = tasks.get("psth_predictivity")
    root = tmp_path / "spikes"
    reaching_session(root, spike_nan=True)
    with pytest.raises(DataError, match="finite spike times"):
        plan_and_run(task, psth_config(tmp_path, root, "error"), tmp_path / "out0", quiet=True)
    (res,) = plan_and_run(task, psth_config(tmp_path, root, "drop"), tmp_path / "out1", quiet=True)
    assert res.details["per_session"][SESSION]["invalid_records"] == {"finite spike times": 1}
    assert any("on_invalid: drop" in f for f in res.flags)
    cursor = tmp_path / "cursor"
    reaching_session(cursor, cursor_nan_at=300)
    with pytest.raises(DataError, match=r"sample 299 \(finite velocity\) would be dropped, but "
                                        r"psth_predictivity runs its controller"):
        plan_and_run(task, psth_config(tmp_path, cursor, "drop"), tmp_path / "out2", quiet=True)
