"""Small things a new user trips on (issue 33, point 8): units in the terminal table,
``neuromark list`` paths that work from any folder and its postprocessors, ``neuromark
report`` without ``--system``, ``qubo bks --help``."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuromark.cli import main
from neuromark.report.markdown import format_value
from neuromark.results import Score


def test_terminal_table_keeps_units_of_dict_scores():
    ops = Score({"Effective_MACs": 0.0, "Effective_ACs": 1250.0, "Dense": 4000.0},
                unit="ops/sample")
    assert format_value(ops) == "Effective_MACs=0, Effective_ACs=1250, Dense=4000 ops/sample"
    energy = Score({"total": 2.5e-6, "synaptic": 1.5e-6}, unit="J/sample (estimate)")
    assert format_value(energy) == "total=2.5e-06, synaptic=1.5e-06 J/sample (estimate)"


def test_list_paths_work_from_any_folder_and_postprocessors_are_listed(tmp_path, monkeypatch,
                                                                       capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    configs = out.split("benchmark configs:\n", 1)[1].split("\n")
    shown = [line.strip() for line in configs if line.startswith("  ") and ".yaml" in line]
    assert shown and all(Path(p).is_file() for p in shown)  # from tmp_path, not the checkout
    assert "postprocessors (eval.postprocessor: decoding rules):\n  spike_count, " \
           "max_over_time, mean_over_time, argmax" in out


def test_report_describes_the_system_from_the_results_without_system(tmp_path, capsys):
    pytest.importorskip("mlperf_loadgen")
    config = tmp_path / "c.yaml"
    config.write_text("task: system\nbenchmark: {id: toy}\nsut:\n  name: sleep\n  options: "
                      "{sleep_s: 0.0002, samples: 4}\nloadgen:\n  min_query_count: 8\n"
                      "  min_duration_s: 0\n")
    # 8 queries: too few for LoadGen's early stopping (INVALID); the report is what is tested
    assert main(["run", str(config), "--out", str(tmp_path / "o"), "--quiet",
                 "--allow-invalid"]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "o"), "--out", str(tmp_path / "sub")]) == 0
    assert "wrote" in capsys.readouterr().out
    assert "generated" in (tmp_path / "sub" / "submission.md").read_text().lower()


def test_qubo_bks_help_explains_its_workload_flags(capsys):
    with pytest.raises(SystemExit):
        main(["qubo", "bks", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "numbers of graph nodes of the workloads" in text
    assert "edge densities in (0, 1]" in text
    assert "graph seeds (workloads.seeds, not the solver seed" in text
