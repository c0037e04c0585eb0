"""``neuromark leaderboard`` and ``compare`` distrust their input (issue 32.5, 32.3): NaN and
impossible figures are flagged, never hidden or plotted; every string is escaped in HTML and
in the plot's text; malformed results files are skipped with a note naming them; ``--out``
never replaces a page it did not write unless ``--overwrite``."""

from __future__ import annotations

import json
import re

from neuromark.cli import main
from neuromark.identity import BenchmarkIdentity, model_identity
from neuromark.report.compare import compare, format_comparison
from neuromark.report.leaderboard import build_leaderboard
from neuromark.report.runs import read_runs, run_flags
from neuromark.results import Results, Score


def write_run(root, name, acc=0.8, se=0.01, macs=100.0, label=None, **extra):
    folder = root / name
    folder.mkdir(parents=True)
    Results(scores={"classification_accuracy": Score(acc, se),
                    "synaptic_operations": Score({"Effective_MACs": macs, "Effective_ACs": 50.0},
                                                 unit="ops/sample"),
                    **{k: Score(v) for k, v in extra.items()}},
            benchmark=BenchmarkIdentity("toy-bench"), config={"task": "toy"},
            model=model_identity("rsnn", {}, None, label or name)).save(folder / "toy.json")
    return folder


def edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))  # NaN and inf written as JSON's NaN / Infinity tokens


def cell(page, label):
    row = next(r for r in re.findall(r"<tr[^>]*>(.*?)</tr>", page) if f">{label}<" in r)
    # the primary score (a flagged row's badge follows its value)
    return re.findall(r'<td([^>]*)>([^<]*)(?:<span class="badge".*?</span>)?</td>', row)[1]


def test_impossible_value_nan_accuracy_is_flagged(tmp_path):
    good, bad = write_run(tmp_path, "good"), write_run(tmp_path, "bad")
    edit(bad / "toy.json", lambda d: d["scores"]["classification_accuracy"].update(value=float("nan")))
    runs = read_runs([good, bad])
    assert "classification_accuracy: impossible value: nan is not a finite number" \
        in run_flags(runs[1].results)
    page = build_leaderboard(runs, tmp_path / "site").read_text()
    attrs, text = cell(page, "bad")
    assert "flag" in attrs.split('class="')[1]
    assert text.startswith("nan ± 0.01 (impossible: nan is not a finite")
    assert cell(page, "good")[1] == "0.8 ± 0.01"  # a valid figure is shown as before


def test_impossible_value_negative_operation_count_is_flagged_not_plotted(tmp_path):
    good, bad = write_run(tmp_path, "good"), write_run(tmp_path, "bad", macs=-1e308)
    runs = read_runs([good, bad])
    assert "synaptic_operations.Effective_MACs: impossible value: -1e+308 is negative: a count " \
           "or size is not" in run_flags(runs[1].results)
    page = build_leaderboard(runs, tmp_path / "site").read_text()
    row = next(r for r in re.findall(r"<tr[^>]*>(.*?)</tr>", page) if ">bad<" in r)
    assert re.search(r'<td data-sort="[^"]*" class="flag">-1e\+308 \(impossible: ', row)
    assert page.count('src="data:image/png;base64,') == 1  # the plot keeps the valid run only


def test_impossible_value_compare_negative_error_and_overflow(tmp_path, capsys):
    a = write_run(tmp_path, "a", acc=0.2, se=-0.5, r2=-1e308)
    b = write_run(tmp_path, "b", acc=0.3, se=0.01, r2=1e308)
    ra, rb = read_runs([a, b])
    rows = {d.name: d for d in compare(ra, rb)}
    acc = rows["classification_accuracy"]
    assert acc.verdict == "IMPOSSIBLE in A: standard error -0.5 is negative or not finite"
    assert acc.diff is None
    assert rows["r2"].verdict == "NOT FINITE: B - A overflows"
    text = format_comparison(ra, rb, list(rows.values()))
    assert "0.2 ± -0.5 (!)" in text
    assert main(["compare", str(a), str(b)]) == 0
    assert "IMPOSSIBLE in A" in capsys.readouterr().out


def test_escaping_html_and_mathtext_in_labels(tmp_path):
    hostile = r"<script>alert(1)</script>$\frac{$"
    folders = [write_run(tmp_path, "one"), write_run(tmp_path, "two")]
    for folder in folders:  # as a hand-edited results file holds them
        edit(folder / "toy.json", lambda d: d["benchmark"].update(id=r"toy$\frac{$<b>"))
    edit(folders[0] / "toy.json", lambda d: d["model"].update(label=hostile))
    page = build_leaderboard(read_runs(folders), tmp_path / "site").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;$\\frac{$" in page
    assert "<b>" not in page and "toy$\\frac{$&lt;b&gt;" in page
    assert page.count('src="data:image/png;base64,') == 1  # mathtext did not break the plot


def test_malformed_files_skipped_with_a_note(tmp_path, capsys):
    good = write_run(tmp_path, "good")
    parent = write_run(tmp_path, "parent")
    edit(parent / "toy.json", lambda d: d["benchmark"].update(parent=["a", "b"]))
    (good / "list.json").write_text("[1, 2, 3]")
    (good / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    notes: list[str] = []
    runs = read_runs([good, parent], notes)
    assert [r.label for r in runs] == ["good"]
    assert f"note: skipped {good / 'deep.json'}: JSON nested too deep to read" in notes
    assert f"note: skipped {good / 'list.json'}: holds a JSON list, not a results object" in notes
    assert f"note: skipped {parent / 'toy.json'}: benchmark.parent is a list, not a text" in notes
    assert main(["leaderboard", str(good), str(parent), "--out", str(tmp_path / "site")]) == 0
    err = capsys.readouterr().err
    assert "list.json" in err and "benchmark.parent is a list" in err


def test_out_overwrite_rule_keeps_a_users_index(tmp_path, capsys):
    run = write_run(tmp_path, "good")
    site = tmp_path / "mysite"
    site.mkdir()
    (site / "index.html").write_text("<html>my own page</html>")
    assert main(["leaderboard", str(run), "--out", str(site)]) != 0
    assert "not written by neuromark leaderboard" in capsys.readouterr().err
    assert (site / "index.html").read_text() == "<html>my own page</html>"
    assert not (site / "runs").exists()  # refused before anything was written
    assert main(["leaderboard", str(run), "--out", str(site), "--overwrite"]) == 0
    assert main(["leaderboard", str(run), "--out", str(site)]) == 0  # its own page: replaced
    other = tmp_path / "notes"
    other.mkdir()
    (other / "NOTES.txt").write_text("mine")
    assert main(["leaderboard", str(run), "--out", str(other)]) != 0
    assert "holds files and no leaderboard" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == ["NOTES.txt"]


def test_unknown_schema_version_names_the_version_and_what_is_supported(tmp_path, capsys):
    """A results file of schema 9.0 is not 'not a neuromark results file': the message says
    its version and the versions this neuromark reads, in the leaderboard, compare and check."""
    run = write_run(tmp_path, "future")
    edit(run / "toy.json", lambda d: d.update(schema_version="9.0"))
    want = "results schema_version '9.0' is not supported: this neuromark reads 1.0 to 1.3"
    assert main(["compare", str(run / "toy.json"), str(run / "toy.json")]) == 1
    assert want in capsys.readouterr().err
    assert main(["leaderboard", str(run), "--out", str(tmp_path / "site")]) == 1
    err = capsys.readouterr().err
    assert want in err and "toy.json" in err and "not a neuromark results file" not in err
    assert main(["check", str(run)]) == 1
    assert "toy.json: layout/schema: schema_version '9.0' is not a results schema this checker " \
           "reads (1.0, 1.1, 1.2, 1.3)" in capsys.readouterr().out


def test_report_unknown_schema_version_same_wording(tmp_path, capsys):
    """``neuromark report`` (and Results.load under it) words a schema 9.0 file as the
    leaderboard and compare do, naming the file, and writes nothing."""
    run = write_run(tmp_path, "future")
    edit(run / "toy.json", lambda d: d.update(schema_version="9.0"))
    assert main(["report", str(run / "toy.json"), "--out", str(tmp_path / "sub")]) == 1
    err = capsys.readouterr().err
    assert f"{run / 'toy.json'}: results schema_version '9.0' is not supported: this neuromark " \
           "reads 1.0 to 1.3" in err
    assert not (tmp_path / "sub").exists()
