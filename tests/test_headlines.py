"""Headlines after ``run`` for every family, with names that say what they are, flags said
once (also with ``--quiet``), and ``compare`` with flag badges and derived benchmarks named
(issue 58, items 4 and 5)."""

from __future__ import annotations

import re

import yaml

from neuromark.benchmark_settings import SHIPPED_CONFIGS
from neuromark.cli import main
from neuromark.identity import BenchmarkIdentity, model_identity
from neuromark.report.markdown import format_summary, headline, score_note
from neuromark.results import Results, Score


def test_closed_loop_run_prints_its_main_score(tmp_path, capsys):
    data = yaml.safe_load((SHIPPED_CONFIGS / "closed_loop" / "ops_zero.yaml").read_text())
    data["episodes"].update(count=2, max_steps=60, seeds=[0], per_unit=2)
    path = tmp_path / "cl.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("closed-loop-ops"))
    assert re.search(r"success_rate [0-9.]+.*\(fraction of episodes that reached the goal\)", line)


def test_names_say_what_they_are():
    free = Results({"sMAPE": Score(9.97, 0.5, "%", False)}, BenchmarkIdentity("mackey-glass-tau17"),
                   details={"headline_note": "free-running forecast: ..."})
    assert "sMAPE 9.97 ± 0.5 % (free-running forecast: ...)" in headline(free)
    gap = Results({"bks_gap@0.01s": Score(0.02, None, "", False)}, BenchmarkIdentity("qubo-mis"),
                  details={"primary_metric": "bks_gap@0.01s"})
    assert "after a 0.01 s budget" in headline(gap) and "best-known" in headline(gap)
    assert score_note(gap, "bks_gap[karate.gph]@0.02s").startswith(
        "gap to the best-known cost of karate.gph after a 0.02 s budget")


def test_the_mackey_glass_task_and_the_esn_sut_name_their_smape():
    from neuromark.benchmarks.mackey_glass import task

    assert task.HEADLINE_NOTE.startswith("free-running forecast")
    text = (SHIPPED_CONFIGS.parent / "src/neuromark/benchmarks/mackey_glass/sut.py").read_text()
    assert '"accuracy_note": "one-step forecast' in text


def test_a_flag_said_while_the_run_went_is_not_repeated(tmp_path, capsys):
    from neuromark.said import forget, say_flag

    forget()
    res = Results({"classification_accuracy": Score(0.5)}, BenchmarkIdentity("b"),
                  model=model_identity("m"))
    res.flag("decoding argmax: 4 of 4 samples have a tied top class")
    res.flag("something not said")
    say_flag("b", "decoding argmax: 4 of 4 samples have a tied top class")
    summary = format_summary([res])
    assert "tied top class" not in summary and "flag [b / m]: something not said" in summary
    assert "1 flag(s) printed above" in summary
    forget()
    assert "tied top class" in format_summary([res])


def test_compare_shows_flag_badges_and_a_derived_benchmark(tmp_path, capsys):
    for name, flags in (("a", []), ("b", ["untrained: weights as the factory built them"])):
        folder = tmp_path / name
        folder.mkdir()
        res = Results({"classification_accuracy": Score(0.5 if name == "a" else 0.7, 0.01)},
                      BenchmarkIdentity("spoken-digits-custom-1234abcd", "2.0", "spoken-digits"),
                      model=model_identity("m", label="m"),
                      details={"benchmark_derived": {
                          "shipped_id": "spoken-digits", "shipped_version": "2.0",
                          "changes": [{"setting": "dataset.options.dt_us", "shipped": 10000,
                                       "given": 5000, "how": "changed"}]}})
        for flag in flags:
            res.flag(flag)
        res.save(folder / "r.json")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "B: 0.7 ± 0.01 ⚑ 1 flag)" in out and "⚑ B: untrained" in out
    assert "derived from spoken-digits 2.0: dataset.options.dt_us = 5000 (shipped 10000)" in out


def test_leaderboard_labels_a_derived_benchmark_and_a_result_whose_settings_differ(tmp_path):
    from neuromark.report.leaderboard import build_leaderboard
    from neuromark.report.runs import read_runs

    folder = tmp_path / "old"
    folder.mkdir()
    written = yaml.safe_load((SHIPPED_CONFIGS / "shd" / "spoken_digits_snn.yaml").read_text())
    written["dataset"]["options"]["dt_us"] = 5000  # filed under the shipped id before 0.2.1
    res = Results({"classification_accuracy": Score(0.067, 0.01)},
                  BenchmarkIdentity("spoken-digits", "2.0"), model=model_identity("snn"))
    res.requested = written
    res.save(folder / "spoken-digits--snn.json")
    page = build_leaderboard(read_runs([folder]), tmp_path / "site").read_text()
    assert "settings differ from benchmark spoken-digits 2.0: dataset.options.dt_us = 5000" in page
    assert '<span class="badge"' in page


def test_the_system_accuracy_line_says_one_step():
    from neuromark.report.markdown import system_lines

    res = Results({}, BenchmarkIdentity("esn_mackey_glass-cpu_singlestream"),
                  details={"accuracy": {"metric": "sMAPE", "value": 0.024, "note": "no target"},
                           "sut": {"accuracy_note": "one-step forecast: ..."}})
    (line,) = system_lines([res])
    assert line.endswith("sMAPE 0.024: no target (one-step forecast: ...)")
