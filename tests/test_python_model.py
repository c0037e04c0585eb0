"""``model: {name: python, options: {factory: "my_net.py:build", kwargs}, checkpoint}``
(issue 33, point 1): a user's own model file beside the config, checked at plan time,
loaded under a private name, recorded in the results."""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest
import torch

from neuromark.cli import main
from neuromark.config import load_config
from neuromark.context import RunContext
from neuromark.errors import ConfigError, DataError
from neuromark.models.python_model import MODULE_PREFIX, PYTHON_MODEL
from neuromark.registry import datasets, models
from neuromark.results import Results
from neuromark.tasks.classification import TASK

MY_NET = '''\
"""A user's plain MLP: 3 inputs -> hidden ReLU units -> 2 classes."""
import torch
from torch import nn

WIDTH = 3


def build(hidden: int, zero: bool = True) -> nn.Module:
    net = nn.Sequential(nn.Linear(WIDTH, hidden), nn.ReLU(), nn.Linear(hidden, 2))
    if zero:  # the checkpoint must bring the weights
        for p in net.parameters():
            torch.nn.init.zeros_(p)
    return net


def broken(hidden: int = 4):
    raise ValueError(f"no {hidden}-wide nets today")


def not_a_model():
    return [1, 2]
'''


def _rows(split: str = "test"):
    """12 samples: the first feature is -1 (class 0) or +1 (class 1)."""
    signs = np.random.default_rng(0).integers(0, 2, 12)
    return [(torch.tensor([2.0 * float(s) - 1.0, 0.0, 0.0]), int(s)) for s in signs]


def _weights(hidden: int) -> dict[str, torch.Tensor]:
    """Hand-set weights: hidden 0 = relu(x0), hidden 1 = relu(-x0); class 1 reads hidden 0,
    class 0 reads hidden 1, so every sample of ``_rows`` is classified right."""
    w1, w2 = torch.zeros(hidden, 3), torch.zeros(2, hidden)
    w1[0, 0], w1[1, 0], w2[1, 0], w2[0, 1] = 1.0, -1.0, 1.0, 1.0
    return {"0.weight": w1, "0.bias": torch.zeros(hidden), "2.weight": w2, "2.bias": torch.zeros(2)}


def _config(folder, factory="my_net.py:build", kwargs="{hidden: 4}", extra="", bench="toy-rows",
            source=MY_NET, checkpoint="weights.pt"):
    """``folder/run.yaml`` naming ``factory`` (line 7) with ``kwargs`` (line 8), then
    ``extra`` lines and ``checkpoint`` (None: none); writes ``my_net.py`` and the hidden-4
    ``weights.pt`` beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "my_net.py").write_text(source)
    torch.save(_weights(4), folder / "weights.pt")
    (folder / "run.yaml").write_text(
        f"task: classification\nbenchmark: {{id: {bench}, version: '1.0'}}\n"
        "dataset: {name: toy_rows}\nmodel:\n  name: python\n  options:\n"
        f"    factory: {factory}\n    kwargs: {kwargs}\n{extra}"
        + (f"  checkpoint: {checkpoint}\n" if checkpoint else "") + "  label: my-net\n"
        "eval: {batch_size: 5, postprocessor: argmax, metrics: [classification_accuracy, "
        "footprint]}\n")
    return folder / "run.yaml"


@pytest.fixture
def rows(monkeypatch):
    monkeypatch.setitem(datasets._entries, "toy_rows", _rows)


def _plan(path):
    return TASK.plan(load_config(path), RunContext.build(quiet=True))


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_users_model_from_a_config(rows, tmp_path, monkeypatch):
    config = _config(tmp_path / "project")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the file resolves from the config's folder, not from here
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = Results.load(tmp_path / "out" / "toy-rows--my-net.json")
    # the checkpoint's hand-set weights classify all 12 (zero weights would tie: class 0 only)
    assert res["classification_accuracy"] == 1.0
    # hidden 4 from kwargs: (3*4 + 4) + (4*2 + 2) = 26 float32 parameters, no state
    assert res["footprint"] == 26 * 4
    assert res.model.name == "python" and res.model.label == "my-net"
    assert res.model.options_digest == hashlib.sha256(
        b'{"factory":"my_net.py:build","kwargs":{"hidden":4}}').hexdigest()
    assert res.model.checkpoint_sha256 == _sha(tmp_path / "project" / "weights.pt")
    source = res.provenance["model_file"]
    assert source["file"] == str(tmp_path / "project" / "my_net.py")
    assert source["sha256"] == _sha(tmp_path / "project" / "my_net.py")
    assert source["function"] == "build" and source["module"].startswith(MODULE_PREFIX)
    # nothing written beside the user's file, and it is not importable as "my_net"
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["my_net.py", "run.yaml",
                                                                        "weights.pt"]
    assert "my_net" not in sys.modules and list(elsewhere.iterdir()) == []


def test_checkpoint_is_read_with_weights_only(rows, tmp_path):
    config = _config(tmp_path)
    torch.save({"0.weight": torch.zeros(4, 3), "note": np.float64(1.0).__class__}, tmp_path / "weights.pt")
    with pytest.raises(DataError, match=r"weights\.pt: refused: it holds pickled Python objects "
                                        r"\(numpy\.float64\)"):
        TASK.run(_plan(config), RunContext.build(quiet=True))


@pytest.mark.parametrize("factory, source, expected", [
    ("nope.py:build", MY_NET, r"model\.options\.factory: .*nope\.py: no such file \(relative paths "
                              r"lie in the config's folder\)"),
    ("my_net.py", MY_NET, r"model\.options\.factory: expected 'FILE\.py:FUNCTION'"),
    ("my_net.txt:build", MY_NET, r"my_net\.txt is not a Python source file"),
    ("my_net.py:buld", MY_NET, r"my_net\.py has no 'buld'; did you mean 'build'\?"),
    ("my_net.py:WIDTH", MY_NET, r"my_net\.py:WIDTH is a int, not callable: expected a function "
                                r"\(or class\) returning a torch\.nn\.Module"),
    ("my_net.py:broken", MY_NET, r"my_net\.py:broken\(\*\*kwargs\) raised ValueError: no 4-wide "
                                 r"nets today \(at my_net\.py:17\)"),
    ("my_net.py:not_a_model", MY_NET, r"my_net\.py:not_a_model\(\*\*kwargs\) returned a "
                                      r"builtins\.list; expected a torch\.nn\.Module or a neuromark "
                                      r"ModelAdapter"),
    ("my_net.py:build", "import torch\nraise RuntimeError('no GPU here')\n",
     r"loading .*my_net\.py failed: RuntimeError: no GPU here \(at my_net\.py:2\)"),
    ("my_net.py:build", "def build(:\n", r"loading .*my_net\.py failed: SyntaxError"),
])
def test_bad_factories_fail_at_plan_naming_file_and_line(rows, tmp_path, factory, source, expected):
    kwargs = "{}" if factory.endswith(("not_a_model", "broken")) else "{hidden: 4}"
    config = _config(tmp_path / "cfg", factory=factory, kwargs=kwargs, source=source)
    with pytest.raises(ConfigError, match=rf"run\.yaml:7: .*{expected}"):
        _plan(config)
    # the command line stops before any work: exit 1, no results folder
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kwargs, extra, expected", [
    ("{hiden: 4}", "", r"run\.yaml:8: model\.options\.kwargs\.hiden: unknown key; did you mean hidden"),
    ("{hidden: four}", "", r"run\.yaml:8: model\.options\.kwargs\.hidden: Input should be a valid "
                           r"integer"),
    ("{}", "", r"model\.options\.kwargs\.hidden: Field required"),
    ("{hidden: 4}", "    kwarg: {}\n", r"run\.yaml:9: model\.options\.kwarg: unknown key; did you "
                                       r"mean kwargs"),
])
def test_kwargs_are_checked_against_the_signature(rows, tmp_path, kwargs, extra, expected):
    with pytest.raises(ConfigError, match=expected):
        _plan(_config(tmp_path, kwargs=kwargs, extra=extra))


def test_missing_checkpoint_fails_at_plan(rows, tmp_path):
    with pytest.raises(ConfigError, match=r"run\.yaml:9: model\.checkpoint: .*gone\.pt: no such file"):
        _plan(_config(tmp_path, checkpoint="gone.pt"))


def test_two_my_net_files_in_two_folders_do_not_collide(rows, tmp_path):
    a = _config(tmp_path / "a", bench="rows-a")
    b = _config(tmp_path / "b", bench="rows-b", source=MY_NET.replace("WIDTH = 3", "WIDTH = 3\nEXTRA = 1"),
                kwargs="{hidden: 8}", checkpoint=None)
    assert main(["run", str(a), str(b), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    ra = Results.load(tmp_path / "out" / "rows-a--my-net.json")
    rb = Results.load(tmp_path / "out" / "rows-b--my-net.json")
    assert ra["footprint"] == 26 * 4 and rb["footprint"] == (3 * 8 + 8 + 8 * 2 + 2) * 4
    assert ra["classification_accuracy"] == 1.0  # a's weights; b's zeros tie on class 0
    assert rb["classification_accuracy"] == sum(t == 0 for _, t in _rows()) / 12
    fa, fb = ra.provenance["model_file"], rb.provenance["model_file"]
    assert fa["module"] != fb["module"] and fa["sha256"] != fb["sha256"]
    assert fa["file"] != fb["file"] and fa["module"] in sys.modules and fb["module"] in sys.modules
    assert sys.modules[fb["module"]].EXTRA == 1 and not hasattr(sys.modules[fa["module"]], "EXTRA")
    # the same file content in two folders still gets two modules (paths differ)
    assert _plan(_config(tmp_path / "c")) is not None
    loaded = [m for m in sys.modules if m.startswith(MODULE_PREFIX) and m.endswith("_my_net")]
    assert len(set(loaded)) >= 3


def test_the_trial_call_leaves_torchs_random_state(rows, tmp_path):
    config = _config(tmp_path, kwargs="{hidden: 4, zero: false}")  # random init at plan time
    torch.manual_seed(7)
    before = torch.get_rng_state()
    _plan(config)
    assert torch.equal(torch.get_rng_state(), before)


def test_unknown_model_names_the_python_option_and_the_plugin_route(rows, tmp_path):
    config = _config(tmp_path)
    config.write_text(config.read_text().replace("name: python", "name: pyhton"))
    with pytest.raises(ConfigError) as info:
        _plan(config)
    text = str(info.value)
    assert "run.yaml:5: model.name: unknown model 'pyhton'; did you mean 'python'" in text
    assert "model: {name: python, options: {factory: 'my_net.py:build'" in text
    assert "'models.NAME' of the group 'neuromark.plugins' (docs/extending.md)" in text
    with pytest.raises(Exception, match=r"did you mean 'python'.*neuromark\.plugins"):
        models.get("pyhton")


def test_python_api_builds_from_an_absolute_path(tmp_path):
    (tmp_path / "my_net.py").write_text(MY_NET)
    net = PYTHON_MODEL(f"{tmp_path / 'my_net.py'}:build", {"hidden": 2})
    assert isinstance(net, torch.nn.Sequential) and net[0].out_features == 2
    with pytest.raises(ConfigError, match=r"model\.options\.kwargs\.hidden: Field required"):
        PYTHON_MODEL(f"{tmp_path / 'my_net.py'}:build")

