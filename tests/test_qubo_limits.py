"""QUBO inputs at and past the stated limits (issue 59): energies that would overflow float64,
instances too large for the solvers, run counts past the bound, a solver with no solution in
its time, and what an interrupted ``qubo solve`` says it saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuromark.benchmarks.qubo import repeat
from neuromark.benchmarks.qubo.library import MAX_VARIABLES, load_instance
from neuromark.benchmarks.qubo.solvers.common import SharedBest
from neuromark.cli import main
from neuromark.errors import ConfigError, DataError

REAL = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis"


@pytest.mark.parametrize("name, text", [
    ("big.mqlib", "2 3\n1 1 1e308\n2 2 1e308\n1 2 1e308\n"),  # each finite, the sum is not
    ("big.qs", "# ObjectiveOffset 1e301\n2 1\n1 1 -1\n"),  # the offset alone
    ("wide.mqlib", "2 2\n1 1 6e299\n2 2 6e299\n"),  # finite sum 1.2e300 > 1e300
])
def test_energies_that_could_overflow_are_refused_before_solving(tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError, match=f"{name}: the coefficients' magnitudes sum to .* could "
                                        f"overflow float64"):
        load_instance(path)
    sub = tmp_path / "sub"
    assert main(["qubo", "solve", str(path), "--runs", "2", "--timeout", "0.01",
                 "--submission", str(sub)]) != 0
    assert "overflow" in capsys.readouterr().err and not sub.exists()


def test_a_graph_past_the_variable_limit_is_refused_at_its_header(tmp_path, capsys):
    path = tmp_path / "huge.gph"
    path.write_text("c 2e7 vertices, no edges\np edge 20000000 0\n")
    assert main(["qubo", "solve", str(path), "--runs", "1", "--timeout", "1"]) != 0
    err = capsys.readouterr().err
    assert "huge.gph:2: 20000000 variables" in err and f"{MAX_VARIABLES:,}" in err
    assert "Traceback" not in err and "AssertionError" not in err


def test_no_solution_within_the_timeout_is_a_clear_error():
    with pytest.raises(ConfigError, match="no solution within 0.001 s: .* first pass over "
                                          "5000000 variables"):
        SharedBest(0.0, None).result(5_000_000, 0.001)


def test_runs_past_the_bound_are_refused_before_any_work(capsys):
    assert main(["qubo", "solve", str(REAL / "karate.gph"), "--runs", "1000000000"]) != 0
    err = capsys.readouterr().err
    assert "--runs must be in 1..100,000, got 1,000,000,000" in err


def _interrupt_on(call: int, monkeypatch):
    real, calls = repeat.one_run, []

    def one_run(*args, **kwargs):
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(repeat, "one_run", one_run)


def test_an_interrupt_says_what_was_saved(tmp_path, capsys, monkeypatch):
    _interrupt_on(3, monkeypatch)
    out = tmp_path / "out"
    code = main(["qubo", "solve", str(REAL / "karate.gph"), "--runs", "5", "--timeout", "0.01",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 130 and "5 run(s) x 0.01 s: at most" in err
    assert f"interrupted after 2 of 5 run(s); they are saved in {out / 'runs.jsonl'}" in err
    saved = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in saved] == [0, 1] and "completed entries are saved" not in err


def test_an_interrupt_without_out_says_nothing_was_saved(capsys, monkeypatch):
    _interrupt_on(2, monkeypatch)
    code = main(["qubo", "solve", str(REAL / "karate.gph"), "--runs", "5", "--timeout", "0.01"])
    err = capsys.readouterr().err
    assert code == 130 and "interrupted after 1 of 5 run(s); nothing was saved (no --out)" in err
    assert "nothing is saved before the last run ends" in err  # said before the start
    assert "completed entries are saved" not in err
