"""docs/qubo.md's QOBLIB MIS library table is what scripts/qubo_library_table.py derives from
the shipped library.csv of the sweep the doc gives the command of (docs/qubo_library_1s.csv);
the columns of that CSV that do not depend on timing re-derive on the shipped QOBLIB subset."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "docs" / "qubo_library_1s.csv"
SUBSET = ROOT / "tests" / "fixtures" / "realdata" / "qubo_mis" / "qoblib_subset" / "instances"
#: Columns that are functions of the instance and the known values only (not of a run).
FIXED = ("instance", "n", "m", "best_known", "best_known_source", "best_known_reference",
         "best_known_proven", "literature_best")


def _script():
    name = "qubo_library_table"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_the_doc_s_table_is_what_the_shipped_csv_gives():
    problems = _script().check()
    assert not problems, "python scripts/qubo_library_table.py --write:\n" + "\n".join(problems)


def test_a_changed_cell_is_found_and_write_restores_it(tmp_path):
    script = _script()
    doc = tmp_path / "qubo.md"
    text = (ROOT / "docs" / "qubo.md").read_text(encoding="utf-8")
    doc.write_text(text.replace("| karate | 34 | 78 | 20 (opt.sol*)", "| karate | 34 | 78 | 21 "
                                "(opt.sol*)", 1), encoding="utf-8")
    problems = script.check(doc)
    assert any(line.startswith("-| karate | 34 | 78 | 21") for line in problems)
    assert script.write(doc) and doc.read_text(encoding="utf-8") == text
    doc.write_text(text.replace("<!-- /qubo-library-table -->", ""), encoding="utf-8")
    with pytest.raises(ValueError, match="0 marked library tables"):
        script.check(doc)


def test_the_shipped_csv_is_the_45_instance_sweep():
    from neuromark.benchmarks.qubo.library_report import read_csv

    rows = read_csv(SHIPPED)
    assert len({r["instance"] for r in rows}) == 45 and len(rows) == 45 * 4 + 35
    for r in rows:  # the row's own arithmetic (library_sweep.unit_row)
        assert r["gap"] == pytest.approx((r["best_known"] - r["best_found"]) / r["best_known"])
        assert r["runs"] == 3 and r["timeout_s"] == 1.0 and 0 <= r["p_success"] <= 1
        if r["tts99_s"] is not None:  # the minimum over tau is at most TTS at the timeout
            assert r["tau_opt_s"] <= r["timeout_s"] and r["tts99_s"] >= r["tau_opt_s"]


def test_the_shipped_subset_re_derives_the_csv_s_fixed_columns(tmp_path):
    """A short sweep (0.05 s, 2 runs) on the four QOBLIB instances that ship in the repository:
    n, m, best-known value, source, reference, proven mark and literature's best equal the
    shipped CSV's (the solvers' figures depend on time and load, and are not re-derived)."""
    pytest.importorskip("numba", reason="neuromark-sa needs numba")
    from neuromark.cli import main

    out = tmp_path / "out"
    assert main(["qubo", "library", str(SUBSET), "--solvers", "neuromark-sa", "--timeout",
                 "0.05", "--runs", "2", "--out", str(out), "--quiet"]) == 0
    fresh = {r["instance"]: [r[c] for c in FIXED] for r in _rows(out / "library.csv")}
    shipped = {r["instance"]: [r[c] for c in FIXED] for r in _rows(SHIPPED)
               if r["instance"] in fresh and r["solver"] == "neuromark-sa"}
    assert len(fresh) == 4 and fresh == shipped
    assert "| farm | 17 | 39 | 10 (opt.sol*) | 10 |" in _script().render(out / "library.csv")
