"""The primate_reaching task end to end on a tiny surrogate: R² per session (checked
against scikit-learn per dimension), mean and standard error over sessions, streaming
state, cached checkpoints."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from sklearn.metrics import r2_score

from neuromark.benchmarks.primate_reaching.reader import PrimateReaching
from neuromark.benchmarks.primate_reaching.task import per_monkey, r2_per_dimension
from neuromark.config import ConfigFile
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.registry import models, tasks
from neuromark.tasks.base import plan_and_run

SESSIONS = ["indy_20160622_01", "loco_20170210_03"]


def config(tmp_path, **model):
    data = {"task": "primate_reaching", "benchmark": {"id": "pr-test"},
            "data": {"root": str(tmp_path / "data"), "surrogate": {"duration_s": 16, "seed": 1},
                     "sessions": SESSIONS, "chunk": 100},
            "model": model or {"name": "ridge_decoder"}, "checkpoint_dir": str(tmp_path / "ckpt")}
    path = tmp_path / "pr.yaml"
    path.write_text(json.dumps(data))
    return ConfigFile(data=data, path=path)


def test_r2_per_dimension_matches_sklearn():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(500, 2)) * [1.0, 3.0]
    p = y + rng.normal(size=(500, 2))
    assert np.allclose(r2_per_dimension(p, y), r2_score(y, p, multioutput="raw_values"))


def test_per_monkey_groups_sessions_by_file_name():
    per = {"indy_20160622_01": {"r2": 0.5}, "loco_20170210_03": {"r2": 0.7},
           "indy_20160630_01": {"r2": 0.7}, "loco_20170215_02": {"r2": 0.8},
           "loco_20170301_05": {"r2": 0.9}}
    out = per_monkey(per)
    assert out["indy"]["sessions"] == ["indy_20160622_01", "indy_20160630_01"]
    assert out["indy"]["r2"] == pytest.approx(0.6) and out["indy"]["r2_se"] == pytest.approx(0.1)
    assert out["loco"]["r2"] == pytest.approx(0.8) and out["loco"]["r2_se"] == pytest.approx(
        0.1 / math.sqrt(3))


def test_task_scores_sessions_and_reuses_checkpoints(tmp_path):
    task = tasks.get("primate_reaching")
    cfg = config(tmp_path)
    (res,) = plan_and_run(task, cfg, tmp_path / "out", quiet=True)
    per = res.details["per_session"]
    r2s = [per[s]["r2"] for s in SESSIONS]
    assert res["r2"] == pytest.approx(np.mean(r2s))
    assert res.scores["r2"].error == pytest.approx(np.std(r2s, ddof=1) / math.sqrt(2))
    # per monkey (from the file names), one session each here: its R², no error
    assert res.details["per_monkey"]["indy"]["sessions"] == ["indy_20160622_01"]
    assert res["r2[indy]"] == per["indy_20160622_01"]["r2"] and res.scores["r2[indy]"].error is None
    assert res["r2[loco]"] == per["loco_20170210_03"]["r2"]
    assert res["synaptic_operations"]["Dense"] == pytest.approx((5 * 96 * 2 + 5 * 192 * 2) / 2)
    for session in SESSIONS:  # the same R² from the checkpoint, streamed by hand, with sklearn
        entry = per[session]
        assert entry["trained_now"] and entry["samples"] == len(PrimateReaching(tmp_path / "data", session))
        model = models.get("ridge_decoder").build(models.get("ridge_decoder").options_model(),
                                                  entry["channels"])
        model.load_state_dict(torch.load(entry["checkpoint"], weights_only=True)["state_dict"])
        test = PrimateReaching(tmp_path / "data", session, "test")
        with torch.no_grad():
            pred = torch.cat([model(x)[0] for x, _, _ in test.stream(37)]).numpy()
        y = test.arrays()[1]
        assert [entry["r2_x"], entry["r2_y"]] == pytest.approx(
            r2_score(y, pred, multioutput="raw_values").tolist(), abs=1e-5)
        # resetting every chunk loses the history: a different (worse) decoder
        model.reset_state()
        with torch.no_grad():
            chopped = []
            for x, _, _ in test.stream(37):
                model.reset_state()
                chopped.append(model(x)[0])
        assert not np.allclose(torch.cat(chopped).numpy(), pred)
    (again,) = plan_and_run(task, cfg, tmp_path / "out2", quiet=True)
    assert not any(e["trained_now"] for e in again.details["per_session"].values())
    assert again["r2"] == res["r2"]


def test_config_errors(tmp_path):
    task = tasks.get("primate_reaching")
    with pytest.raises(ConfigError, match="streaming decoder"):
        task.plan(config(tmp_path, name="svm"), RunContext.build())
    with pytest.raises(ConfigError, match="lags"):
        task.plan(config(tmp_path, name="ridge_decoder", options={"lags": 0}), RunContext.build())
    cfg = config(tmp_path)
    cfg.data["data"]["surrogate"] = None
    with pytest.raises(ConfigError, match="no such file"):
        task.plan(cfg, RunContext.build())
