"""TTS99 as the field defines it: the minimum over tau of TTS99(tau) from the runs' hit times,
checked against values computed by hand (Rønnow et al. 2014; King et al. 2015; Aiex, Resende
and Ribeiro's time-to-target curve), and a stated target that the runs beat."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from neuromark.benchmarks.qubo.library import load_instance
from neuromark.benchmarks.qubo.repeat import hit_time, summarise_runs
from neuromark.benchmarks.qubo.tts import hit_times_curve, tts_over_tau
from neuromark.cli import main

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"
INF = math.inf


def test_every_run_at_the_target_by_tau_star_gives_tau_star():
    out = tts_over_tau([0.2, 0.05, 0.2], timeout_s=1.0, seed=1)
    # p_s(0.05) = 1/3: 0.05 * ln 0.01 / ln(2/3) = 0.05 * 11.358 = 0.5679 s; p_s(0.2) = 1: 0.2 s
    assert out["tts99_s"] == pytest.approx(0.2) and out["tau_opt_s"] == pytest.approx(0.2)
    assert out["p_s_at_tau_opt"] == 1.0 and out["tts99_ci95_s"][1] == pytest.approx(0.2)


def test_no_run_at_the_target_is_not_reached():
    out = tts_over_tau([INF, INF, INF], timeout_s=2.0)
    assert out["tts99_s"] is None and out["tau_opt_s"] is None
    assert out["tts99_ci95_s"] == [None, None] and hit_times_curve([INF, INF], 2.0) == []


def test_a_mixed_case_by_hand():
    # Four runs hit at 0.1, 0.3, 0.5 s and never. By hand, ln 0.01 = -4.605170:
    #   tau 0.1: p 1/4, ln 0.75 = -0.287682 -> 0.1 * 16.007846 = 1.6007846 s
    #   tau 0.3: p 2/4, ln 0.50 = -0.693147 -> 0.3 *  6.64386 = 1.993157 s
    #   tau 0.5: p 3/4, ln 0.25 = -1.386294 -> 0.5 *  3.32193 = 1.660964 s
    out = tts_over_tau([0.3, INF, 0.1, 0.5], timeout_s=1.0)
    assert out["tts99_s"] == pytest.approx(1.6007846, abs=1e-6)
    assert out["tau_opt_s"] == 0.1 and out["p_s_at_tau_opt"] == 0.25
    curve = hit_times_curve([0.3, INF, 0.1, 0.5], 1.0)
    assert [(p["t_s"], p["reached"], p["p_s"]) for p in curve] == [(0.1, 1, 0.25), (0.3, 2, 0.5),
                                                                   (0.5, 3, 0.75)]
    assert [p["tts99_s"] for p in curve] == pytest.approx([1.6007846, 1.993157, 1.660964],
                                                          abs=1e-6)
    low, high = out["tts99_ci95_s"]
    assert low <= out["tts99_s"] <= high  # no hit in a resample: (1/4)^4 = 0.4 % < 2.5 %
    assert tts_over_tau([0.3, INF, INF], 1.0)["tts99_ci95_s"][1] is None  # (2/3)^3 = 30 %
    assert out == tts_over_tau([0.3, INF, 0.1, 0.5], timeout_s=1.0)  # seeded


def test_ties_and_late_hits_and_the_99_percent_cap():
    # two runs tie at 0.4 s: p_s(0.4) = 1 (not 1/2 at the first of them)
    assert tts_over_tau([0.4, 0.4], 1.0)["tts99_s"] == pytest.approx(0.4)
    # a hit after the timeout counts for no tau <= T: p_s(0.2) = 1/2 -> 0.2 * 6.64386
    late = tts_over_tau([0.2, 1.5], timeout_s=1.0)
    assert late["late_hits"] == 1 and late["tts99_s"] == pytest.approx(1.328771, abs=1e-6)
    # p_s = 0.99 at tau: one run of tau is enough (never below tau)
    assert tts_over_tau([0.4] * 99 + [INF], 1.0)["tts99_s"] == pytest.approx(0.4)


def test_hit_time_from_a_history():
    run = {"history": [[0.01, -10.0], [0.02, -19.0], [0.07, -20.0]], "wall_s": 1.0}
    assert hit_time(run, -20.0, True) == 0.07 and hit_time(run, -19.0, True) == 0.02
    assert hit_time(run, -20.0, False) == INF
    assert hit_time({"history": [], "wall_s": 0.9}, -20.0, True) == 0.9  # no history: the wall


def _runs(*pairs):
    return [{"energy": e, "size": -int(e), "feasible": True, "wall_s": 1.0,
             "history": [[t, e]]} for e, t in pairs]


def test_summary_reports_both_figures_and_a_beaten_target():
    inst = load_instance(REAL / "karate.gph")
    s = summarise_runs(inst, _runs((-20.0, 0.1), (-20.0, 0.3), (-19.0, 0.2)), -20.0, "opt",
                       optimum_size=20, timeout_s=1.0)
    # by hand: tau 0.1, p 1/3 -> 0.1 * 4.605170 / 0.405465 = 1.135775; tau 0.3, p 2/3 -> 0.3 *
    # 4.605170 / 1.098612 = 1.257542 (the run of energy -19 never reaches -20)
    assert s["tts99_s"] == pytest.approx(1.135775, abs=1e-6) and s["tau_opt_s"] == 0.1
    assert s["tts99_at_timeout_s"] == pytest.approx(1.0 * math.log(0.01) / math.log(1 / 3))
    assert s["target_beaten"] is None and s["notes"] == []
    # a stated "optimum" of 19 that two runs beat: named, and the figures use the best seen
    b = summarise_runs(inst, _runs((-20.0, 0.1), (-20.0, 0.3), (-19.0, 0.2)), -19.0,
                       "my.opt.sol", optimum_size=19, timeout_s=1.0, optimum_proven=True)
    assert b["target_energy"] == -20.0 and b["target_beaten"]["by_runs"] == 2
    assert "PROVEN" in b["target_beaten"]["meaning"] and "my.opt.sol" in b["notes"][0]
    assert b["successes"] == 2 and b["residual_energy_mean"] >= 0 and b["gap_best"] == 0.0
    assert b["target_size"] == 20


def test_solve_karate_reports_tts_over_tau_and_writes_the_curve(capsys, tmp_path):
    out = tmp_path / "run"
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--timeout", "0.1", "--runs", "3",
                 "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert "3 run(s) x 0.1 s: at most" in captured.err  # the bound, stated before the start
    summary = json.loads(captured.out)["summary"]
    assert summary["successes"] == 3 and summary["tts99_s"] is not None
    assert summary["tau_opt_s"] <= summary["tts99_s"] < summary["tts99_at_timeout_s"]
    assert summary["tau_opt_s"] in summary["hit_times_s"]  # the grid: the observed hit times
    points = summary["time_to_target"]
    assert summary["tts99_s"] == min(p["tts99_s"] for p in points)  # the exact minimum
    assert points[-1]["reached"] == 3 and points[-1]["tts99_s"] == points[-1]["t_s"]
    lines = (out / "time_to_target.csv").read_text().splitlines()
    assert lines[0] == "t_s,reached,runs,p_s,tts99_s" and lines[-1].split(",")[1:4] == ["3", "3",
                                                                                       "1.0"]
    assert json.loads((out / "time_to_target.json").read_text())["tau_opt_s"] == \
        summary["tau_opt_s"]
    assert (out / "time_to_target.png").stat().st_size > 1000
    assert len((out / "runs.jsonl").read_text().splitlines()) == 3
    # a second run into the same folder is refused, the first's files kept
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--timeout", "0.01", "--runs", "1",
                 "--out", str(out)]) != 0
    assert "runs.jsonl exists; pass --overwrite" in capsys.readouterr().err
    assert len((out / "runs.jsonl").read_text().splitlines()) == 3
