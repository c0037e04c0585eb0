"""Result folders (issue 33, point 4): a run that fails before it has something to write
leaves no ``results/<timestamp>/``; a test that writes into the checkout's ``results/``
fails; ``leaderboard`` and ``compare`` read a folder of run folders, skipping empty ones
with a note."""

from __future__ import annotations

import re

import pytest
from conftest import no_new_entries

from neuromark.cli import main
from neuromark.identity import BenchmarkIdentity, model_identity
from neuromark.results import Results, Score

BAD = {  # command -> a config that fails validation
    "run": "task: classification\nbenchmark: {id: bad}\nmodle: {name: snn}\n",
    "system run": "task: system\nsut: {name: sleep}\nloadgen: {scenaro: Offline}\n",
    "qubo run": "task: qubo\nworkloads: {sizes: [10], densities: [0.1]}\nsolvers: [{name: nope}]\n"
                "fixed_timeout: {timeouts: [0.01]}\n",
}


@pytest.mark.parametrize("command", list(BAD))
def test_a_bad_config_without_out_leaves_no_results_folder(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD[command])
    assert main([*command.split(), "bad.yaml"]) == 1
    assert re.search(r"bad\.yaml:3: ", capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == [tmp_path / "bad.yaml"]  # no results/, nothing else


def test_the_conftest_check_catches_a_folder_made_in_results(tmp_path):
    results = tmp_path / "results"
    with pytest.raises(pytest.fail.Exception, match=r"created 20261126-101010 in .*results"):
        with no_new_entries(results):
            (results / "20261126-101010").mkdir(parents=True)
    with no_new_entries(results):  # what was there before is not the test's doing
        pass


def run_folder(folder, label, accuracy):
    folder.mkdir(parents=True)
    res = Results(scores={"classification_accuracy": Score(accuracy, 0.01)},
                  benchmark=BenchmarkIdentity("digits"), config={"task": "toy"},
                  model=model_identity("snn", {}, None, label))
    res.save(folder / f"digits--{label}.json")


def test_leaderboard_and_compare_read_a_folder_of_run_folders(tmp_path, capsys):
    results = tmp_path / "results"
    run_folder(results / "20260101-120000", "small", 0.80)
    run_folder(results / "20260102-120000", "big", 0.90)
    (results / "20260103-120000").mkdir()  # a run that failed: empty
    site = tmp_path / "site"
    assert main(["leaderboard", str(results), "--out", str(site)]) == 0
    captured = capsys.readouterr()
    assert "2 results files, 1 benchmarks" in captured.out
    assert f"note: skipped {results / '20260103-120000'}: no results files" in captured.err
    page = (site / "index.html").read_text()
    assert ">small<" in page and ">big<" in page
    # the shell's results/* gives every run folder, the empty one too
    assert main(["leaderboard", *map(str, sorted(results.iterdir())), "--out", str(site)]) == 0
    assert "note: skipped" in capsys.readouterr().err
    other = tmp_path / "other"
    run_folder(other / "20260104-120000", "small", 0.85)
    assert main(["compare", str(results), str(other)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"classification_accuracy\s+0\.8 ± 0\.01\s+0\.85 ± 0\.01\s+\+0\.05", out)
    assert main(["leaderboard", str(results / "20260103-120000"), "--out", str(site)]) == 1
    assert "no neuromark results files" in capsys.readouterr().err
