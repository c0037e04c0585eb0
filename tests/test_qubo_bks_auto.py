"""The BKS a QUBO run uses (issue 33, point 2): the advice of the "no best-known solution"
error works (``qubo bks`` into the cache, then the rerun reads it), and ``bks: auto``
computes missing rows before the sweep within a stated budget, with their provenance."""

from __future__ import annotations

import itertools
import json
import re
import shlex
from datetime import date

import numpy as np
import pytest

from neuromark.benchmarks.qubo import mis_workload
from neuromark.benchmarks.qubo.bks import BKSTable, load_bks
from neuromark.benchmarks.qubo.bks_auto import MIN_HEURISTIC_S, fill_missing
from neuromark.benchmarks.qubo.solvers import SolveResult
from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.errors import ConfigError
from neuromark.registry import solvers

pytest.importorskip("numba")


class Nothing:
    """Test solver: the empty set (cost 0), at once."""

    name = "test-nothing"

    def solve(self, Q, timeout_s, seed, *, target=None):
        return SolveResult(x=np.zeros(Q.shape[0], dtype=np.int8), cost=0.0, trace=[(0.0, 0.0)])


@pytest.fixture(autouse=True)
def _register():
    solvers.register("test-nothing", Nothing)
    yield
    solvers._entries.pop("test-nothing", None)


def brute_force_mis(n, edges):
    """Size of a maximum independent set by trying every subset (n <= 12)."""
    best = 0
    for size in range(n, 0, -1):
        for subset in itertools.combinations(range(n), size):
            chosen = set(subset)
            if not any(int(a) in chosen and int(b) in chosen for a, b in edges):
                return size
    return best


def sweep(tmp_path, extra=""):
    path = tmp_path / "sweep.yaml"
    path.write_text(f"""task: qubo
benchmark: {{id: auto-bks}}
workloads: {{sizes: [10], densities: [0.1], seeds: [7]}}
solvers: [{{name: test-nothing}}]
fixed_timeout: {{timeouts: [0.01]}}
plots: false
{extra}""")
    return path


def test_advice_of_the_missing_bks_error_works(tmp_path, capsys):
    cache = tmp_path / "cache"
    config = sweep(tmp_path)  # graph seed 7: not in the shipped table (seeds 0-4)
    run = ["run", str(config), "--out", str(tmp_path / "o"), "--quiet", "--cache-dir", str(cache)]
    assert main(run) == 1
    err = capsys.readouterr().err
    assert "no best-known solution for n=10, density=0.1, seed=7" in err
    advice = re.search(r"`(neuromark qubo bks [^`]*)`", err).group(1)
    assert not (tmp_path / "o").exists()  # nothing created for a run that could not start
    assert main([*shlex.split(advice)[1:], "--cache-dir", str(cache)]) == 0  # as advised
    row = load_bks(cache / "qubo" / "bks.csv").get(10, 0.1, 7)
    w = mis_workload(10, 0.1, 7)
    assert row.cost == -brute_force_mis(10, w.edges) and row.method == "exact"
    capsys.readouterr()
    assert main(run) == 0, capsys.readouterr().err  # the rerun reads the cache's table
    saved = json.loads((tmp_path / "o" / "auto-bks--test-nothing.json").read_text())
    assert saved["scores"]["bks_gap@0.01s"]["value"] == 1.0  # empty set: cost 0 vs BKS < 0


def test_bks_auto_computes_missing_rows_before_the_sweep(tmp_path, capsys):
    cache = tmp_path / "cache"
    config = sweep(tmp_path, "bks: auto\nbks_budget_s: 30\n")
    assert main(["run", str(config), "--out", str(tmp_path / "o"), "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "computing 1 missing best-known solution(s) within 30 s" in out
    table = load_bks(cache / "qubo" / "bks.csv")
    row = table.get(10, 0.1, 7)
    assert row.cost == -brute_force_mis(10, mis_workload(10, 0.1, 7).edges)
    assert (row.method, row.solver, row.date) == ("exact", "neuromark.exact_mis",
                                                   date.today().isoformat())
    assert row.solution_hex  # re-checkable
    assert len(table) == len(load_bks()) + 1  # the shipped rows, plus the new one
    saved = json.loads((tmp_path / "o" / "auto-bks--test-nothing.json").read_text())
    (computed,) = saved["details"]["bks_computed"]
    assert (computed["num_vertices"], computed["random_seed"], computed["method"]) == (10, 7, "exact")
    assert saved["scores"]["bks_gap@0.01s"]["value"] == 1.0


def test_bks_auto_budget_too_small_says_so_before_any_work(tmp_path, capsys):
    cache = tmp_path / "cache"
    config = sweep(tmp_path, "bks: auto\nbks_budget_s: 0.05\n").read_text()
    config = config.replace("sizes: [10]", "sizes: [150]")  # above the exact limit: annealed
    path = tmp_path / "big.yaml"
    path.write_text(config)
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--quiet",
                 "--cache-dir", str(cache)]) == 1
    err = capsys.readouterr().err
    assert "big.yaml:8: a budget of 0.05 s is too small" in err
    assert f"at least {MIN_HEURISTIC_S:g} s of solver time each" in err
    assert "still missing 1 (n=150 d=0.1 seed=7)" in err and "raise bks_budget_s" in err
    assert not (cache / "qubo" / "bks.csv").exists()  # nothing computed, nothing written


def test_exact_rows_that_use_the_budget_up_stop_with_the_rows_found_saved(tmp_path):
    table = BKSTable([], path=tmp_path / "t.csv")
    ticks = iter([0.0, 0.0, 5.0])  # start, before row 1, before row 2 (budget used up)
    with pytest.raises(ConfigError, match=r"the exact optima used it up; still missing 1 "
                                          r"\(n=10 d=0.1 seed=9\).*1 row\(s\) found were saved"):
        fill_missing(table, [(10, 0.1, 8), (10, 0.1, 9)], 1.0, clock=lambda: next(ticks))
    assert list(load_bks(tmp_path / "t.csv").rows) == [(10, 0.1, 8)]


@pytest.mark.parametrize("extra, match", [
    ("bks_budget_s: 5\n", r"c.yaml:7: bks_budget_s: only with bks: auto"),
    ("bks: auto\nbks_budget_s: -1\n", r"bks_budget_s must be positive seconds"),
])
def test_bks_budget_key_is_checked(tmp_path, extra, match):
    from neuromark.benchmarks.qubo.task import TASK
    from neuromark.context import RunContext

    config = parse_yaml(sweep(tmp_path, extra).read_text(), tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=match):
        TASK.plan(config, RunContext.build(cache_dir=tmp_path / "cache"))
