"""Training and checkpoints (issue 27, point 6): the ModelFamily protocol, one checkpoint
cache (header, recipe hash, replacement rule) for every trainable family, old checkpoints
still reused, `neuromark train` through the task protocol, models from the registry."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch
from test_detection_task import DET_TINY as DET_CONFIG
from test_shd_snn import config_text, make_corpus

from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError, DataError
from neuromark.registry import models
from neuromark.tasks.base import plan_and_run
from neuromark.training.checkpoints import prepare, read_checkpoint, recipe_hash
from neuromark.training.family import ModelFamily, TrainedModule
from neuromark.training.recipe import TrainRecipe


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ToyFamily:
    """A family whose 'training' is a seeded Linear layer; counts its fits."""

    name = "toy"
    options_model = dict
    train_model = TrainRecipe
    spiking = False
    tasks = ("classification",)

    def __init__(self) -> None:
        self.fits = 0

    def fit(self, options, train, data, classes, *, quiet=True, label="", device="cpu"):
        self.fits += 1
        torch.manual_seed(train.seed)
        return TrainedModule("toy", {"n": 2}, torch.nn.Linear(2, 1)), {"loss": [1.0]}

    def load(self, path):
        payload = read_checkpoint(path, ("toy",), what="toy")
        net = torch.nn.Linear(**{"in_features": payload["config"]["n"], "out_features": 1})
        net.load_state_dict(payload["state_dict"])
        return net.eval(), payload["meta"]


def _prepare(family, tmp_path, seed=0, **kwargs):
    train = TrainRecipe(seed=seed)
    recipe = {"model": "toy", "train": train.recipe()}
    return prepare(family, tmp_path / "toy.pt", recipe, tmp_path / "data.bin",
                   lambda: family.fit({}, train, None, 1), **kwargs)


@pytest.fixture
def toy(tmp_path):
    (tmp_path / "data.bin").write_bytes(b"training bytes")
    return ToyFamily()


def test_toy_family_is_a_model_family():
    assert isinstance(ToyFamily(), ModelFamily)
    assert not isinstance(object(), ModelFamily)


def test_same_recipe_is_reused(tmp_path, toy, capsys):
    first = _prepare(toy, tmp_path)
    assert first.trained and toy.fits == 1
    payload = torch.load(tmp_path / "toy.pt", weights_only=True)
    assert set(payload) == {"format", "kind", "config", "state_dict", "meta"} and payload["format"] == 1
    assert payload["kind"] == "toy" and payload["meta"]["recipe"]["train"]["seed"] == 0
    assert payload["meta"]["device"] == "cpu" and "torch_version" in payload["meta"]
    stamp = sha(tmp_path / "toy.pt")
    again = _prepare(toy, tmp_path)
    assert not again.trained and toy.fits == 1 and sha(tmp_path / "toy.pt") == stamp
    assert "replacing" not in capsys.readouterr().err
    (tmp_path / "data.bin").write_bytes(b"other bytes")  # the training data enter the hash
    assert _prepare(toy, tmp_path).trained and toy.fits == 2


def test_other_recipe_is_replaced_with_one_line_saying_why(tmp_path, toy, capsys):
    _prepare(toy, tmp_path)
    capsys.readouterr()
    assert _prepare(toy, tmp_path, seed=1).trained and toy.fits == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"replacing neuromark checkpoint {tmp_path / 'toy.pt'}")
    assert "its recipe differs (train.seed)" in err[0] and "never replaced" in err[0]
    assert _prepare(toy, tmp_path, seed=1, retrain=True).trained  # `neuromark train`
    assert "`neuromark train` retrains it" in capsys.readouterr().err


def test_a_foreign_file_is_never_replaced(tmp_path, toy):
    for content in ({"weight": torch.ones(2)}, {"format": 2, "kind": "toy"}):
        torch.save(content, tmp_path / "toy.pt")
        before = sha(tmp_path / "toy.pt")
        with pytest.raises(DataError, match=r"toy\.pt: not a neuromark checkpoint .*never overwrites"):
            _prepare(toy, tmp_path, retrain=True)
        assert sha(tmp_path / "toy.pt") == before and toy.fits == 0


def test_train_if_missing_false(tmp_path, toy):
    with pytest.raises(DataError, match=r"toy\.pt: no such checkpoint and train_if_missing is false; "
                                        r"run `neuromark train CONFIG`"):
        _prepare(toy, tmp_path, train_if_missing=False)
    _prepare(toy, tmp_path)
    before = sha(tmp_path / "toy.pt")
    with pytest.raises(DataError, match=r"different recipe or data \(train\.seed\); run `neuromark train"):
        _prepare(toy, tmp_path, seed=5, train_if_missing=False)
    assert sha(tmp_path / "toy.pt") == before and toy.fits == 1


def test_recipe_hash_by_hand(tmp_path):
    recipe = {"b": 1, "a": [1.5, "x"]}
    head = json.dumps(recipe, sort_keys=True).encode()
    (tmp_path / "f1").write_bytes(b"one")
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "z").write_bytes(b"zz")
    (tmp_path / "d" / "sub" / "a").write_bytes(b"aa")

    def h(data: bytes) -> str:
        return hashlib.sha256(head + data).hexdigest()

    assert recipe_hash(recipe, tmp_path / "f1") == h(b"one")  # classification: a file
    assert recipe_hash(recipe, tmp_path / "d") == h(b"sub/a\0aaz\0zz")  # DVS Gesture: a folder
    assert recipe_hash(recipe, [tmp_path / "f1", tmp_path / "d" / "z"]) == h(b"onezz")  # detector
    assert recipe_hash(recipe, [b"xy", b"z"]) == h(b"xyz")  # FSCIL: tensors' bytes


def test_every_trainable_family_is_a_model_family():
    names = ("snn", "rsnn", "lstm", "svm", "gsc_m5", "gsc_snn", "event_detector")
    for name in names:
        assert isinstance(models.get(name), ModelFamily), name
    assert not isinstance(models.get("keyword_m5"), ModelFamily)  # a plain factory
    assert models.get("event_detector").tasks == ("detection",)


# --- old checkpoints: the hash of the code before the shared cache ----------------------------


def test_classification_checkpoint_keeps_the_old_hash(tmp_path):
    """The old definition, by hand: sha256(json.dumps(recipe, sort_keys=True) + the training
    file's bytes), recipe = dataset, model (options validated), train.recipe()."""
    from neuromark.networks.spike_classifiers import SpikeModelOptions, TrainSettings
    from neuromark.tasks.classification import TASK

    make_corpus(tmp_path)
    config = parse_yaml(config_text(tmp_path, "svm"), tmp_path / "c.yaml")
    [first] = plan_and_run(TASK, config, tmp_path / "out", quiet=True)
    options = {"train": f"{tmp_path}/train.h5", "test": f"{tmp_path}/test.h5", "dt_us": 20000,
               "t_max_us": 200000, "pool": 10}
    train = TrainSettings(epochs=3, batch_size=10, lr=0.02, seed=3).model_dump(exclude={"deterministic"})
    recipe = {"dataset": {"name": "spike_files", "options": options},
              "model": {"name": "svm", "options": SpikeModelOptions(hidden=16).model_dump()},
              "train": train}
    old = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()
                         + (tmp_path / "train.h5").read_bytes()).hexdigest()
    payload = torch.load(tmp_path / "svm.pt", weights_only=True)
    assert payload["meta"]["recipe_hash"] == old and payload["format"] == 1
    [again] = plan_and_run(TASK, config, tmp_path / "out", quiet=True)
    assert again.details["trained_now"] is False


@pytest.mark.parametrize("old", [
    {"format": "neuromark-fscil-1", "recipe_hash": "0" * 64, "meta": {}},
    {"format": "neuromark-primate-decoder-1", "recipe": "{}", "train_seconds": 1.5},
])
def test_a_checkpoint_of_a_retired_header_is_retrained_never_read(tmp_path, toy, capsys, old):
    """neuromark's checkpoints of before 0.2.0 (RETIRED_FORMATS) are its own: a run replaces
    them by training anew, saying why; with train_if_missing false, an error names the
    command; read_checkpoint never loads one as something it is not."""
    torch.save({**old, "state_dict": {"weight": torch.ones(1, 2), "bias": torch.zeros(1)}},
               tmp_path / "toy.pt")
    with pytest.raises(DataError, match=rf"toy\.pt: a checkpoint of neuromark before 0\.2\.0 "
                                        rf"\(header '{old['format']}'\), no longer read; run "
                                        r"`neuromark train CONFIG` to retrain it"):
        read_checkpoint(tmp_path / "toy.pt", ("toy",), what="toy")
    with pytest.raises(DataError, match=r"checkpoint does not load: .*before 0\.2\.0.*; run "
                                        r"`neuromark train CONFIG`"):
        _prepare(toy, tmp_path, train_if_missing=False)
    assert toy.fits == 0
    prepared = _prepare(toy, tmp_path)
    assert prepared.trained and toy.fits == 1
    err = capsys.readouterr().err
    assert f"replacing neuromark checkpoint {tmp_path / 'toy.pt'}: it does not load" in err
    assert torch.load(tmp_path / "toy.pt", weights_only=True)["format"] == 1
    assert not _prepare(toy, tmp_path).trained  # the new one is reused


# --- `neuromark train` through the task protocol ---------------------------------------------


def test_cli_train_detection_then_run_reuses(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    cfg = tmp_path / "det.yaml"
    cfg.write_text(DET_CONFIG)
    assert main(["train", str(cfg), "--quiet"]) == 0
    out = capsys.readouterr().out
    target = tmp_path / "cache" / "det_tiny.pt"
    assert "trained event_detector on 1 files" in out and str(target) in out
    assert torch.load(target, weights_only=True)["kind"] == "event_detector"
    assert main(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = json.loads((tmp_path / "out" / "det-tiny--event_detector.json").read_text())
    assert res["details"]["trained_now"] is False
    weights = torch.load(target, weights_only=True)["state_dict"]
    assert main(["train", str(cfg), "--quiet"]) == 0  # retrains, saying why
    assert "`neuromark train` retrains it" in capsys.readouterr().err
    again = torch.load(target, weights_only=True)["state_dict"]
    assert all(torch.equal(weights[k], again[k]) for k in weights)  # seeded: the same weights


def test_cli_train_fscil(tmp_path, capsys):
    from test_fscil import FSCIL_TINY, _tiny_corpus

    _tiny_corpus(tmp_path / "data")
    (tmp_path / "c.yaml").write_text(FSCIL_TINY + """train: {epochs: 1, batch_size: 4, lr: 0.01}
""")
    assert main(["train", str(tmp_path / "c.yaml"), "--quiet", "--out", str(tmp_path / "x.pt")]) == 0
    out = capsys.readouterr().out
    assert "trained keyword_m5 in" in out and "x.pt" in out and not (tmp_path / "m5.pt").exists()
    payload = torch.load(tmp_path / "x.pt", weights_only=True)
    assert payload["kind"] == "keyword_m5" and payload["format"] == 1


def test_cli_train_explains_tasks_that_train_inside_the_run(tmp_path, capsys):
    cfg = tmp_path / "mg.yaml"
    cfg.write_text("task: mackey_glass\nmodels:\n  - {name: esn}\n")
    assert main(["train", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert "task 'mackey_glass' has no checkpoint" in err and "each instance trains" in err


# --- models from the registry ------------------------------------------------------------------


def test_mackey_glass_model_names_come_from_the_registry(tmp_path):
    from neuromark.benchmarks.mackey_glass.task import TASK

    needs = r"is registered but is no forecaster \(it needs params_model and build\(params, seed\)\)"
    for name, problem in (("gru", "is no registered model"), ("svm", needs)):
        (tmp_path / "mg.yaml").write_text(f"task: mackey_glass\nmodels:\n  - {{name: {name}}}\n")
        with pytest.raises(ConfigError, match=rf"mg\.yaml:3: models\.0\.name: model '{name}' {problem}; "
                                              r"the Mackey-Glass forecasters: esn, lstm"):
            TASK.plan(parse_yaml((tmp_path / "mg.yaml").read_text(), tmp_path / "mg.yaml"),
                      RunContext.build())


def test_a_family_of_another_task_is_a_clear_error(tmp_path):
    from neuromark.benchmarks.event_detection.task import TASK

    cfg = parse_yaml(DET_CONFIG.replace("name: event_detector, options: {width: 4}", "name: snn"),
                     tmp_path / "det.yaml")
    with pytest.raises(ConfigError, match=r"det\.yaml:\d+: model\.name: 'snn' is a model family of "
                                          r"classification; it does not train on detection data "
                                          r"\(the families of detection: event_detector"):
        TASK.plan(cfg, RunContext.build())
