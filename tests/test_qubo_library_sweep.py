"""`neuromark qubo library DIR`: best-known values with their source, one row per instance x
solver, resume, QOBLIB CSV per solver, bad input refused before any work. On the shipped
QOBLIB subset (tests/fixtures/realdata/qubo_mis/qoblib_subset, QOBLIB's own layout)."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from neuromark.benchmarks.qubo.known import load_table
from neuromark.benchmarks.qubo.library_known import best_known_for
from neuromark.errors import DataError

SUBSET = Path(__file__).parent / "fixtures" / "realdata" / "qubo_mis" / "qoblib_subset"
INSTANCES = SUBSET / "instances"
#: QOBLIB's results table for these four (all proven, literature equal).
QOBLIB = {"farm": 10, "ibm32": 13, "johnson8-2-4": 7, "mammalia-kangaroo-interactions": 4}


def _digests(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_best_known_from_the_solution_file_and_the_table():
    for name, size in QOBLIB.items():
        known = best_known_for(INSTANCES / f"{name}.gph")
        assert known is not None and known.value == size and known.proven
        assert (known.source, known.reference) == ("QOBLIB solution file", f"{name}.opt.sol")
        assert known.literature == size and known.notes == ()
    # the literature's best comes with QOBLIB's table rows (known_optima.csv, by content)
    rows = {r.instance: r for r in load_table()}
    assert len(rows) == 45 and rows["mammalia-kangaroo-interactions"].value == 4  # alias
    assert (rows["frb53-24-1"].value, rows["frb53-24-1"].literature) == (52, 53)
    assert not rows["frb53-24-1"].proven and rows["karate"].proven


def test_table_by_content_bst_solution_and_a_wrong_solution_file(tmp_path):
    (tmp_path / "instances").mkdir()
    shutil.copy(INSTANCES / "farm.gph", tmp_path / "instances")
    known = best_known_for(tmp_path / "instances" / "farm.gph")  # no solution file
    assert (known.value, known.proven, known.source) == (10, True, "QOBLIB table")
    assert known.reference.startswith("known_optima.csv row farm") and known.solution is None
    # a .bst.sol beside the instance: proven because the table stars the same value
    shutil.copy(SUBSET / "solutions" / "farm.opt.sol", tmp_path / "instances" / "farm.bst.sol")
    known = best_known_for(tmp_path / "instances" / "farm.gph")
    assert (known.source, known.reference, known.proven) == ("QOBLIB solution file",
                                                             "farm.bst.sol", True)
    # nodes 4 and 6 share farm's edge "e 6 4": no independent set, refused, naming the file
    (tmp_path / "instances" / "farm.bst.sol").write_text("# Objective value = 2\n4\n6\n")
    with pytest.raises(DataError, match="farm.bst.sol"):
        best_known_for(tmp_path / "instances" / "farm.gph")
    # a smaller independent set than the table's: the table's 10 is used, and it is said
    (tmp_path / "instances" / "farm.bst.sol").write_text("# Objective value = 1\n4\n")
    known = best_known_for(tmp_path / "instances" / "farm.gph")
    assert (known.value, known.source) == (10, "QOBLIB table")
    assert "gives |S| = 1" in known.notes[0] and "the larger is used" in known.notes[0]


def test_a_file_named_like_a_known_instance_is_matched_by_content(tmp_path):
    """farm's graph saved as karate.gph gets farm's value (its content), not karate's 20;
    a 5-node path saved as karate.gph gets none, and the sweep says why."""
    from neuromark.benchmarks.qubo.library_sweep import discover

    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(INSTANCES / "farm.gph", lib / "karate.gph")
    known = best_known_for(lib / "karate.gph")
    assert (known.value, known.source) == (10, "QOBLIB table")
    assert "karate" in known.notes[0] and "value 20 is not used" in known.notes[0]
    (lib / "karate.gph").write_text("p edge 5 4\ne 1 2\ne 2 3\ne 3 4\ne 4 5\n")
    assert best_known_for(lib / "karate.gph") is None
    entries, skipped = discover(lib)
    assert entries == [] and skipped[0][0] == "karate.gph"
    assert "content differs" in skipped[0][1] and "value 20 is not used" in skipped[0][1]


pytest.importorskip("numba")


def _run(tmp_path, *extra):
    from neuromark.cli import main

    return main(["qubo", "library", str(INSTANCES), "--solvers", "neuromark-sa",
                 "--timeout", "0.05", "--runs", "2", "--out", str(tmp_path / "out"),
                 "--quiet", *extra])


def test_sweep_rows_resume_and_submission(tmp_path, capsys, monkeypatch):
    before = _digests(SUBSET)
    assert _run(tmp_path) == 0
    out = tmp_path / "out"
    with open(out / "library.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["instance"] for r in rows] == ["farm", "mammalia-kangaroo-interactions",
                                             "johnson8-2-4", "ibm32"]  # by n, then name
    for r in rows:
        assert int(r["best_known"]) == QOBLIB[r["instance"]]
        assert r["best_known_source"] == "QOBLIB solution file"
        assert r["best_known_reference"] == f"{r['instance']}.opt.sol"
        assert r["tau_opt_s"] != "" and float(r["tts99_s"]) <= float(r["tts99_at_timeout_s"])
        assert r["solver"] == "neuromark-sa" and r["runs"] == "2"
        found = int(r["best_found"])
        assert float(r["gap"]) == pytest.approx((QOBLIB[r["instance"]] - found)
                                                / QOBLIB[r["instance"]])
        assert 0.0 <= float(r["over_deadline_fraction"]) <= 1.0
    report = (out / "report.md").read_text()
    assert "| farm | 17 | 39 | 10 (opt.sol*) | 10 | neuromark-sa |" in report
    assert (out / "gap.png").stat().st_size > 0
    from neuromark.benchmarks.qubo.qoblib_submission import COLUMNS

    for name in QOBLIB:  # qoblib_submission.write_submission_dir's layout, one .mst per run
        folder = out / "submissions" / "neuromark-sa" / name
        with open(folder / f"{name}_summary.csv", newline="") as fh:
            sub = list(csv.DictReader(fh))
        assert len(sub) == 1 and tuple(sub[0]) == COLUMNS and sub[0]["Problem"] == name
        assert sub[0]["# Runs"] == "2" and "neuromark qubo library" in sub[0]["Reference"]
        assert sorted(p.name for p in (folder / "solutions").iterdir()) == [
            f"{name}_solution_000.mst", f"{name}_solution_001.mst"]
        assert (folder / "README.md").is_file()
        series = json.loads((folder / f"{name}_objective_time_series.json").read_text())
        assert len(series) == 2 and max(run[-1]["Incumbent"] for run in series) == float(
            sub[0]["Best Objective Value"])
    unit = json.loads((out / "units" / "farm--neuromark-sa.json").read_text())
    assert len(unit["result"]["runs"]) == 2 and (out / "solutions" / "neuromark-sa" /
                                                 "farm.sol").is_file()
    assert _digests(SUBSET) == before  # no input file changed

    # resume: nothing is solved again, the same rows come back
    import neuromark.benchmarks.qubo.library_sweep as sweep_mod

    def boom(*a, **k):  # noqa: ANN002, ANN003
        raise AssertionError("a saved unit was solved again")

    monkeypatch.setattr(sweep_mod, "run_unit", boom)
    assert _run(tmp_path) == 0
    with open(out / "library.csv", newline="") as fh:
        assert list(csv.DictReader(fh)) == rows
    # --report-only: another solver's units are not solved, only listed as not run
    from neuromark.cli import main

    assert main(["qubo", "library", str(INSTANCES), "--solvers", "neuromark-sa,neuromark-tabu",
                 "--timeout", "0.05", "--runs", "2", "--out", str(out), "--quiet",
                 "--report-only"]) == 0
    assert "farm x neuromark-tabu: not run" in (out / "report.md").read_text()
    with open(out / "library.csv", newline="") as fh:
        assert list(csv.DictReader(fh)) == rows
    # other settings into the same folder: refused, naming them
    assert _run(tmp_path, "--seed", "5") != 0
    assert "seed" in capsys.readouterr().err


def test_bad_input_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    import sys

    from neuromark.cli import main

    out = tmp_path / "out"
    base = ["qubo", "library", str(INSTANCES), "--out", str(out), "--quiet"]
    assert main([*base, "--solvers", "no-such-solver"]) != 0
    assert main([*base, "--solvers", "neuromark-sa:sweeps=-3"]) != 0
    assert main([*base, "--solvers", "neuromark-sa:oops"]) != 0
    assert main([*base, "--timeout", "0"]) != 0
    assert main([*base, "--only", "nosuch"]) != 0
    err = capsys.readouterr().err
    assert "no-such-solver" in err and "KEY=VALUE" in err and "nosuch" in err
    assert "Traceback" not in err and not out.exists()
    monkeypatch.setitem(sys.modules, "chszlablib", None)  # the kamis extra absent
    assert main([*base, "--solvers", "neuromark-sa,kamis"]) != 0
    assert "neuromark[kamis]" in capsys.readouterr().err and not out.exists()
    bad = tmp_path / "lib"
    bad.mkdir()
    (bad / "broken.gph").write_text("p edge 3 1\ne 1 9\n")
    assert main(["qubo", "library", str(bad), "--out", str(out), "--quiet"]) != 0
    assert "broken.gph:2" in capsys.readouterr().err and not out.exists()
    (bad / "broken.gph").unlink()
    shutil.copy(INSTANCES / "farm.gph", bad)
    shutil.copy(INSTANCES / "farm.gph", bad / "farm.dimacs")
    assert main(["qubo", "library", str(bad), "--out", str(out), "--quiet"]) != 0
    assert "two instance files named 'farm'" in capsys.readouterr().err and not out.exists()


CHECKER = Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "qoblib" / "misc" / \
    "check_submission.py"


def test_qoblib_s_checker_accepts_the_sweep_s_submission(tmp_path):
    """QOBLIB's own misc/check_submission.py (../shared/tools/qoblib) on the sweep's folder."""
    import subprocess
    import sys

    if not CHECKER.is_file():
        pytest.skip(f"QOBLIB's checker is absent: {CHECKER}")
    assert _run(tmp_path, "--only", "farm,ibm32") == 0
    root = tmp_path / "out" / "submissions" / "neuromark-sa"
    done = subprocess.run([sys.executable, str(CHECKER), str(root), "--strict-problem-match"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_shipped_subset_is_qoblib_s_bytes():
    """Every file of the subset has the size and SHA-256 its README lists (copied unchanged)."""
    listed = {}
    for line in (SUBSET / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[2].isdigit():
            listed[cells[0]] = (int(cells[2]), cells[3])
    shipped = {str(p.relative_to(SUBSET)) for p in SUBSET.rglob("*") if p.is_file()}
    assert set(listed) == shipped - {"README.md"} and len(listed) == 10
    for name, (size, digest) in listed.items():
        data = (SUBSET / name).read_bytes()
        assert len(data) == size and hashlib.sha256(data).hexdigest() == digest, name


def test_the_shipped_open_instances_are_qoblib_s_bytes():
    """The two open instances (bench/qubo_open_instances.py) unpack to the size and SHA-256
    their README lists, and their known value is found by content (QOBLIB's 52 and 58)."""
    import lzma

    from neuromark.benchmarks.qubo.known import known_value
    from neuromark.benchmarks.qubo.library import load_instance

    folder = SUBSET.parent / "qoblib_open"
    listed = {}
    for line in (folder / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1].isdigit():
            listed[cells[0]] = (int(cells[1]), cells[2])
    assert sorted(listed) == ["frb53-24-1.gph.xz", "frb59-26-2.gph.xz"]
    for name, (size, digest) in listed.items():
        data = lzma.decompress((folder / name).read_bytes())
        assert len(data) == size and hashlib.sha256(data).hexdigest() == digest, name
    values = [known_value(load_instance(folder / name)).value for name in sorted(listed)]
    assert values == [52, 58]
