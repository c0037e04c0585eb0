"""The hostile-input sweep (``bench/hostile_sweep.py``, issue 32): every case names the test in
tests/ that checks its rule, that test exists, and the sweep's own classification works (a
fast subset of cases is run here: the whole sweep takes about a minute)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
hostile_sweep = pytest.importorskip("hostile_sweep")
from hostile_common import CASES  # noqa: E402


def _tests_in(file: Path) -> set[str]:
    """``name`` and ``Class::name`` of every test function in ``file``."""
    found = set()
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef):
            found |= {f"{node.name}::{f.name}" for f in node.body
                      if isinstance(f, ast.FunctionDef) and f.name.startswith("test")}
    return found


def test_every_sweep_case_names_an_existing_test():
    tests = Path(__file__).parent
    inherited = {f"{c}::test_synthesize_writes_a_verified_deterministic_layout"
                 for c in ("TestGen4",)}  # DatasetTestCase's shared test, run per entry
    missing = []
    for case in CASES:
        file, _, name = case.test.partition("::")
        if not (tests / file).is_file() or name not in _tests_in(tests / file) | inherited:
            missing.append(f"{case.id}: {case.test}")
    assert not missing, missing
    assert len({c.id for c in CASES}) == len(CASES) >= 70


def test_sweep_classifies_a_fast_subset(tmp_path, monkeypatch, capsys):
    """The DVS and NIR cases (about a second): each a clear error, and the table says so."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))  # restored after
    assert hostile_sweep.main(["-k", "dvs-"]) == 0
    assert hostile_sweep.main(["-k", "nir-"]) == 0
    out = capsys.readouterr().out
    assert "7 cases in" in out and "6 cases in" in out
    assert out.count("clear error") == 13 + 2  # rows, plus the two count lines


def test_sweep_outcomes_data_loss_silent_number_crash_and_unclear(tmp_path, monkeypatch):
    """The classifier can fail a case: a deleted user file is data loss, a finished run
    where an error was due a silent wrong number, any other exception a crash, an error
    without the case's names unclear."""
    from hostile_common import Case

    from neuromark.errors import DataError

    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)

    def deletes(tmp):
        (tmp / "NOTES.txt").write_text("mine")
        return lambda: (tmp / "NOTES.txt").unlink()

    def raises(exc):
        def build(tmp):
            def act():
                raise exc
            return act
        return build

    cases = {"data loss": Case("a", "r", "t", deletes),
             "silent wrong number": Case("b", "r", "t", lambda tmp: lambda: 0.25),
             "crash": Case("c", "r", "t", raises(ZeroDivisionError("x"))),
             "unclear error": Case("d", "r", "t", raises(DataError("bad input")), needs=("f.dat",)),
             "clear error": Case("e", "r", "t", raises(DataError("f.dat: record 3: time order")),
                                 needs=("f.dat", "record 3")),
             "correct result": Case("f", "r", "t", lambda tmp: lambda: 1.0, expect="result",
                                    check=lambda v: v == 1.0 or "wrong")}
    for want, case in cases.items():
        assert hostile_sweep.run_case(case, tmp_path)[0] == want, want
