"""primate_reaching's decoders on the shared checkpoint cache (issue 27, point 6): the shared
header and recipe hash (byte-identical to the old decoder cache's, whose files are still
reused), reuse on the same recipe, retraining by `neuromark train`, foreign files refused,
the families as ModelFamily entries."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from neuromark.cli import main
from neuromark.config import ConfigFile
from neuromark.errors import ConfigError, DataError
from neuromark.registry import models, tasks
from neuromark.tasks.base import plan_and_run
from neuromark.training.checkpoints import recipe_hash
from neuromark.training.family import ModelFamily, family_for

SESSIONS = ["indy_20160622_01", "loco_20170210_03"]


def config(tmp_path, model=None, **data):
    body = {"task": "primate_reaching", "benchmark": {"id": "pr-ckpt"},
            "data": {"root": str(tmp_path / "data"), "surrogate": {"duration_s": 16, "seed": 1},
                     "sessions": SESSIONS, "chunk": 100, **data},
            "model": model or {"name": "ridge_decoder"}, "checkpoint_dir": str(tmp_path / "ckpt")}
    path = tmp_path / "pr.yaml"
    path.write_text(json.dumps(body))
    return ConfigFile(data=body, path=path)


def old_name(tmp_path, session: str) -> tuple[str, dict]:
    """The old cache's file name and recipe for ridge_decoder's default options, by hand:
    sha256 of the recipe's canonical JSON, the training file in it as its sha256."""
    from neuromark.networks.ridge_decoder import RidgeOptions

    data = (tmp_path / "data" / f"{session}.mat").read_bytes()
    recipe = {"family": "ridge", "options": RidgeOptions().model_dump(),
              "data": {"bin_width": 0.004, "train_ratio": 0.5},
              "file_sha256": hashlib.sha256(data).hexdigest()}
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
    return f"ridge-{session}-{digest[:16]}.pt", recipe


def test_shared_header_same_hash_and_reuse(tmp_path):
    task = tasks.get("primate_reaching")
    (first,) = plan_and_run(task, config(tmp_path), tmp_path / "out", quiet=True)
    for session in SESSIONS:
        entry = first.details["per_session"][session]
        name, recipe = old_name(tmp_path, session)
        assert entry["trained_now"] and entry["checkpoint"] == str(tmp_path / "ckpt" / name)
        payload = torch.load(entry["checkpoint"], weights_only=True)
        assert payload["format"] == 1 and payload["kind"] == "ridge_decoder"
        assert payload["config"]["channels"] == entry["channels"]
        assert payload["meta"]["recipe"] == recipe
        assert payload["meta"]["recipe_hash"] == recipe_hash(recipe, [])
        assert name.endswith(payload["meta"]["recipe_hash"][:16] + ".pt")
    (again,) = plan_and_run(task, config(tmp_path), tmp_path / "out2", quiet=True)
    assert not any(e["trained_now"] for e in again.details["per_session"].values())
    assert again["r2"] == first["r2"]


def test_old_decoder_files_are_retrained(tmp_path, capsys):
    """Files of the header before 0.2.0 ("neuromark-primate-decoder-1", written here as the
    old code did) are no longer read: a run retrains them, saying why, to the same figures
    (seeded), and writes the current header."""
    task = tasks.get("primate_reaching")
    (fresh,) = plan_and_run(task, config(tmp_path), tmp_path / "out", quiet=True)
    for session in SESSIONS:
        path = tmp_path / "ckpt" / old_name(tmp_path, session)[0]
        payload = torch.load(path, weights_only=True)
        torch.save({"format": "neuromark-primate-decoder-1",
                    "recipe": json.dumps(old_name(tmp_path, session)[1]),  # unsorted, as before
                    "state_dict": payload["state_dict"], "train_seconds": 1.5,
                    "device": "cpu", "torch_version": str(torch.__version__)}, path)
    capsys.readouterr()
    (old,) = plan_and_run(task, config(tmp_path), tmp_path / "out2", quiet=True)
    assert [e["trained_now"] for e in old.details["per_session"].values()] == [True, True]
    assert capsys.readouterr().err.count("before 0.2.0 (header 'neuromark-primate-decoder-1')") == 2
    assert old["r2"] == fresh["r2"]
    for session in SESSIONS:
        path = tmp_path / "ckpt" / old_name(tmp_path, session)[0]
        assert torch.load(path, weights_only=True)["format"] == 1


def test_a_foreign_file_is_refused_and_kept(tmp_path):
    task = tasks.get("primate_reaching")
    plan_and_run(task, config(tmp_path, sessions=SESSIONS[:1]), tmp_path / "o", quiet=True)  # writes the data
    path = tmp_path / "ckpt" / old_name(tmp_path, SESSIONS[0])[0]
    torch.save({"weights": torch.zeros(2)}, path)  # the user's own file, at the decoder's path
    before = path.read_bytes()
    with pytest.raises(DataError, match="not a neuromark checkpoint"):
        plan_and_run(task, config(tmp_path, sessions=SESSIONS[:1]), tmp_path / "o2", quiet=True)
    with pytest.raises(DataError, match="never overwrites"):
        task.train(task.plan(config(tmp_path, sessions=SESSIONS[:1]), _ctx()), _ctx())
    assert path.read_bytes() == before


def test_cli_train_then_run_reuses(tmp_path, capsys):
    cfg = config(tmp_path, {"name": "snn2", "options": {"hidden": 8, "iterations": 5}})
    assert main(["train", str(cfg.path), "--quiet"]) == 0
    out = capsys.readouterr().out
    files = sorted((tmp_path / "ckpt").glob("snn2-*.pt"))
    assert len(files) == 2 and all(str(f) in out for f in files) and out.count("trained snn2 on") == 2
    stamps = [f.stat().st_mtime_ns for f in files]
    assert main(["run", str(cfg.path), "--out", str(tmp_path / "res"), "--quiet"]) == 0
    [result] = [json.loads(p.read_text()) for p in (tmp_path / "res").glob("*.json")
                if "per_session" in p.read_text()]
    per = result["details"]["per_session"]
    assert [per[s]["trained_now"] for s in SESSIONS] == [False, False]
    assert sorted(per[s]["checkpoint"] for s in SESSIONS) == [str(f) for f in files]
    assert [f.stat().st_mtime_ns for f in files] == stamps
    assert main(["train", str(cfg.path), "--quiet"]) == 0  # retrains (replaces) both
    assert "`neuromark train` retrains it" in capsys.readouterr().err
    shared = config(tmp_path, {"name": "snn2", "options": {"hidden": 8, "iterations": 5}},
                    sessions=["indy_20160622_01", "indy_20160630_01"], shared_decoder=True)
    assert main(["train", str(shared.path), "--quiet", "--out", str(tmp_path / "elsewhere")]) == 0
    assert len(list((tmp_path / "elsewhere").glob("snn2-shared-*.pt"))) == 1


def test_decoder_families_are_model_families(tmp_path):
    for name in ("ridge_decoder", "ann2d", "snn2"):
        family = models.get(name)
        assert isinstance(family, ModelFamily) and family.tasks == ("primate_reaching",)
        assert family.name == name
    with pytest.raises(ConfigError, match="does not train on classification"):
        family_for(models, "snn2", "classification", "c.yaml")
    with pytest.raises(ConfigError, match="streaming decoder"):
        tasks.get("primate_reaching").plan(config(tmp_path, {"name": "svm"}), _ctx())


def _ctx():
    from neuromark.context import RunContext

    return RunContext(quiet=True)
