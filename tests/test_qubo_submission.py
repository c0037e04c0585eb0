"""``qubo solve --submission DIR`` writes QOBLIB's submission folder, which QOBLIB's own checker
(``../shared/tools/qoblib/misc/check_submission.py``) accepts, and never replaces a file it did
not write."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neuromark.cli import main

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"
CHECKER = (Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "qoblib" / "misc"
           / "check_submission.py")


def _solve(file: Path, *extra: str) -> int:
    return main(["qubo", "solve", str(file), "--timeout", "0.02", "--runs", "3", *extra])


def test_the_folder_has_qoblibs_layout(tmp_path, capsys):
    sub = tmp_path / "sub"
    assert _solve(REAL / "C125-9.qs.xz", "--submission", str(sub), "--submitter", "T") == 0
    capsys.readouterr()
    inst = sub / "C125-9"
    assert sorted(p.name for p in inst.iterdir()) == [
        "C125-9_objective_time_series.json", "C125-9_summary.csv", "README.md", "solutions"]
    sols = sorted(p.name for p in (inst / "solutions").iterdir())
    assert sols == [f"C125-9_solution_{i:03d}.mst" for i in range(3)]
    lines = (inst / "solutions" / sols[0]).read_text().splitlines()
    assert len(lines) == 125 and lines[0].split()[0] == "x#1"
    assert all(line.split()[1] in ("0", "1") for line in lines)
    row = next(csv.DictReader((inst / "C125-9_summary.csv").open()))
    chosen = sum(int(line.split()[1]) for line in lines)
    assert row["Problem"] == "C125-9" and int(row["Best Objective Value"]) >= chosen > 0
    series = json.loads((inst / "C125-9_objective_time_series.json").read_text())
    assert len(series) == 3 and set(series[0][0]) == {"Time", "Incumbent"}
    readme = (inst / "README.md").read_text()
    assert readme.startswith("# Submission for C125-9") and "| Submitter | T |" in readme


@pytest.mark.skipif(not CHECKER.is_file(), reason=f"QOBLIB's checker absent: {CHECKER}")
def test_qoblibs_checker_accepts_the_folder(tmp_path, capsys):
    sub = tmp_path / "sub"
    assert _solve(REAL / "karate.gph", "--submission", str(sub)) == 0
    assert _solve(REAL / "brock200-1.gph", "--submission", str(sub)) == 0
    capsys.readouterr()
    done = subprocess.run([sys.executable, str(CHECKER), str(sub), "--strict-problem-match"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Summary: 2/2 instances passed" in done.stdout
    assert "Found 3 solutions in 'solutions/'" in done.stdout


def test_the_input_and_a_users_files_are_never_replaced(tmp_path, capsys):
    graph = tmp_path / "karate.gph"
    shutil.copy(REAL / "karate.gph", graph)
    before = graph.read_bytes()
    # the input itself as DIR: refused, the graph kept
    assert _solve(graph, "--submission", str(graph), "--overwrite") != 0
    assert "exists and is a file" in capsys.readouterr().err and graph.read_bytes() == before
    # a user's CSV as DIR: refused, kept
    mine = tmp_path / "mine.csv"
    mine.write_text("my numbers\n")
    assert _solve(graph, "--submission", str(mine)) != 0
    assert "exists and is a file" in capsys.readouterr().err
    assert mine.read_text() == "my numbers\n"
    # a folder holding the input as DIR/<instance>: refused even with --overwrite
    inside = tmp_path / "root" / "karate"
    inside.mkdir(parents=True)
    shutil.copy(REAL / "karate.gph", inside / "karate.gph")
    assert _solve(inside / "karate.gph", "--submission", str(tmp_path / "root"),
                  "--overwrite") != 0
    assert "holds the input" in capsys.readouterr().err
    assert (inside / "karate.gph").read_bytes() == before


def test_a_second_run_needs_overwrite_and_keeps_other_files(tmp_path, capsys):
    sub = tmp_path / "sub"
    assert _solve(REAL / "karate.gph", "--submission", str(sub)) == 0
    notes = sub / "karate" / "notes.txt"
    notes.write_text("mine")
    first = (sub / "karate" / "karate_summary.csv").read_text()
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--timeout", "0.02", "--runs", "2",
                 "--submission", str(sub)]) != 0
    assert "--overwrite" in capsys.readouterr().err
    assert (sub / "karate" / "karate_summary.csv").read_text() == first
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--timeout", "0.02", "--runs", "2",
                 "--submission", str(sub), "--overwrite"]) == 0
    sols = sorted(p.name for p in (sub / "karate" / "solutions").iterdir())
    assert sols == ["karate_solution_000.mst", "karate_solution_001.mst"]  # stale 002 removed
    assert notes.read_text() == "mine"


def test_folders_under_a_file_are_refused_before_solving(tmp_path, capsys):
    graph = tmp_path / "karate.gph"
    shutil.copy(REAL / "karate.gph", graph)
    for option in ("--submission", "--out"):
        assert _solve(graph, option, str(graph / "sub")) != 0
        err = capsys.readouterr().err
        assert f"{option} {graph / 'sub'}: {graph} is a file" in err and "Traceback" not in err
    assert graph.read_bytes() == (REAL / "karate.gph").read_bytes()
