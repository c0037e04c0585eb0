"""BKS-gap and the BKS table: provenance, only-better updates, contradiction checks."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from conftest import REFERENCE_DIR

from neuromark.benchmarks.qubo import bks_gap, energy, load_bks, mis_workload
from neuromark.benchmarks.qubo.bks import BKS_PATH, BKSRow, BKSTable, check_row, encode_solution
from neuromark.benchmarks.qubo.exact import exact_mis
from neuromark.benchmarks.qubo.gap import cost_at_gap
from neuromark.errors import DataError, MetricError

REFERENCE = REFERENCE_DIR / "qubo_mis_bks.csv"


def test_gap_sign_and_threshold():
    assert bks_gap(-95.0, -100.0) == pytest.approx(0.05)
    assert bks_gap(-101.0, -100.0) == pytest.approx(-0.01)  # beating the BKS is negative
    assert bks_gap(-100.0, -100.0) == 0.0
    assert bks_gap(3.0, 2.0) == pytest.approx(0.5)  # positive targets too
    assert cost_at_gap(-100.0, 0.05) == pytest.approx(-95.0)
    with pytest.raises(MetricError, match="non-zero"):
        bks_gap(-1.0, 0.0)
    with pytest.raises(MetricError, match="finite"):
        bks_gap(float("nan"), -1.0)


def test_shipped_table_has_provenance_and_exact_small_rows():
    table = load_bks()
    assert table.path == BKS_PATH and len(table) >= 160
    for row in table.rows.values():
        assert row.method in ("exact", "heuristic") and row.solver and row.date
        if row.num_vertices < 50:
            assert row.method == "exact"
        if row.method == "heuristic":
            assert float(row.budget_s) > 0 and row.solver_seed != ""


def test_shipped_rows_solutions_have_their_costs():
    table = load_bks()
    for row in table.rows.values():
        if row.num_vertices <= 500:  # bigger ones are checked when a sweep uses them
            check_row(row, where="shipped")


def test_shipped_exact_rows_equal_reference():
    if not REFERENCE.is_file():
        pytest.skip("reference CSV absent")
    ref = load_bks(REFERENCE)
    ours = load_bks()
    for key, row in ref.rows.items():
        if key[0] < 50:
            assert ours.target(*key) == row.cost
        elif key[0] <= 100:  # exact in ours: never worse than a heuristic value
            assert ours.get(*key).method == "exact"
            assert ours.target(*key) <= row.cost


def _row(n, d, s, cost, x=None):
    return BKSRow(n, d, s, cost, "exact", "test", "0", "", "", "2026-01-01",
                  encode_solution(x) if x is not None else "")


def test_offer_only_replaces_with_better_cost():
    table = BKSTable()
    assert table.offer(_row(10, 0.1, 0, -5.0))
    assert not table.offer(_row(10, 0.1, 0, -5.0))
    assert not table.offer(_row(10, 0.1, 0, -4.0))
    assert table.offer(_row(10, 0.1, 0, -7.0))
    assert table.target(10, 0.1, 0) == -7.0


def test_roundtrip_and_solution_encoding(tmp_path):
    w = mis_workload(25, 0.1, 2)
    x = exact_mis(25, w.edges)
    table = BKSTable([_row(25, 0.1, 2, energy(w.Q, x), x)])
    path = table.save(tmp_path / "bks.csv")
    back = load_bks(path)
    assert back.get(25, 0.1, 2).solution().tolist() == x.tolist()
    check_row(back.get(25, 0.1, 2), w)


def test_save_is_atomic_with_the_usual_permissions(tmp_path):
    import os

    table = BKSTable([_row(10, 0.1, 0, -7.0)])
    old = os.umask(0o027)
    try:
        path = table.save(tmp_path / "bks.csv")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o640  # 0666 less the umask, not a fixed 0644
    assert [p.name for p in tmp_path.iterdir()] == ["bks.csv"]  # no temp file left
    assert load_bks(path).target(10, 0.1, 0) == -7.0


def test_row_below_exact_optimum_is_rejected():
    # exact optimum of (10, 0.1, 0) is -7; a table claiming -8 contradicts the workload
    with pytest.raises(DataError, match=r"n=10, density=0.1, seed=0: cost -8 is below the "
                                        r"exact optimum -7"):
        check_row(_row(10, 0.1, 0, -8.0), where="my.csv")


def test_rows_contradicting_the_workload():
    with pytest.raises(DataError, match=r"cost -11 is outside \[-10, 0\]"):
        check_row(_row(10, 0.1, 0, -11.0))
    w = mis_workload(100, 0.05, 0)
    x = np.zeros(100, dtype=np.int8)
    x[:3] = 1
    with pytest.raises(DataError, match="stored solution has cost"):
        check_row(_row(100, 0.05, 0, -44.0, x), w)


def test_neurobench_format_loads_and_bad_files(tmp_path):
    nb = tmp_path / "nb.csv"
    nb.write_text("num_vertices,density,random_seed,c_optimal\n10,0.05,2,-9\n")
    assert load_bks(nb).target(10, 0.05, 2) == -9.0
    bad = tmp_path / "bad.csv"
    bad.write_text("n,d\n1,2\n")
    with pytest.raises(DataError, match="expected columns"):
        load_bks(bad)
    dup = tmp_path / "dup.csv"
    dup.write_text("num_vertices,density,random_seed,c_optimal\n10,0.05,2,-9\n10,0.05,2,-8\n")
    with pytest.raises(DataError, match=r"dup.csv:3: duplicate"):
        load_bks(dup)
    with pytest.raises(DataError, match="no best-known solution"):
        load_bks(nb).target(10, 0.05, 3)
    with pytest.raises(DataError, match="not found"):
        load_bks(tmp_path / "missing.csv")


def test_reference_csv_columns_are_what_we_expect():
    if not REFERENCE.is_file():
        pytest.skip("reference CSV absent")
    with REFERENCE.open() as handle:
        assert csv.DictReader(handle).fieldnames == ["num_vertices", "density", "random_seed",
                                                     "c_optimal"]


def test_cli_bks_recomputes_and_only_improves(tmp_path, capsys):
    from neuromark.cli import main

    table = tmp_path / "t.csv"
    table.write_text("num_vertices,density,random_seed,c_optimal\n10,0.25,0,-3\n")
    args = ["qubo", "bks", "--sizes", "10", "--densities", "0.25", "--seeds", "0", "1",
            "--table", str(table)]
    assert main(args) == 0
    back = load_bks(table)
    assert back.target(10, 0.25, 0) == -6.0 and back.target(10, 0.25, 1) == -6.0  # exact
    assert back.get(10, 0.25, 0).method == "exact" and back.get(10, 0.25, 0).solution_hex
    assert "2 row(s) improved or added" in capsys.readouterr().out
    assert main(args) == 0  # nothing better to find: rows kept
    assert "0 row(s) improved" in capsys.readouterr().out
    assert main(["qubo", "bks", "--budget", "-1", "--table", str(table)]) == 1
    assert "--budget: timeout must be a positive number" in capsys.readouterr().err


@pytest.mark.parametrize(("row", "column"), [
    ("10,nan,2,-9", "density"), ("10,0.05,2,inf", "cost"), ("10,0.05,2,-1e400", "cost"),
    ("0,0.05,2,-9", "num_vertices"), ("10,0.05,-1,-9", "random_seed"), ("10,1.5,2,-9", "density"),
    ("10,0.05,4294967296,-9", "random_seed")])
def test_bks_value_types_named_by_file_line_and_column(tmp_path, row, column):
    table = tmp_path / "t.csv"
    table.write_text(f"num_vertices,density,random_seed,c_optimal\n10,0.05,1,-9\n{row}\n")
    with pytest.raises(DataError, match=rf"t\.csv:3: BKS column {column} = .*: expected"):
        load_bks(table)
    table.write_text("num_vertices,density,random_seed,cost,solution_hex\n10,0.05,1,-9,zz\n")
    with pytest.raises(DataError, match=r"t\.csv:2: BKS column solution_hex = 'zz'"):
        load_bks(table)
    table.write_text("num_vertices,density,random_seed,cost\n1.5,0.05,1,-9\n")
    with pytest.raises(DataError, match=r"t\.csv:2: bad BKS row"):
        load_bks(table)


def test_bks_table_is_utf8_text(tmp_path):
    table = tmp_path / "t.csv"
    table.write_bytes(b"num_vertices,density,random_seed,c_optimal,method\n10,0.05,1,-9,\xe9\n")
    with pytest.raises(DataError, match=r"t\.csv: a BKS table is UTF-8 text \(byte 0xe9"):
        load_bks(table)
