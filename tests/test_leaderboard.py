"""Leaderboard page and ``neuromark compare``: runs read back, flags, combined standard error
by hand, and the page checked in a real headless Chromium (DOM, sorting, plot, screenshot)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from neuromark.cli import main
from neuromark.errors import DataError
from neuromark.identity import BenchmarkIdentity, model_identity
from neuromark.report.compare import compare
from neuromark.report.leaderboard import build_leaderboard
from neuromark.report.runs import flatten_scores, read_runs, run_flags
from neuromark.results import Results, Score

RUNS = {  # folder -> (accuracy, its standard error, MACs, ACs, footprint)
    "run-small": (0.70, 0.03, 100.0, 900.0, 1_000),
    "run-big": (0.90, 0.02, 5_000.0, 20_000.0, 50_000),
    "run-bad": (0.66, 0.03, 8_000.0, 30_000.0, 80_000),
}


def write_runs(root):
    folders = []
    for name, (acc, se, macs, acs, foot) in RUNS.items():
        folder = root / name
        folder.mkdir(parents=True)
        flags = ["diverged: 2 of 10 instances"] if name == "run-bad" else []
        Results(scores={"classification_accuracy": Score(acc, se),
                        "synaptic_operations": Score({"Effective_MACs": macs,
                                                      "Effective_ACs": acs, "Dense": 1e5},
                                                     unit="ops/sample"),
                        "footprint": Score(foot, unit="bytes"),
                        "energy_per_inference": Score("not measured")},
                benchmark=BenchmarkIdentity("toy-bench"), config={"task": "toy"},
                details={"flags": flags}).save(folder / "toy-bench.json")
        (folder / "manifest.json").write_text('{"not": "results"}')
        folders.append(folder)
    return folders


def test_runs_flags_and_compare_by_hand(tmp_path, capsys):
    folders = write_runs(tmp_path)
    runs = read_runs(folders)
    assert [r.label for r in runs] == list(RUNS) and {r.id for r in runs} == {"toy-bench"}
    cells = flatten_scores(runs[0].results)
    assert cells["synaptic_operations.Effective_ACs"].value == 900.0
    assert cells["energy_per_inference"].value == "not measured"
    assert run_flags(runs[2].results) == ["energy_per_inference: not measured",
                                          "diverged: 2 of 10 instances"]
    rows = {d.name: d for d in compare(runs[0], runs[1])}
    acc = rows["classification_accuracy"]
    # 0.90 - 0.70 = 0.20 against sqrt(0.03^2 + 0.02^2) = 0.0361: outside
    assert acc.diff == pytest.approx(0.20) and acc.combined_se == pytest.approx(0.0360555, rel=1e-5)
    assert acc.verdict == "outside SE"
    assert rows["footprint"].verdict == "no standard error"
    assert rows["energy_per_inference"].verdict == "same"
    near = {d.name: d for d in compare(runs[0], runs[2])}["classification_accuracy"]
    assert near.verdict == "within SE"  # |0.66 - 0.70| = 0.04 <= sqrt(2) 0.03 = 0.0424
    assert main(["compare", str(folders[0]), str(folders[1] / "toy-bench.json")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"classification_accuracy\s+0\.7 ± 0\.03\s+0\.9 ± 0\.02\s+\+0\.2\s+0\.036\s+"
                     r"outside SE", out)
    assert [r.label for r in read_runs([tmp_path])] == sorted(RUNS)  # a folder of run folders
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no neuromark results"):
        read_runs([tmp_path / "empty"])


def test_page_files_and_links(tmp_path):
    folders = write_runs(tmp_path / "results")
    assert main(["leaderboard", *map(str, folders), "--out", str(tmp_path / "site")]) == 0
    page = (tmp_path / "site" / "index.html").read_text()
    assert "http" not in page.replace("http-equiv", "")  # nothing from a CDN
    links = [link for link in re.findall(r'href="([^"]+)"', page) if not link.startswith("#")]
    assert re.findall(r'href="(#[^"]+)"', page) == ["#toy-bench-v1.0"]  # the contents
    assert len(links) == 9 and all((tmp_path / "site" / link).is_file() for link in links)
    config = json.loads((tmp_path / "site" / links[1]).read_text())
    assert config == {"task": "toy"}
    assert page.count('src="data:image/png;base64,') == 1


def test_columns_primary_score_first_then_complexity_per_speaker_last(tmp_path):
    """A classification result with per-speaker scores, in the order its task writes them
    (the config's metrics, then the speaker analysis)."""
    folder = tmp_path / "20260101-120000"
    folder.mkdir()
    Results(scores={"footprint": Score(1000, unit="bytes"),
                    "connection_sparsity": Score(0.5),
                    "classification_accuracy": Score(0.8, 0.01),
                    "activation_sparsity": Score(0.9),
                    "synaptic_operations": Score({"Effective_MACs": 0.0, "Effective_ACs": 10.0,
                                                  "Dense": 40.0}, unit="ops/sample"),
                    "accuracy_per_speaker": Score({"3": 0.7, "5": 0.9}, {"3": 0.1, "5": 0.1}),
                    "speaker_accuracy_spread": Score(0.1)},
            benchmark=BenchmarkIdentity("shd"), config={"task": "classification"},
            model=model_identity("rsnn", {}, None, "my-rsnn")).save(folder / "shd--my-rsnn.json")
    page = build_leaderboard(read_runs([folder]), tmp_path / "site").read_text()
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", page)
    assert heads == ["model", "classification_accuracy", "footprint, neuromark rule (bytes)",
                     "connection_sparsity", "activation_sparsity",
                     "synaptic_operations.Effective_MACs (ops/sample)",
                     "synaptic_operations.Effective_ACs (ops/sample)",
                     "synaptic_operations.Dense (ops/sample)", "speaker_accuracy_spread",
                     "accuracy_per_speaker.3", "accuracy_per_speaker.5",
                     "flags", "files", "name", "checkpoint", "run"]  # flags, metadata last
    assert re.findall(r"<th class=fix[^>]*>([^<]*)</th>", page) == ["model", "classification_accuracy"]
    assert ".fix{position:sticky;left:0" in page
    row = re.search(r"<tbody><tr>(.*?)</tr>", page).group(1)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", row)[:2] == ["my-rsnn", "0.8 ± 0.01"]


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
    return found


#: A laptop's width (px): the flag badges must be in view within it.
LAPTOP_WIDTH = 1366


def test_page_in_headless_chromium(tmp_path):
    browser = chromium()
    folders = write_runs(tmp_path / "results")
    site = build_leaderboard(read_runs(folders), tmp_path / "site")
    # a page beside the site loads it in a frame a laptop wide, reads the rows' order and
    # where each flag badge is drawn, clicks the accuracy header twice (the second click
    # sorts descending) and writes what it sees into its own DOM
    probe = tmp_path / "probe.html"
    probe.write_text(f"""<!DOCTYPE html><html><body style="margin:0"><pre id="out">pending</pre>
<iframe id="f" src="{site.as_uri()}" width="{LAPTOP_WIDTH}" height="900" style="border:0">
</iframe><script>
document.getElementById('f').addEventListener('load', () => {{
  const win = document.getElementById('f').contentWindow, doc = win.document;
  const table = doc.querySelector('table.board');
  const heads = Array.from(table.tHead.rows[0].cells).map(c => c.firstChild.textContent);
  const col = heads.indexOf('classification_accuracy');
  const column = () => Array.from(table.tBodies[0].rows).map(r => r.cells[col].firstChild.textContent);
  const badges = Array.from(table.tBodies[0].rows).map(r => {{
    const b = r.cells[col].querySelector('.badge');
    if (!b) return null;
    b.scrollIntoView({{block: 'center', inline: 'nearest'}});
    const box = b.getBoundingClientRect(), style = win.getComputedStyle(b);
    const hit = doc.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return {{text: b.textContent, title: b.title, left: box.left, right: box.right,
             width: box.width, shown: style.visibility === 'visible' && style.display !== 'none',
             onTop: hit === b || b.contains(hit), color: style.backgroundColor}};
  }});
  const before = column();
  table.tHead.rows[0].cells[col].click();
  const ascending = column();
  table.tHead.rows[0].cells[col].click();
  const descending = column();
  document.getElementById('out').textContent = JSON.stringify({{
    rows: table.tBodies[0].rows.length, heads, col, before, ascending, descending, badges,
    flags: doc.querySelectorAll('.flag').length,
    plot: doc.querySelectorAll('img.pareto').length}});
}});
</script></body></html>""")
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu",
              "--allow-file-access-from-files"]
    dom = subprocess.run([*common, "--virtual-time-budget=1000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    seen = json.loads(re.search(r'<pre id="out">(.*?)</pre>', dom, re.S).group(1)
                      .replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert seen["rows"] == 3 and seen["plot"] == 1 and seen["flags"] >= 4
    assert seen["col"] == 1  # the headline score: the first column after the model
    # sorted by the headline, best first, before any click
    assert seen["before"] == ["0.9 ± 0.02", "0.7 ± 0.03", "0.66 ± 0.03"]
    assert seen["ascending"] == ["0.66 ± 0.03", "0.7 ± 0.03", "0.9 ± 0.02"]
    assert seen["descending"] == ["0.9 ± 0.02", "0.7 ± 0.03", "0.66 ± 0.03"]
    # every row is flagged (energy not measured; run-bad also diverged): a badge beside the
    # score, drawn on top, inside a laptop's width
    badges = seen["badges"]
    assert [b["text"] for b in badges] == ["⚑ 1 flag", "⚑ 1 flag", "⚑ 2 flags"]
    assert "diverged: 2 of 10 instances" in badges[2]["title"]
    for badge in badges:
        assert badge["shown"] and badge["onTop"] and badge["width"] > 10, badge
        assert 0 <= badge["left"] and badge["right"] <= LAPTOP_WIDTH, badge
        assert badge["color"] == "rgb(187, 0, 0)"
    shot = tmp_path / "leaderboard.png"
    subprocess.run([*common, f"--screenshot={shot}", f"--window-size={LAPTOP_WIDTH},900",
                    site.as_uri()], capture_output=True, timeout=120)
    assert shot.is_file() and shot.stat().st_size > 10_000
    import numpy as np
    from PIL import Image  # matplotlib's dependency

    image = Image.open(shot).convert("RGB")
    assert image.width == LAPTOP_WIDTH
    red = int((np.asarray(image) == (187, 0, 0)).all(axis=-1).sum())
    assert red > 3 * 200  # three solid badges (and the flagged rows' edge) in the screenshot
