"""Training seeds as suite entries (``{config: PATH, seeds: [...]}``): the copies, their
errors, and a run that writes one result per seed."""

from __future__ import annotations

import json

import pytest

from neuromark.commands.run import run_and_report
from neuromark.config import load_config
from neuromark.errors import ConfigError
from neuromark.identity import BenchmarkIdentity
from neuromark.report.seeds import seed_groups, seed_lines, summarise
from neuromark.results import Results, Score
from neuromark.run_folder import entry_stem
from neuromark.suite import expand
from neuromark.suite_seeds import suffixed

CLASSIFIER = """task: classification
benchmark: {id: digits-x, version: "1.0"}
model: {name: m, checkpoint: cache:checkpoints/x.pt}
train: {epochs: 1, seed: 0}
"""
MG = """task: mackey_glass
benchmark: {id: mg-seeds, version: "1.0"}
data: {taus: [17], instances: 2, length: 4, shift: 0.5}
models: [{name: esn, seed: 0, params: {reservoir_size: 30, warmup: 30}}]
metrics: [footprint]
"""


def _suite(tmp_path, entry: str, body: str = CLASSIFIER):
    (tmp_path / "x.yaml").write_text(body)
    (tmp_path / "s.yaml").write_text(f"suite: seeds\nentries:\n  - {entry}\n")
    return tmp_path / "s.yaml"


def test_one_copy_per_seed_with_ids_checkpoints_and_folders_apart(tmp_path):
    configs = expand([_suite(tmp_path, "{config: x.yaml, seeds: [0, 7]}")])
    assert [c.data["train"]["seed"] for c in configs] == [0, 7]
    assert [c.data["benchmark"]["id"] for c in configs] == ["digits-x", "digits-x"]  # one benchmark
    assert [c.data["model"]["label"] for c in configs] == ["m-seed0", "m-seed7"]
    assert [c.data["model"]["checkpoint"] for c in configs] == [
        "cache:checkpoints/x-seed0.pt", "cache:checkpoints/x-seed7.pt"]
    assert [entry_stem(c) for c in configs] == ["x-seed0", "x-seed7"]
    assert all(c.path == tmp_path / "x.yaml" for c in configs)  # messages name the real file
    assert load_config(tmp_path / "x.yaml").data["train"]["seed"] == 0  # the file is untouched
    plain = expand([_suite(tmp_path, "x.yaml")])
    assert [entry_stem(c) for c in plain] == ["x"] and plain[0].label is None


def test_suffixed_keeps_the_folder_and_extension():
    assert suffixed("cache:checkpoints/x.pt", "-seed1") == "cache:checkpoints/x-seed1.pt"
    assert suffixed("/a.b/model", "-seed2") == "/a.b/model-seed2"
    assert suffixed("w.tar.gz", "-seed3") == "w.tar-seed3.gz"


@pytest.mark.parametrize("entry,message", [
    ("{config: x.yaml, seeds: [1, 1]}", r"s.yaml:3: seeds \[1, 1\] repeat a seed"),
    ("{config: x.yaml, seeds: [1], key: eval.seed}",
     r"s.yaml:3: key eval.seed: .*x.yaml has no 'eval' section to set the seed in"),
    ("{config: x.yaml, seeds: [1], key: 'train..seed'}", "is not a dotted key path"),
    ("{config: x.yaml, seeds: []}", "seeds"),
    ("{config: other.yaml, seeds: [1]}", "seeds apply to a config, not to the suite"),
    ("{config: nope.yaml, seeds: [1]}", "no such config"),
    ("{config: x.yaml, seeds: [1], colour: red}", "colour"),
])
def test_seed_entry_errors_name_the_suite_line(tmp_path, entry, message):
    (tmp_path / "other.yaml").write_text("suite: other\nentries: [x.yaml]\n")
    with pytest.raises(ConfigError, match=message):
        expand([_suite(tmp_path, entry)])


def test_missing_benchmark_id_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="has no benchmark.id to tell the seeds' results apart"):
        expand([_suite(tmp_path, "{config: x.yaml, seeds: [1]}", "task: classification\ntrain: {}\n")])


def test_a_seeded_run_writes_one_result_per_seed(tmp_path):
    suite = _suite(tmp_path, "{config: x.yaml, seeds: [0, 1], key: models.0.seed}", MG)
    assert run_and_report([suite], tmp_path / "out", quiet=True) == 0
    runs = [json.loads((tmp_path / f"out/mg-seeds--esn-seed{s}.json").read_text()) for s in (0, 1)]
    assert [r["details"]["seeds"] for r in runs] == [[0, 1], [1, 2]]  # instance k: seed + k
    smape = [r["details"]["per_instance_sMAPE"] for r in runs]
    assert smape[0][0] != smape[1][0]  # instance 0 with reservoir seed 0, then seed 1
    assert runs[0]["config"]["effective"]["models"][0]["seed"] == 0
    assert runs[1]["config"]["effective"]["models"][0]["seed"] == 1
    report = (tmp_path / "out/report.md").read_text()
    assert "# Across training seeds" in report and "## mg-seeds [esn]: 2 seeds (0, 1)" in report
    mean = (runs[0]["scores"]["sMAPE"]["value"] + runs[1]["scores"]["sMAPE"]["value"]) / 2
    assert f"| sMAPE | {mean:.4g} ± " in report


def _res(id_: str, **scores) -> Results:
    return Results(scores={k: Score(v) for k, v in scores.items()}, benchmark=BenchmarkIdentity(id_))


def test_scores_across_seeds_by_hand():
    runs = [_res("rsnn-seed2", acc=0.5, ops={"Dense": 1.0}, power="not measured", ok=True),
            _res("rsnn-seed0", acc=0.7, ops={"Dense": 1.0}, power="not measured", ok=True),
            _res("rsnn-seed1", acc=0.6, ops={"Dense": 1.0}, power="not measured", ok=True),
            _res("lonely-seed0", acc=0.1), _res("other", acc=0.2)]
    groups = seed_groups(runs)
    assert list(groups) == ["rsnn"] and [seed for seed, _ in groups["rsnn"]] == [0, 1, 2]
    (acc,) = summarise(groups["rsnn"])  # dicts, text and booleans are not summarised
    assert acc.metric == "acc" and acc.values == (0.7, 0.6, 0.5)
    assert acc.mean == pytest.approx(0.6)
    assert acc.se == pytest.approx(0.1 / 3 ** 0.5)  # sd 0.1 (ddof 1) / sqrt(3)
    lines = seed_lines(runs)
    assert lines[0] == "## rsnn: 3 seeds (0, 1, 2)"
    assert "| acc | 0.6 ± 0.058 | 0.7, 0.6, 0.5 |" in lines


def test_a_score_missing_or_not_finite_in_one_seed_is_not_summarised():
    runs = [_res("m-seed0", a=1.0, b=float("nan")), _res("m-seed1", a=3.0, b=2.0),
            _res("m-seed2", a=2.0)]
    assert [s.metric for s in summarise(seed_groups(runs)["m"])] == ["a"]


def test_seeds_in_the_model_label_group_on_one_benchmark():
    from neuromark.identity import model_identity

    runs = []
    for seed, acc in ((1, 0.6), (0, 0.8)):
        res = _res("spoken-digits", acc=acc)
        res.model = model_identity("rsnn", {}, None, f"rsnn-seed{seed}")
        runs.append(res)
    other = _res("spoken-digits", acc=0.1)
    other.model = model_identity("snn", {}, None, "snn")
    groups = seed_groups([*runs, other])
    assert list(groups) == ["spoken-digits [rsnn]"]
    assert [seed for seed, _ in groups["spoken-digits [rsnn]"]] == [0, 1]
    [acc] = summarise(groups["spoken-digits [rsnn]"])
    assert acc.metric == "acc" and acc.values == (0.8, 0.6) and abs(acc.mean - 0.7) < 1e-12


@pytest.mark.parametrize("entry,line", [
    ("{config: x.yaml, seeds: [0, -1]}", "s.yaml:3: entries.0.seeds.1: Input should be greater "
                                         "than or equal to 0 (got -1)"),
    ("{config: x.yaml, seeds: abc}", "s.yaml:3: entries.0.seeds: Input should be a valid list "
                                     "(got 'abc')"),
    ("{config: x.yaml, seeds: [1], kee: 3}", "s.yaml:3: entries.0.kee: unknown key; did you mean key?"),
    ("3", "s.yaml:3: entries.0: Input should be a valid string (got 3)"),
])
def test_seed_entry_error_is_one_line_about_the_entry(tmp_path, entry, line):
    """A mapping entry is validated as a seeded entry only: no second line saying it is not
    a string (the path member of the union)."""
    with pytest.raises(ConfigError) as info:
        expand([_suite(tmp_path, entry)])
    lines = str(info.value).splitlines()
    assert len(lines) == 2 and lines[1].strip().endswith(line), lines
