"""Cases of ``bench/hostile_sweep.py`` (issue 59, QUBO): instance files whose energies would
overflow, graphs past the solvers' size limit, run counts past the bound, stated optima that are
wrong or belong to another graph, files named like a known instance, and QOBLIB submission
folders aimed at the input or a user's files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hostile_common import case, cli

REAL = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "realdata" / "qubo_mis"
LIM = "test_qubo_limits.py::"
SUB = "test_qubo_submission.py::"
IDS = "test_qubo_identity.py::"


def _karate(tmp: Path) -> Path:
    path = tmp / "karate.gph"
    shutil.copy(REAL / "karate.gph", path)
    return path


def _solve(path: Path, *extra: object) -> Any:
    return lambda: cli("qubo", "solve", path, "--timeout", "0.02", "--runs", "2", *extra)


def _summary(run: Any) -> dict[str, Any]:
    return json.loads(run.out)["summary"]


@case("qubo-mqlib-sum-overflows", "energies that could overflow float64: refused before solving",
      LIM + "test_energies_that_could_overflow_are_refused_before_solving",
      needs=("sum.mqlib", "overflow float64"))
def _(tmp: Path) -> Any:
    path = tmp / "sum.mqlib"
    path.write_text("3 3\n1 1 1.5e308\n2 2 1.5e308\n3 3 -1.5e308\n")
    return _solve(path, "--submission", tmp / "out" / "sub")


@case("qubo-qs-offset-1e305", "an offset past the energy bound: refused, the file named",
      LIM + "test_energies_that_could_overflow_are_refused_before_solving",
      needs=("offset.qs", "1e+300"))
def _(tmp: Path) -> Any:
    path = tmp / "offset.qs"
    path.write_text("# ObjectiveOffset -1e305\n3 2\n1 1 -1\n2 3 2\n")
    return _solve(path)


@case("qubo-dimacs-3e7-isolated", "past the variable limit: refused at the header line",
      LIM + "test_a_graph_past_the_variable_limit_is_refused_at_its_header",
      needs=("many.gph:1", "30000000 variables", "10,000,000"))
def _(tmp: Path) -> Any:
    path = tmp / "many.gph"
    path.write_text("p edge 30000000 1\ne 1 2\n")
    return _solve(path)


@case("qubo-runs-2e9", "bounded work states its bound before it starts",
      LIM + "test_runs_past_the_bound_are_refused_before_any_work",
      needs=("--runs", "1..100,000", "2,000,000,000"))
def _(tmp: Path) -> Any:
    return _solve(_karate(tmp), "--runs", "2000000000")


@case("qubo-submission-is-the-input", "never replace the input, even with --overwrite",
      SUB + "test_the_input_and_a_users_files_are_never_replaced",
      needs=("karate.gph", "exists and is a file"))
def _(tmp: Path) -> Any:
    path = _karate(tmp)
    return _solve(path, "--submission", path, "--overwrite")


@case("qubo-submission-folder-holds-the-input", "never write into the input's own folder",
      SUB + "test_the_input_and_a_users_files_are_never_replaced",
      needs=("holds the input", "karate.gph"))
def _(tmp: Path) -> Any:
    folder = tmp / "subs" / "karate"
    folder.mkdir(parents=True)
    path = _karate(folder)
    return _solve(path, "--submission", tmp / "subs", "--overwrite")


@case("qubo-submission-nonempty-instance-folder", "a user's folder is not replaced",
      SUB + "test_a_second_run_needs_overwrite_and_keeps_other_files",
      needs=("not empty", "--overwrite"))
def _(tmp: Path) -> Any:
    (tmp / "subs" / "karate").mkdir(parents=True)
    (tmp / "subs" / "karate" / "karate_summary.csv").write_text("my own table\n")
    return _solve(_karate(tmp), "--submission", tmp / "subs")


@case("qubo-optimum-of-another-graph", "a stated optimum of another graph is named",
      "test_qubo_tts.py::test_solve_rejects_bad_input_before_solving",
      needs=("big.opt.sol", "out of range 1..34", "another graph"))
def _(tmp: Path) -> Any:
    sol = tmp / "big.opt.sol"
    sol.write_text("# Objective value = 2\n1\n120\n")
    return _solve(_karate(tmp), "--optimum", sol)


@case("qubo-optimum-not-optimal", "a stated optimum the runs beat is named; figures use the best",
      "test_qubo_tts_tau.py::test_summary_reports_both_figures_and_a_beaten_target",
      expect="result",
      check=lambda s: (s["target_beaten"] is not None and s["target_energy"] < -3
                       and s["residual_energy_mean"] >= 0 and s["gap_best"] == 0.0
                       and "beaten" in s["notes"][0]) or f"summary {s}")
def _(tmp: Path) -> Any:
    sol = tmp / "small.opt.sol"
    sol.write_text("17\n26\n")  # an independent set of karate of 2 nodes, far from 20
    run = _solve(_karate(tmp), "--optimum", sol, "--json")
    return lambda: _summary(run())


@case("qubo-path-named-karate", "a file named like a known instance is scored by its content",
      IDS + "test_a_file_named_karate_that_is_not_karate_gets_no_value", expect="result",
      check=lambda s: (s["target_size"] == 3 and "content differs" in s["notes"][0])
      or f"summary {s}")
def _(tmp: Path) -> Any:
    path = tmp / "karate.gph"
    path.write_text("p edge 6 5\ne 1 2\ne 2 3\ne 3 4\ne 4 5\ne 5 6\n")  # a 6-node path: |S*| = 3
    run = _solve(path, "--json")
    return lambda: _summary(run())


@case("qubo-solver-option-unknown-value", "a solver option out of its model: named, before work",
      "test_qubo_solver_option.py::test_bad_options_are_refused_naming_the_option",
      needs=("--solver-option", "option first_sweeps"))
def _(tmp: Path) -> Any:
    return _solve(_karate(tmp), "--solver-option", "first_sweeps=-1", "--out", tmp / "out")


@case("qubo-library-farm-named-karate", "the library sweep scores a file by its content",
      "test_qubo_library_sweep.py::test_a_file_named_like_a_known_instance_is_matched_by_content",
      expect="result",
      check=lambda rows: (rows[0]["best_known"] == "10" and rows[0]["best_known_source"]
                          == "QOBLIB table") or f"rows {rows}")
def _(tmp: Path) -> Any:
    import csv

    lib = tmp / "lib"
    lib.mkdir()
    shutil.copy(REAL / "qoblib_subset" / "instances" / "farm.gph", lib / "karate.gph")
    run = lambda: cli("qubo", "library", lib, "--timeout", "0.02", "--runs", "1",  # noqa: E731
                      "--out", tmp / "out", "--quiet")

    def rows() -> list[dict[str, str]]:
        run()
        with open(tmp / "out" / "library.csv", newline="") as fh:
            return list(csv.DictReader(fh))
    return rows
