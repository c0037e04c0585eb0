"""Success probability, TTS99 and its bootstrap; `neuromark qubo solve` on real QOBLIB
instances (short timeouts, few runs); QOBLIB's submission CSV."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from neuromark.benchmarks.qubo.library import load_instance
from neuromark.benchmarks.qubo.qoblib_submission import COLUMNS, successful_runs
from neuromark.benchmarks.qubo.repeat import summarise_runs
from neuromark.benchmarks.qubo.tts import tts, tts_summary
from neuromark.cli import main
from neuromark.errors import MetricError

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"
#: QOBLIB's misc/submission_template.csv header (commit a6b69e4), verbatim.
TEMPLATE = ("Problem,Submitter,Date,Reference,Best Objective Value,Optimality Bound,Modeling "
            "Approach,# Decision Variables,# Binary Variables,# Integer Variables,# Continuous "
            "Variables,# Non-Zero Coefficients,Coefficients Type,Coefficients Range,Workflow,"
            "Algorithm Type,# Runs,# Feasible Runs,# Successful Runs,Success Threshold,Hardware "
            "Specifications,Total Runtime,CPU Runtime,GPU Runtime,QPU Runtime,Other HW Runtime,"
            "Remarks")


def test_tts_formula_and_edge_cases():
    assert tts(1.0, 0.5) == pytest.approx(math.log(0.01) / math.log(0.5))  # 6.64 runs
    assert tts(2.0, 0.1) == pytest.approx(2.0 * math.log(0.01) / math.log(0.9))
    assert tts(0.3, 1.0) == 0.3  # one run suffices
    assert tts(0.3, 0.995) == 0.3  # the formula's 0.87 runs is less than one run
    assert math.isinf(tts(0.3, 0.0))
    with pytest.raises(MetricError):
        tts(0.0, 0.5)
    with pytest.raises(MetricError):
        tts(1.0, 1.5)


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    ok = [True, False, True, True, False, False, True, False]
    wall = [1.0, 1.1, 0.9, 1.0, 1.2, 1.0, 1.0, 0.8]
    a = tts_summary(ok, wall, seed=3)
    assert a == tts_summary(ok, wall, seed=3)
    assert (a["successes"], a["runs"], a["p_success"]) == (4, 8, 0.5)
    assert a["tts99_s"] == pytest.approx(tts(1.0, 0.5))
    low, high = a["tts99_ci95_s"]
    assert low <= a["tts99_s"] and (high is None or high >= a["tts99_s"])
    none = tts_summary([False, False], [1.0, 1.0])
    assert none["tts99_s"] is None and none["tts99_ci95_s"] == [None, None]
    sure = tts_summary([True] * 3, [0.5, 0.5, 0.5])
    assert sure["tts99_s"] == 0.5 and sure["tts99_ci95_s"] == [0.5, 0.5]


def test_summary_against_an_optimum_and_the_own_best():
    inst = load_instance(REAL / "karate.gph")
    runs = [{"energy": -20.0, "size": 20, "feasible": True, "wall_s": 0.1},
            {"energy": -18.0, "size": 18, "feasible": True, "wall_s": 0.1},
            {"energy": -19.0, "size": 21, "feasible": False, "wall_s": 0.1}]
    s = summarise_runs(inst, runs, -20.0, "opt", optimum_size=20)
    assert (s["successes"], s["feasible_runs"], s["target_size"], s["best_size"]) == (1, 2, 20, 20)
    assert s["residual_energy_mean"] == pytest.approx((0 + 2 + 1) / 3)
    assert s["gap_best"] == 0.0 and s["gap_mean"] == pytest.approx((0 + 0.1 + 0.05) / 3)
    own = summarise_runs(inst, runs[1:], None, "")
    assert own["target_energy"] == -18.0 and own["successes"] == 1  # the infeasible run fails
    assert "own best" in own["target_source"]
    # QOBLIB: successful = feasible and within (1 + eps) of the algorithm's own best |S|
    assert successful_runs(inst, runs, 0.0) == 1 and successful_runs(inst, runs, 0.1) == 2


@pytest.mark.parametrize("file, size", [("karate.gph", 20), ("C125-9.gph", 34),
                                        ("C125-9.qs.xz", 34), ("brock200-1.gph", 6)])
def test_solve_reaches_the_qoblib_optima(capsys, file, size):
    name = file.split(".")[0]
    assert main(["qubo", "solve", str(REAL / file), "--timeout", "0.15", "--runs", "2",
                 "--optimum", str(REAL / f"{name}.opt.sol"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    summary = out["summary"]
    assert summary["target_size"] == size and summary["best_size"] == size
    assert summary["gap_best"] == 0.0 and summary["successes"] >= 1
    assert summary["tts99_s"] is not None and summary["tts99_s"] >= summary["tau_opt_s"]
    assert summary["tts99_at_timeout_s"] >= summary["tau_at_timeout_s"]
    assert all(r["feasible"] for r in out["runs"])
    run = out["runs"][0]
    assert [p[0] for p in run["history"]] == sorted(p[0] for p in run["history"])
    assert run["history"][-1][1] == run["energy"]


def test_solve_table_submission_and_known_optimum(capsys, tmp_path):
    sub = tmp_path / "submission"
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--timeout", "0.05", "--runs", "3",
                 "--submission", str(sub), "--submitter", "Tester"]) == 0
    out = capsys.readouterr().out
    assert "known_optima.csv" in out and "TTS99" in out and "gap to target" in out
    csv_path = sub / "karate" / "karate_summary.csv"
    text = csv_path.read_text().splitlines()
    assert text[0] == TEMPLATE and tuple(TEMPLATE.split(",")) == COLUMNS
    row = next(csv.DictReader(csv_path.open()))
    assert (row["Problem"], row["Submitter"], row["Best Objective Value"]) == ("karate", "Tester", "20")
    assert (row["# Runs"], row["# Feasible Runs"], row["# Decision Variables"]) == ("3", "3", "34")
    assert row["# Successful Runs"] == "3" and row["Coefficients Range"] == "{-1; 4}"


def test_solve_rejects_bad_input_before_solving(capsys, tmp_path):
    bad = tmp_path / "bad.gph"
    bad.write_text("p edge 3 1\ne 1 9\n")
    assert main(["qubo", "solve", str(bad), "--runs", "1", "--timeout", "0.01"]) != 0
    assert "bad.gph:2: index 9 out of range 1..3" in capsys.readouterr().err
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--runs", "0"]) != 0
    assert "--runs must be in 1..100,000, got 0" in capsys.readouterr().err
    sol = tmp_path / "wrong.opt.sol"
    sol.write_text("1\n2\n")  # nodes 1 and 2 of karate are adjacent
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--optimum", str(sol), "--runs", "1",
                 "--timeout", "0.01"]) != 0
    assert "wrong.opt.sol: the solution is not an independent set" in capsys.readouterr().err
    # a stated optimum of another graph: its indices are out of range for this one
    other = tmp_path / "other.opt.sol"
    other.write_text("1\n40\n")
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--optimum", str(other), "--runs",
                 "1", "--timeout", "0.01"]) != 0
    err = capsys.readouterr().err
    assert "other.opt.sol" in err and "out of range 1..34" in err and "another graph" in err
