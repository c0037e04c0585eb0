"""Benchmark identity vs model identity (issue 27, point 3): the model block's digests by
hand, old results files, file names per (benchmark, label), and a user's model beside a
shipped baseline in one leaderboard table and one ``compare`` output."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest
import torch
from torch import nn

from neuromark.cli import main
from neuromark.errors import ConfigError, DataError
from neuromark.identity import (
    BenchmarkIdentity,
    ModelIdentity,
    derive_model_identity,
    model_identity,
    results_name,
)
from neuromark.report.compare import pair_runs
from neuromark.report.runs import read_runs
from neuromark.results import Results, Score
from neuromark.runner import Benchmark

#: sha256 of the two bytes "{}" and of "abc" (FIPS 180-2, appendix B.1).
SHA_EMPTY_OBJECT = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
SHA_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_model_block_digests_by_hand(tmp_path):
    checkpoint = tmp_path / "w.pt"
    checkpoint.write_bytes(b"abc")
    ident = model_identity("rsnn", {"hidden": 8, "beta": 1.5}, checkpoint)
    # canonical JSON: sorted keys, no spaces
    assert ident.options_digest == hashlib.sha256(b'{"beta":1.5,"hidden":8}').hexdigest()
    assert ident.checkpoint_sha256 == SHA_ABC and ident.checkpoint_short == SHA_ABC[:12]
    assert ident.label == "rsnn" and ident.name == "rsnn"
    bare = model_identity("svm", None, None, "my-svm")
    assert bare.options_digest == SHA_EMPTY_OBJECT and bare.checkpoint_sha256 is None
    assert bare.label == "my-svm" and bare.checkpoint_short == "—"
    assert ModelIdentity.from_json(ident.to_json()) == ident
    # key order of the options does not change the digest; a value does
    assert model_identity("rsnn", {"beta": 1.5, "hidden": 8}).options_digest == ident.options_digest
    assert model_identity("rsnn", {"beta": 1.5, "hidden": 9}).options_digest != ident.options_digest


def test_model_block_bad_input_names_what(tmp_path):
    with pytest.raises(DataError, match=r"model 'rsnn': checkpoint .*missing\.pt is not a file"):
        model_identity("rsnn", {}, tmp_path / "missing.pt")
    with pytest.raises(ValueError, match=r"'\.\./x' is not a valid model label"):
        model_identity("rsnn", {}, None, "../x")
    with pytest.raises(DataError, match=r"r\.json: model\.label must be a string, got None"):
        ModelIdentity.from_json({"name": "rsnn", "options_digest": None,
                                 "checkpoint_sha256": None}, "r.json")
    assert results_name("spoken-digits", model_identity("rsnn")) == "spoken-digits--rsnn.json"
    assert results_name("qubo", None) == "qubo.json"


def _old_file(path, schema: str, details: dict, config: dict) -> None:
    path.write_text(json.dumps({
        "schema_version": schema, "benchmark": {"id": "spoken-digits-rsnn", "version": "2.1"},
        "scores": {"classification_accuracy": {"value": 0.5, "error": 0.1}},
        "details": details, "config": config, "seeds": {}, "provenance": {}}))


def test_old_results_files_load_with_a_derived_model(tmp_path):
    _old_file(tmp_path / "a.json", "1.1", {"model": "rsnn", "checkpoint": "/gone/rsnn.pt"},
              {"model": {"name": "rsnn", "options": {"hidden": 8}}})
    old = Results.load(tmp_path / "a.json")
    assert old.model == ModelIdentity("rsnn", hashlib.sha256(b'{"hidden":8}').hexdigest(),
                                      None, "rsnn")  # the checkpoint is never hashed now
    _old_file(tmp_path / "b.json", "1.0", {}, {"task": "qubo"})
    assert Results.load(tmp_path / "b.json").model is None
    assert derive_model_identity({"details": {"model": {"name": "m5"}}}).options_digest is None
    # they still show: the leaderboard row and compare use the old id as the model's label
    runs = read_runs([tmp_path / "b.json"])
    assert runs[0].model_label == "spoken-digits-rsnn" and runs[0].model_name == "—"
    # a 1.2 file keeps its block exactly
    new = Results({"x": Score(1.0)}, BenchmarkIdentity("b"), model=model_identity("m", {"k": 1}))
    again = Results.load(new.save(tmp_path / "c.json"))
    assert again.model == new.model
    assert json.loads((tmp_path / "c.json").read_text())["schema_version"] == "1.3"


def test_python_api_results_carry_a_model_block():
    loader = [(torch.ones(4, 3), torch.tensor([0, 1, 0, 1]))]
    plain = Benchmark(nn.Linear(3, 2), loader, postprocessors=[lambda o: o.argmax(-1)]).run()
    assert plain.benchmark.id == "custom"
    assert plain.model == ModelIdentity("Linear", None, None, "Linear")
    given = model_identity("mine", {"width": 3})
    named = Benchmark(nn.Linear(3, 2), loader, info=BenchmarkIdentity("toy", "2.0"), identity=given,
                      model_label="mine-v2").run()
    assert named.benchmark.id == "toy" and named.model.label == "mine-v2"
    assert named.model.options_digest == given.options_digest
    with pytest.raises(ValueError, match="not a valid model label"):
        Benchmark(nn.Linear(3, 2), loader, model_label="a/b")


class _Tiny(nn.Module):
    """A user's own model: the mean of each input row against a threshold, two classes."""

    def __init__(self, gain: float = 1.0) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        with torch.no_grad():
            self.fc.weight.copy_(torch.tensor([[-gain, 0.0, 0.0], [gain, 0.0, 0.0]]))
            self.fc.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def _data(split: str = "test"):
    # first feature -1 (class 0) or +1 (class 1); the baseline below always says class 0
    rng = np.random.default_rng(0 if split == "test" else 1)
    signs = rng.integers(0, 2, 12)
    return [(torch.tensor([2.0 * float(s) - 1.0, 0.0, 0.0]), int(s)) for s in signs]


def _configs(tmp_path, monkeypatch):
    from neuromark.registry import datasets, models

    monkeypatch.setitem(datasets._entries, "toy_rows", _data)
    monkeypatch.setitem(models._entries, "user_tiny", _Tiny)
    monkeypatch.setitem(models._entries, "zero_baseline", lambda: _Tiny(gain=0.0))
    body = ("task: classification\nbenchmark: {id: toy-rows, version: '1.0'}\n"
            "dataset: {name: toy_rows}\n"
            "eval: {batch_size: 4, postprocessor: argmax, metrics: [classification_accuracy]}\n")
    user = tmp_path / "mine.yaml"
    user.write_text(body + "model: {name: user_tiny, options: {gain: 2.0}, label: my-model}\n")
    base = tmp_path / "baseline.yaml"
    base.write_text(body + "model: {name: zero_baseline}\n")
    return user, base


def test_user_model_and_baseline_share_one_table_and_one_compare(tmp_path, monkeypatch, capsys):
    user, base = _configs(tmp_path, monkeypatch)
    # both in one run folder: two files, no collision
    assert main(["run", str(user), str(base), "--out", str(tmp_path / "both"), "--quiet"]) == 0
    names = sorted(p.name for p in (tmp_path / "both").glob("*.json"))
    assert names == ["toy-rows--my-model.json", "toy-rows--zero_baseline.json"]
    # and each in a run folder of its own, as a user adds a model to a published baseline
    assert main(["run", str(base), "--out", str(tmp_path / "published"), "--quiet"]) == 0
    assert main(["run", str(user), "--out", str(tmp_path / "mine"), "--quiet"]) == 0
    capsys.readouterr()
    mine = Results.load(tmp_path / "mine" / "toy-rows--my-model.json")
    assert mine.model.name == "user_tiny" and mine.model.label == "my-model"
    assert mine.model.options_digest == hashlib.sha256(b'{"gain":2.0}').hexdigest()
    assert mine["classification_accuracy"] == 1.0
    truth = [t for _, t in _data()]
    baseline = Results.load(tmp_path / "published" / "toy-rows--zero_baseline.json")
    # gain 0: logits tie at 0, argmax takes class 0, right on the zeros only
    assert baseline["classification_accuracy"] == pytest.approx(truth.count(0) / len(truth))

    site = tmp_path / "site"
    assert main(["leaderboard", str(tmp_path / "published"), str(tmp_path / "mine"),
                 "--out", str(site)]) == 0
    assert "2 results files, 1 benchmarks" in capsys.readouterr().out
    page = (site / "index.html").read_text()
    assert page.count('<table class="board">') == 1 and page.count("<h2>toy-rows</h2>") == 1
    rows = re.findall(r"<tr[^>]*><td data-sort=\"([^\"]*)\"[^>]*>", page)  # the model column
    assert sorted(rows) == ["my-model", "zero_baseline"]

    assert main(["compare", str(tmp_path / "published"), str(tmp_path / "mine")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("toy-rows (version 1.0): A = ")
    assert re.search(r"score\s+A: zero_baseline\s+B: my-model", out)
    assert re.search(r"model name\s+zero_baseline\s+user_tiny", out)
    assert re.search(r"classification_accuracy\s+0\.\d+ ± 0\.\d+\s+1 ± 0\s+\+0\.\d+", out)


def test_two_benchmarks_and_two_versions_say_so(tmp_path, capsys):
    for folder, bench in (("a", BenchmarkIdentity("spoken-digits", "2.0")),
                          ("b", BenchmarkIdentity("spoken-digits", "2.1")),
                          ("c", BenchmarkIdentity("shd", "1.0"))):
        (tmp_path / folder).mkdir()
        Results({"x": Score(1.0)}, bench, model=model_identity("rsnn")).save(
            tmp_path / folder / "r.json")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert ("share no benchmark (A: spoken-digits (version 2.0); B: spoken-digits (version "
            "2.1)); benchmark 'spoken-digits' has other versions") in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "c")]) == 1
    assert "share no benchmark (A: spoken-digits (version 2.0); B: shd (version 1.0))" in \
        capsys.readouterr().err


def test_pairing_in_folders_by_label(tmp_path):
    for folder, labels in (("a", ["rsnn", "lstm"]), ("b", ["lstm", "rsnn", "svm"])):
        (tmp_path / folder).mkdir()
        for label in labels:
            Results({"x": Score(1.0)}, BenchmarkIdentity("spoken-digits"),
                    model=model_identity(label)).save(tmp_path / folder / f"s--{label}.json")
    pairs, left_a, left_b = pair_runs(read_runs([tmp_path / "a"]), read_runs([tmp_path / "b"]))
    assert sorted((a.model_label, b.model_label) for a, b in pairs) == [("lstm", "lstm"),
                                                                       ("rsnn", "rsnn")]
    assert left_a == [] and [r.model_label for r in left_b] == ["svm"]


def test_same_benchmark_and_label_twice_is_an_error_naming_both(tmp_path, monkeypatch):
    from neuromark.suite import run_configs

    user, _ = _configs(tmp_path, monkeypatch)
    twin = tmp_path / "twin.yaml"
    twin.write_text(user.read_text())
    with pytest.raises(ConfigError, match=r"twin\.yaml: benchmark id 'toy-rows' with model label "
                                          r"'my-model' is produced twice \(also by .*mine\.yaml\)"):
        run_configs([user, twin], tmp_path / "out", quiet=True)
