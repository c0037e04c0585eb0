"""Hostile inputs, round three (issue 41, part b): writers never replace what they did not
write (export, train, generators), ``compare`` reads the writer's own non-finite strings as
numbers, a user's model file that exits or returns lazy layers is a clear error, and a
results file is portable (artefacts relative to it) and type-checked on read."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from neuromark.cli import main
from neuromark.data.entry import synthesize_into
from neuromark.errors import DataError
from neuromark.identity import BenchmarkIdentity, model_identity
from neuromark.registry import datasets
from neuromark.report.compare import compare
from neuromark.report.runs import read_runs, run_flags
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskPlan

MY_NET = '''\
import sys
import torch
from torch import nn


def build(hidden: int = 4) -> nn.Module:
    return nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 2))


def leaves():
    sys.exit(0)


def interrupted():
    raise KeyboardInterrupt


def lazy():
    return nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.Linear(4, 2))


class Quitter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        sys.exit(0)


def quits_in_forward():
    return Quitter()
'''


def _rows(split: str = "test"):
    signs = np.random.default_rng(0).integers(0, 2, 12)
    return [(torch.tensor([2.0 * float(s) - 1.0, 0.0, 0.0]), int(s)) for s in signs]


@pytest.fixture
def rows(monkeypatch):
    monkeypatch.setitem(datasets._entries, "toy_rows", _rows)


def _config(folder, factory="my_net.py:build", checkpoint=True):
    """``folder/run.yaml``: a python model from ``my_net.py`` on 12 toy rows, with the
    factory's state_dict as ``weights.pt`` when ``checkpoint``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "my_net.py").write_text(MY_NET)
    if checkpoint:
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
        torch.save(net.state_dict(), folder / "weights.pt")
    (folder / "run.yaml").write_text(
        "task: classification\nbenchmark: {id: toy-rows, version: '1.0'}\n"
        "dataset: {name: toy_rows}\nmodel:\n  name: python\n  options:\n"
        f"    factory: {factory}\n    kwargs: {{}}\n"
        + ("  checkpoint: weights.pt\n" if checkpoint else "") + "  label: my-net\n"
        "eval: {batch_size: 5, postprocessor: argmax, metrics: [classification_accuracy, "
        "footprint]}\n")
    return folder / "run.yaml"


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


# --- writers never replace what they did not write --------------------------------------

def test_export_refuses_to_replace_its_own_config(rows, tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    config = _config(tmp_path / "p")
    before = _digests(tmp_path / "p")
    for target, what in (("run.yaml", "the config"),
                         ("weights.pt", "the config's model.checkpoint"),
                         ("my_net.py", "the config's model file")):
        for extra in ([], ["--overwrite"]):
            code = main(["export", "onnx", str(config), str(tmp_path / "p" / target), "--quiet",
                         *extra])
            err = capsys.readouterr().err
            assert code == 1  # with or without --overwrite: an input is never replaced
            assert f"is {what}; neuromark never writes over its own inputs" in err
    assert _digests(tmp_path / "p") == before


def test_export_refuses_an_existing_file_unless_overwrite(rows, tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    config = _config(tmp_path / "p")
    mine = tmp_path / "mine.onnx"
    mine.write_text("my notes")
    assert main(["export", "onnx", str(config), str(mine), "--quiet"]) == 1
    assert "the file exists; it is not replaced" in capsys.readouterr().err
    assert mine.read_text() == "my notes"
    (tmp_path / "mine.onnx.tmp").write_text("also mine")  # the old fixed temp name
    assert main(["export", "onnx", str(config), str(mine), "--quiet", "--overwrite"]) == 0
    assert mine.read_bytes() != b"my notes"
    assert (tmp_path / "mine.onnx.tmp").read_text() == "also mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.onnx", "mine.onnx.tmp", "p"]
    assert oct(mine.stat().st_mode & 0o777) != oct(0o600)  # the usual mode, not mkstemp's


def test_export_output_folder_missing_or_unwritable_is_named(rows, tmp_path, capsys,
                                                             monkeypatch):
    config = _config(tmp_path / "p")
    assert main(["export", "onnx", str(config), str(tmp_path / "nope" / "m.onnx"),
                 "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"its folder {tmp_path / 'nope'} does not exist" in err and "traced" not in err
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access  # root may write anywhere: the folder's answer is made a "no"
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p) != locked and real_access(p, mode))
    assert main(["export", "onnx", str(config), str(locked / "m.onnx"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"its folder {locked} is not writable" in err and "traced" not in err
    assert list(locked.iterdir()) == []


def test_export_of_a_python_model_uses_its_own_checkpoint(rows, tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    config = _config(tmp_path / "p")
    out = tmp_path / "net.onnx"
    assert main(["export", "onnx", str(config), str(out), "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["input_shape"] == [5, 3] and report["outputs"] == [[5, 2]]
    assert report["max_abs_diff"] <= 1e-5 and out.is_file()


def test_train_refuses_an_existing_out_file_and_never_the_config(rows, tmp_path, capsys):
    config = _config(tmp_path / "p")
    before = _digests(tmp_path / "p")
    assert main(["train", str(config), "--out", str(config), "--overwrite", "--quiet"]) == 1
    assert "is the config; neuromark never writes over its own inputs" in capsys.readouterr().err
    other = tmp_path / "other.pt"
    other.write_bytes(b"not mine to replace")
    assert main(["train", str(config), "--out", str(other), "--quiet"]) == 1
    assert "the file exists; it is not replaced" in capsys.readouterr().err
    assert other.read_bytes() == b"not mine to replace" and _digests(tmp_path / "p") == before


def test_generator_never_deletes_a_folder_it_did_not_create(tmp_path):
    root = tmp_path / "corpus"
    users = tmp_path / ".corpus.partial"  # the name the generator once used for itself
    users.mkdir()
    (users / "thesis.tex").write_text("years of work")

    def write(folder):
        (folder / "a.txt").write_text("generated")

    synthesize_into(root, {"seed": 1}, write, what="toy")
    assert (users / "thesis.tex").read_text() == "years of work"
    assert (root / "a.txt").read_text() == "generated"

    def fails(folder):
        (folder / "half.txt").write_text("half")
        raise RuntimeError("generator failed")

    with pytest.raises(RuntimeError):
        synthesize_into(tmp_path / "other", {"seed": 2}, fails, what="toy")
    # its own temporary folder is gone, the user's is not, nothing else appeared
    assert sorted(p.name for p in tmp_path.iterdir()) == [".corpus.partial", "corpus"]
    assert (users / "thesis.tex").read_text() == "years of work"


# --- compare reads the writer's own non-finite strings as numbers ------------------------

def _run(root, name, acc, label="m"):
    folder = root / name
    folder.mkdir(parents=True)
    Results(scores={"classification_accuracy": Score(acc, 0.01), "MSE": Score(0.5)},
            benchmark=BenchmarkIdentity("toy-bench"), config={"task": "toy"},
            model=model_identity("rsnn", {}, None, label)).save(folder / "toy.json")
    return folder


def test_compare_reads_stored_nan_strings_as_numbers(tmp_path, capsys):
    a, b = _run(tmp_path, "a", float("nan")), _run(tmp_path, "b", 0.5)
    stored = json.loads((a / "toy.json").read_text())["scores"]["classification_accuracy"]
    assert stored["value"] == "NaN"  # the writer keeps strict JSON
    ra, rb = read_runs([a, b])
    rows = {d.name: d for d in compare(ra, rb)}
    assert rows["classification_accuracy"].verdict == "IMPOSSIBLE in A: nan is not a finite number"
    assert "classification_accuracy: impossible value: nan is not a finite number" \
        in run_flags(ra.results)
    for text, shown in (("Infinity", "inf"), ("-Infinity", "-inf")):
        c = _run(tmp_path, f"c{text}", float(text.replace("Infinity", "inf")))
        rc = read_runs([c])[0]
        verdicts = {d.name: d.verdict for d in compare(rc, rb)}
        assert verdicts["classification_accuracy"] == f"IMPOSSIBLE in A: {shown} is not a finite number"
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "differs (text)" not in out and "IMPOSSIBLE in A" in out


# --- exits and lazy layers from a user's model file --------------------------------------

@pytest.mark.parametrize("factory, said", [
    ("my_net.py:leaves", "called sys.exit(0) (at my_net.py:11)"),
    ("my_net.py:interrupted", "raised KeyboardInterrupt (at my_net.py:15)"),
])
def test_factory_sys_exit_is_reported_non_zero(rows, tmp_path, capsys, factory, said):
    config = _config(tmp_path / "p", factory=factory, checkpoint=False)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"run.yaml:7: model.options.factory: the model factory {factory.split(':')[0]}:" in err
    assert said in err and "nothing was evaluated" in err
    assert not (tmp_path / "out").exists()


def test_sys_exit_in_a_models_forward_is_an_error_not_exit_0(rows, tmp_path, capsys):
    config = _config(tmp_path / "p", factory="my_net.py:quits_in_forward", checkpoint=False)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "called sys.exit(0) and was stopped there; an exit is an error here" in err
    assert not list((tmp_path / "out").glob("*.json"))  # no results claimed


def test_lazy_parameters_are_a_clear_error(rows, tmp_path, capsys):
    config = _config(tmp_path / "p", factory="my_net.py:lazy", checkpoint=False)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "returned a model with uninitialised lazy parameters (0.weight, 0.bias" in err
    assert "run.yaml:7" in err and "Traceback" not in err


# --- portable results, type-checked on read ----------------------------------------------

def _with_plot(folder, name="toy.json", artefact=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "entry").mkdir(exist_ok=True)
    (folder / "entry" / "plot.png").write_bytes(folder.name.encode())
    res = Results(scores={"MSE": Score(0.5)}, benchmark=BenchmarkIdentity("toy-bench"),
                  model=model_identity("rsnn", {}, None, folder.name))
    res.artefacts.append(str(artefact or (folder / "entry" / "plot.png").absolute()))
    return res.save(folder / name)


def test_artefacts_are_stored_relative_to_the_results_file(tmp_path):
    path = _with_plot(tmp_path / "run")
    assert json.loads(path.read_text())["artefacts"] == ["entry/plot.png"]
    shutil.move(tmp_path / "run", tmp_path / "moved")
    files = Results.load(tmp_path / "moved" / "toy.json").artefact_files()
    assert files == [(tmp_path / "moved" / "entry" / "plot.png").absolute()]
    assert files[0].read_bytes() == b"run"


def test_old_absolute_artefact_paths_resolve_in_the_moved_folder(tmp_path):
    path = _with_plot(tmp_path / "run")
    data = json.loads(path.read_text())
    data["artefacts"] = [str(tmp_path / "run" / "entry" / "plot.png"),
                         "/elsewhere/gone/never.png", "../run/entry/plot.png"]
    path.write_text(json.dumps(data))
    shutil.move(tmp_path / "run", tmp_path / "moved")
    _with_plot(tmp_path / "run")  # another run where the old one was: never read for it
    res = Results.load(tmp_path / "moved" / "toy.json")
    assert res.artefacts == ["entry/plot.png"]
    assert res.artefact_files()[0].read_bytes() == b"run" and \
        res.artefact_files()[0].parent.parent.name == "moved"
    assert any("/elsewhere/gone/never.png: not in this run's folder" in f for f in res.flags)
    assert any("../run/entry/plot.png: not in this run's folder" in f for f in res.flags)


def test_report_of_moved_run_folder_shows_its_own_plots(tmp_path, capsys):
    pytest.importorskip("mlperf_loadgen")
    config = tmp_path / "cfg.yaml"
    config.write_text("task: system\nbenchmark: {id: toy}\nsut:\n  name: sleep\n  options: "
                      "{sleep_s: 0.0002, samples: 4}\nloadgen:\n  min_query_count: 8\n"
                      "  min_duration_s: 0\n")
    assert main(["run", str(config), "--out", str(tmp_path / "o"), "--quiet",
                 "--allow-invalid"]) == 0
    stored = json.loads(next((tmp_path / "o").glob("toy*.json")).read_text())["artefacts"]
    assert stored and all(not os.path.isabs(a) for a in stored)
    shutil.move(tmp_path / "o", tmp_path / "moved")
    # a new run where the old folder was, its plot made different on purpose
    assert main(["run", str(config), "--out", str(tmp_path / "o"), "--quiet",
                 "--allow-invalid"]) == 0
    (tmp_path / "o" / "cfg" / "latency.png").write_bytes(b"another run's plot")
    capsys.readouterr()
    assert main(["report", str(tmp_path / "moved"), "--out", str(tmp_path / "sub")]) == 0
    copied = next((tmp_path / "sub").glob("*_latency.png"))
    assert copied.read_bytes() == (tmp_path / "moved" / "cfg" / "latency.png").read_bytes()


@pytest.mark.parametrize("field, value, said", [
    ("flags", "diverged", "flags: must be a list of texts, got text"),
    ("flags", ["ok", 3], "flags[1]: must be a text, got int"),
    ("artefacts", "plot.png", "artefacts: must be a list of texts, got text"),
    ("details", [], "details: must be an object, got list"),
    ("details", {"flags": "diverged"}, "details.flags: must be a list of texts (or a task's "
                                       "object of named conditions), got text"),
    ("model", "rsnn", "model: must be an object or null, got text"),
    ("scores", {"MSE": {"value": [1, 2]}}, "scores.MSE.value: must be a number, a text or an "
                                           "object of them, got list"),
    ("scores", {"MSE": {"error": 0.1}}, "scores.MSE.value: missing"),
    ("scores", {"MSE": {"value": 1, "higher_is_better": "no"}},
     "scores.MSE.higher_is_better: must be true, false or null, got text"),
])
def test_flags_as_string_refused_on_read(tmp_path, capsys, field, value, said):
    good, bad = _run(tmp_path, "good", 0.8), _run(tmp_path, "bad", 0.7, label="b")
    data = json.loads((bad / "toy.json").read_text())
    data[field] = value
    (bad / "toy.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=rf"toy\.json: not a valid results file: .*{re.escape(said)}"):
        Results.load(bad / "toy.json")
    notes: list[str] = []
    assert [r.label for r in read_runs([good, bad], notes)] == ["good"]
    assert any(said in n and str(bad / "toy.json") in n for n in notes)
    assert main(["compare", str(good / "toy.json"), str(bad / "toy.json")]) == 1
    assert said in capsys.readouterr().err
    assert main(["leaderboard", str(good), str(bad), "--out", str(tmp_path / "site")]) == 0
    assert said in capsys.readouterr().err


def test_declared_width_above_the_dtype_refused(tmp_path):
    from neuromark.metrics.functional.precision import declared_bits
    from neuromark.models.torch_model import TorchModel

    net = torch.nn.Sequential(torch.nn.Linear(3, 2))
    with pytest.raises(ValueError, match=r"weight_bits\['0.weight'\] = 33: wider than its dtype "
                                         r"torch.float32 \(32 bits\)"):
        declared_bits(TorchModel(net, weight_bits={"0.weight": 33}))
    assert declared_bits(TorchModel(net, weight_bits={"0.weight": 32}))["0.weight"][0] == 32
    # on read: a results file declaring 33 bits for a float32 tensor, or 0 or 65 bits
    path = _run(tmp_path, "r", 0.8) / "toy.json"
    for entry, said in (({"bits": 33, "source": "declared", "dtype_bits": 32},
                         "33 bits is wider than the tensor's dtype \\(32 bits\\)"),
                        ({"bits": 65, "source": "declared"}, "in 1..64, got 65"),
                        ({"bits": "4", "source": "declared"}, "in 1..64, got '4'")):
        data = json.loads(path.read_text())
        data["scores"]["footprint"] = {"value": 8, "raw": {"precision": {"0.weight": entry}}}
        path.write_text(json.dumps(data))
        with pytest.raises(DataError, match=rf"scores\.footprint\.raw\.precision\.0\.weight\.bits: "
                                            rf".*{said}"):
            Results.load(path)


# --- errors name the right file and entry ------------------------------------------------

def test_seed_key_error_names_the_suite_entry_that_set_it(rows, tmp_path, capsys):
    config = _config(tmp_path / "p")
    suite = tmp_path / "p" / "suite.yaml"
    suite.write_text("suite: seeds\nentries:\n  - {config: run.yaml, seeds: [0, 1], "
                     "key: eval.seed}\n")
    assert main(["run", str(suite), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{suite}:3 (this suite entry's seeds set eval.seed in {config}): eval.seed: " \
           "unknown key" in err


DOUBLES = '''\
import torch
from torch import nn


def build():
    torch.set_default_dtype(torch.float64)
    return nn.Linear(3, 2)
'''


def test_one_entrys_default_dtype_change_is_blamed_on_that_entry(rows, tmp_path, capsys):
    first = _config(tmp_path / "a", factory="doubles.py:build", checkpoint=False)
    (tmp_path / "a" / "doubles.py").write_text(DOUBLES)
    second = _config(tmp_path / "b", checkpoint=False)
    assert main(["run", str(first), str(second), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{first}:7: model.options.factory: the model factory doubles.py:build(**kwargs) " \
           "changed torch's default dtype from torch.float32 to torch.float64" in err
    assert str(second) not in err and torch.get_default_dtype() == torch.float32


@pytest.mark.parametrize("argv, name, said", [
    (["data", "spoken-digits", "{out}", "--force"], "train.h5",
     "holds train.h5, not written by this generator"),
    (["data", "primate-surrogate", "{out}", "--duration", "1", "--force"],
     "loco_20170210_03.mat", "holds loco_20170210_03.mat, not written by this generator"),
    (["data", "primate-surrogate", "{out}", "--duration", "1"], "surrogate.json",
     "surrogate.json: not a surrogate manifest written by neuromark"),
    (["data", "cochlea", "{in}", "{out}/mine.h5"], "mine.h5",
     "mine.h5: the file exists; it is not replaced"),
])
def test_data_writers_never_replace_a_users_file(tmp_path, capsys, argv, name, said):
    out, given = tmp_path / "out", tmp_path / "in"
    out.mkdir()
    given.mkdir()
    (out / name).write_bytes(b"the user's own file")
    args = [a.replace("{out}", str(out)).replace("{in}", str(given)) for a in argv]
    assert main(args) == 1
    assert said in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [name]
    assert (out / name).read_bytes() == b"the user's own file"


def test_report_out_never_replaces_a_users_submission_or_plots(tmp_path, capsys):
    results = _run(tmp_path, "r", 0.8)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "submission.md").write_text("# my own notes\n")
    assert main(["report", str(results), "--out", str(mine)]) == 1
    assert "its submission.md was not written by neuromark report" in capsys.readouterr().err
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "workflow.png").write_bytes(b"my diagram")
    assert main(["report", str(results), "--out", str(plots)]) == 1
    assert "holds workflow.png and no report of neuromark report" in capsys.readouterr().err
    assert (mine / "submission.md").read_text() == "# my own notes\n"
    assert [p.name for p in plots.iterdir()] == ["workflow.png"]


class _DoublesTask:
    """A plugin task whose run changes torch's default dtype (as careless plugin code may)."""

    name = "t-doubles"
    placement = "unit"

    def plan(self, config, ctx):
        return TaskPlan(config, config.data)

    def run(self, plan, ctx):
        torch.set_default_dtype(torch.float64)
        return [Results({"MSE": Score(0.5)}, BenchmarkIdentity("doubles"), config=plan.config.data)]


def test_a_plugin_entrys_dtype_change_is_blamed_on_that_entry(rows, tmp_path, capsys,
                                                              monkeypatch):
    from neuromark.registry import tasks

    monkeypatch.setitem(tasks._entries, "t-doubles", _DoublesTask())
    first = tmp_path / "doubles.yaml"
    first.write_text("task: t-doubles\n")
    second = _config(tmp_path / "b", checkpoint=False)
    assert main(["run", str(first), str(second), "--out", str(tmp_path / "out"),
                 "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{first}: this suite entry changed torch's default dtype from torch.float32 to " \
           "torch.float64" in err
    assert torch.get_default_dtype() == torch.float32
