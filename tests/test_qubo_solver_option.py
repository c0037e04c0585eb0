"""`neuromark qubo solve FILE --solver NAME --solver-option KEY=VALUE`: options reach the
solver, are checked against its options model before any work, and are named in the
result and the submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuromark.benchmarks.qubo.cli_solve import build_solver
from neuromark.cli import main
from neuromark.errors import ConfigError

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"
KARATE = REAL / "karate.gph"


@pytest.mark.parametrize("pairs,words", [
    (["sweeps=3"], "option sweeps: unknown key"),
    (["first_sweeps=-3"], "option first_sweeps"),
    (["workers"], "'workers' is not KEY=VALUE"),
    (["workers=1", "workers=2"], "'workers' is given twice"),
    (["beta_range=[1, "], "the value is not readable"),
])
def test_bad_options_are_refused_naming_the_option(pairs, words):
    with pytest.raises(ConfigError, match="--solver neuromark-sa --solver-option") as caught:
        build_solver("neuromark-sa", pairs)
    assert words in str(caught.value) and "<config>" not in str(caught.value)


def test_the_cli_refuses_a_bad_option_before_any_work(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["qubo", "solve", str(KARATE), "--solver", "neuromark-sa", "--solver-option",
                 "first_sweeps=0", "--runs", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and "--solver-option" in err and "first_sweeps" in err
    assert "Traceback" not in err and not out.exists()


def test_options_reach_the_solver():
    pytest.importorskip("numba", reason="neuromark-sa needs numba")
    solver = build_solver("neuromark-sa", ["workers=1", "first_sweeps=8",
                                           "beta_range=[0.1, 10]"])
    assert solver.first_sweeps == 8 and tuple(solver.beta_range) == (0.1, 10)


def test_kamis_takes_its_algorithm(tmp_path, capsys):
    pytest.importorskip("chszlablib", reason="KaMIS needs the extra neuromark[kamis] "
                        "(chszlablib==0.5.27)")
    assert build_solver("kamis", ["algorithm=online_mis"]).algorithm == "online_mis"
    with pytest.raises(ConfigError, match="option algorithm: Input should be 'redumis'"):
        build_solver("kamis", ["algorithm=bogus"])
    sub = tmp_path / "sub"
    assert main(["qubo", "solve", str(KARATE), "--solver", "kamis", "--solver-option",
                 "algorithm=online_mis", "--timeout", "0.5", "--runs", "2", "--json",
                 "--submission", str(sub)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["solver"] == "kamis:algorithm=online_mis"
    assert result["summary"]["best_size"] == 20  # karate's proven optimum (QOBLIB)
    summary = (sub / "karate" / "karate_summary.csv").read_text()
    assert "--solver kamis --solver-option algorithm=online_mis" in summary
