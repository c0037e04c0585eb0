"""``neuromark leaderboard``: one static HTML page comparing the models run on each benchmark.

``site/index.html`` holds, per benchmark (id, version), one table with one row per model
run on it, sorted by the headline score (best first, :func:`headline_order`), a red ⚑
badge beside that score on every row with flags (:func:`flag_badge`: visible at a laptop's
width, the flags in its tooltip), labelled by the model's label (★ marks the shipped baselines,
:func:`shipped_baselines`): the headline first, the benchmark's primary score and the
complexity scores, then the other scores and the breakdowns (per speaker, per size)
(:func:`score_columns`; value ± standard error, units in the header; the label and primary
score stay in view when the table scrolls sideways), and last the run's flags ("not
measured", diverged instances, overruns, untrained weights, ties), links to each run's
results JSON, config and provenance (copied beside the page under ``runs/``), its registry
or class name, checkpoint digest and folder; sorting by any column on a click; a table of
contents of the benchmarks at the top; and where the
runs have an accuracy
(or error) and synaptic operations, the score-vs-operations plot with its Pareto front
(log operations, footprint as marker area), inlined as a PNG. No server, no CDN: the page
and the files beside it are all there is.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
import shutil
from collections import defaultdict
from pathlib import Path

from neuromark.errors import DataError
from neuromark.plotting import plot_pareto
from neuromark.report.runs import (
    COMPLEXITY,
    Cell,
    Run,
    benchmark_title,
    derived_note,
    flatten_scores,
    primary_score,
    run_flags,
)
from neuromark.results import FOOTPRINT_RULE_LABELS

#: Scores the Pareto plot uses as its y axis, in order of preference: (name, higher is better).
PARETO_SCORES = (("classification_accuracy", True), ("r2", True), ("sMAPE", False),
                 ("MSE", False))

_SORT_JS = """
document.querySelectorAll('table.board th').forEach(th => th.addEventListener('click', () => {
  const table = th.closest('table'), body = table.tBodies[0], col = th.cellIndex;
  const asc = th.dataset.order !== 'asc';
  table.querySelectorAll('th').forEach(h => delete h.dataset.order);
  th.dataset.order = asc ? 'asc' : 'desc';
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = a.cells[col].dataset.sort, y = b.cells[col].dataset.sort;
    const nx = parseFloat(x), ny = parseFloat(y);
    const c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
    return asc ? c : -c;
  });
  rows.forEach(r => body.appendChild(r));
}));
document.querySelectorAll('table.board').forEach(table => {  // fixed columns side by side
  let left = 0;
  for (const th of table.tHead.rows[0].cells) {
    if (!th.classList.contains('fix')) break;
    const col = th.cellIndex, x = left;
    Array.from(table.rows).forEach(r => { r.cells[col].style.left = x + 'px'; });
    left += th.offsetWidth;
  }
});
"""

_STYLE = ("body{font-family:sans-serif;margin:2em;line-height:1.4}"
          "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;"
          "font-size:90%}th{cursor:pointer;background:#f3f3f3}th[data-order=asc]::after{content:' ▲'}"
          "th[data-order=desc]::after{content:' ▼'}.flag{color:#b00;font-weight:bold}"
          "img{max-width:48em}.note{color:#555;font-size:90%}.wide{overflow-x:auto}"
          ".fix{position:sticky;left:0;z-index:1;background:#fff}th.fix{background:#f3f3f3}"
          ".base{color:#06c;font-size:85%;white-space:nowrap}"
          ".badge{display:inline-block;margin-left:.4em;padding:0 .35em;border-radius:.6em;"
          "background:#b00;color:#fff;font-size:80%;font-weight:bold;white-space:nowrap;"
          "cursor:help}tr.flagged td.fix:first-child{box-shadow:inset 4px 0 #b00}"
          ".derived{color:#850;font-weight:bold}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "run"


def _plain(text: str) -> str:
    """``text`` for matplotlib, shown as written: ``$`` escaped, so no mathtext is parsed."""
    return text.replace("$", r"\$")


def _format(cell: Cell | None) -> tuple[str, str]:
    """(text shown, sort key) of a cell."""
    if cell is None:
        return "—", ""
    if isinstance(cell.value, str):
        return cell.value, cell.value
    text = f"{cell.value:.6g}"
    if cell.error is not None:
        text += f" ± {cell.error:.2g}"
    if cell.problem:
        text += f" (impossible: {cell.problem})"
    return text, repr(float(cell.value))


def _copy_run(run: Run, index: int, out: Path) -> dict[str, str]:
    """Copy the run's JSON (and raw sidecar) under ``out/runs/``, write its config and
    provenance beside it; returns the relative links."""
    folder = out / "runs" / f"{index:03d}-{_slug(run.label)}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / run.path.name
    shutil.copyfile(run.path, target)
    named = json.loads(run.path.read_text()).get("raw_sidecar")  # only the sidecar it names
    sidecar = run.path.parent / Path(named).name if isinstance(named, str) else None
    if sidecar is not None and sidecar.is_file():
        shutil.copyfile(sidecar, folder / sidecar.name)
    stem = run.path.stem
    links = {"json": target}
    for part, data in (("config", run.results.config), ("provenance", run.results.provenance)):
        path = folder / f"{stem}.{part}.json"
        path.write_text(json.dumps(data, indent=2, default=str))
        links[part] = path
    return {k: v.relative_to(out).as_posix() for k, v in links.items()}


def _pareto(runs: list[Run], cells: list[dict[str, Cell]], out: Path, bench: str) -> str:
    """An <img> of the score-vs-ops plot for these runs, or a note saying why there is none."""
    for name, higher in PARETO_SCORES:
        points = []
        for run, row in zip(runs, cells):
            score = row.get(name)
            macs = row.get("synaptic_operations.Effective_MACs")
            acs = row.get("synaptic_operations.Effective_ACs")
            if score is None or macs is None or acs is None \
                    or not all(isinstance(c.value, float) and not c.problem
                               for c in (score, macs, acs)):
                continue  # impossible figures are flagged in the table, never plotted
            ops = float(macs.value) + float(acs.value)  # type: ignore[arg-type]
            if not 0 < ops < math.inf:
                continue
            foot = row.get("footprint")
            size = float(foot.value) if foot is not None and isinstance(foot.value, float) \
                and not foot.problem else 0.0
            points.append((ops, float(score.value), _row_name(run, runs), size))  # type: ignore[arg-type]
        if points:
            path = out / f"pareto-{_slug(bench)}.png"
            plot_pareto([p[0] for p in points], [p[1] for p in points],
                        [_plain(p[2]) for p in points], path, sizes=[p[3] for p in points],
                        score_name=_plain(name), higher_is_better=higher, title=_plain(bench))
            data = base64.b64encode(path.read_bytes()).decode()
            return (f'<img class="pareto" alt="{html.escape(name)} vs operations, {html.escape(bench)}"'
                    f' src="data:image/png;base64,{data}">')
    return ('<p class="note">No accuracy-vs-operations plot: these runs have no '
            'synaptic_operations with an accuracy or error score.</p>')


def score_columns(runs: list[Run], cells: list[dict[str, Cell]]) -> tuple[list[str], list[str]]:
    """(the score columns before the run's identity and flags, those after): the
    benchmark's primary score (:func:`~neuromark.report.runs.primary_score` of its first run
    with one), the complexity scores (:data:`COMPLEXITY` order), the other scores, and last
    the breakdowns (per-speaker, per-size: names with ``_per_`` or ``[``), each group in the
    order the results list them."""
    seen = list(dict.fromkeys(name for row in cells for name in row))
    primary = _primary(runs)
    base = {name: name.split(".")[0] for name in seen}
    complexity = sorted((n for n in seen if base[n] in COMPLEXITY),
                        key=lambda n: COMPLEXITY.index(base[n]))
    breakdown = [n for n in seen if "_per_" in base[n] or "[" in n]
    first = [n for n in seen if base[n] == primary] + complexity
    rest = [n for n in seen if n not in first and n not in breakdown]
    return first + rest, breakdown


def _primary(runs: list[Run]) -> str | None:
    """The benchmark's primary score: that of its first run with one."""
    return next((p for p in map(primary_score, (r.results for r in runs)) if p), None)


def _td(text: str, key: str, classes: str = "", escape: bool = True) -> str:
    cls = f' class="{classes}"' if classes else ""
    return (f'<td data-sort="{html.escape(key)}"{cls}>'
            f"{html.escape(text) if escape else text}</td>")


def _score_cells(row: dict[str, Cell], names: list[str], fixed: int, badge: str = ""
                 ) -> list[str]:
    """The cells of ``names`` (the first ``fixed`` stay in view; text values flagged);
    ``badge`` (HTML) follows the first cell's value: the row's flags beside its headline."""
    out = []
    for i, name in enumerate(names):
        text, key = _format(row.get(name))
        classes = " ".join(c for c in ("fix" if i < fixed else "",
                                       "flag" if name in row and (isinstance(row[name].value, str)
                                                                  or row[name].problem)
                                       else "") if c)
        if i == 0 and badge:
            out.append(_td(html.escape(text) + badge, key, classes, escape=False))
        else:
            out.append(_td(text, key, classes))
    return out


def flag_badge(flags: list[str]) -> str:
    """A red badge (``⚑ N flag(s)``, the flags in its tooltip) for a row with flags, else "".
    It sits beside the headline score, in the columns that stay in view, so a flagged row
    never looks like a clean one at any page width."""
    if not flags:
        return ""
    tip = html.escape("\n".join(flags), quote=True)
    return (f'<span class="badge" title="{tip}">⚑ {len(flags)} '
            f'flag{"s" if len(flags) > 1 else ""}</span>')


def headline_order(runs: list[Run], cells: list[dict[str, Cell]]) -> list[int]:
    """Row order: by the benchmark's headline score (:func:`_primary`), best first in its
    direction (higher is better unless the score says otherwise); rows without a number for
    it (missing, text, impossible) last, in their order."""
    primary = _primary(runs)

    def key(index: int) -> tuple[int, float]:
        cell = cells[index].get(primary) if primary else None
        if cell is None or isinstance(cell.value, str) or cell.problem:
            return (1, 0.0)
        value = float(cell.value)
        return (0, -value if cell.higher_is_better is not False else value)

    return sorted(range(len(runs)), key=key)


#: What the baseline mark means (the mark's tooltip and the page's note).
BASELINE_NOTE = ("a shipped baseline: the model (label) a config shipped in neuromark's "
                 "configs/ runs on this benchmark")


def shipped_baselines(root: Path | None = None) -> set[tuple[str, str, str]]:
    """``{(benchmark id, model label, model name)}`` of the configs shipped under
    ``root/configs`` (default: the neuromark checkout's): the ``model`` block's label (else
    its name), each of a ``models`` list's, a system config's ``sut``. Files that do not
    parse are skipped (``neuromark validate`` reports them)."""
    import yaml

    from neuromark.suite import project_root

    found: set[tuple[str, str, str]] = set()
    for path in sorted(((root or project_root()) / "configs").rglob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError):
            continue
        bench = data.get("benchmark") if isinstance(data, dict) else None
        if not isinstance(bench, dict) or not isinstance(bench.get("id"), str):
            continue
        blocks = [data.get("model"), data.get("sut"), *(data.get("models") or [])]
        for block in blocks:
            if isinstance(block, dict) and isinstance(block.get("name"), str):
                label = block.get("label") or block["name"]
                if isinstance(label, str):
                    found.add((bench["id"], label, block["name"]))
    return found


def is_baseline(run: Run, baselines: set[tuple[str, str, str]]) -> bool:
    """Whether ``run`` is one of the shipped baselines (:func:`shipped_baselines`): the
    same benchmark, label and registry name (your model labelled ``snn`` is not the
    shipped ``snn``)."""
    return (run.key[0], run.model_label, run.model_name) in baselines


def _table(runs: list[Run], cells: list[dict[str, Cell]], links: list[dict[str, str]],
           baselines: frozenset[tuple[str, str, str]] | set[tuple[str, str, str]] = frozenset()
           ) -> str:
    before, after = score_columns(runs, cells)
    units = {name: next((row[name].unit for row in cells if name in row and row[name].unit), "")
             for name in before + after}
    fixed = 2 if before and before[0].split(".")[0] == _primary(runs) else 1  # stay in view

    def heads(names: list[str]) -> list[str]:
        named = [FOOTPRINT_RULE_LABELS.get(c, c) for c in names]
        return [f"{n} ({units[c]})" if units[c] else n for n, c in zip(named, names, strict=True)]

    head = (["model", *heads(before), *heads(after), "flags", "files", "name", "checkpoint", "run"])
    sorted_col = 1 if fixed == 2 else -1  # the headline score: the rows' order
    better = next((row[before[0]].higher_is_better for row in cells if before and before[0] in row),
                  None)
    order = ' data-order="asc"' if better is False else ' data-order="desc"'
    parts = ['<div class="wide"><table class="board"><thead><tr>'
             + "".join(f'<th{" class=fix" if i < fixed else ""}'
                       f'{order if i == sorted_col else ""}>{html.escape(h)}</th>'
                       for i, h in enumerate(head)) + "</tr></thead><tbody>"]
    ranked = headline_order(runs, cells)
    for run, row, link in ((runs[i], cells[i], links[i]) for i in ranked):
        flags = run_flags(run.results)
        files = " ".join(f'<a href="{html.escape(link[k])}">{k}</a>'
                         for k in ("json", "config", "provenance"))
        flag_html = "<br>".join(f'<span class="flag">{html.escape(f)}</span>' for f in flags)
        name = _row_name(run, runs)
        shown = (f'{html.escape(name)} <span class="base" title="{BASELINE_NOTE}">★ baseline'
                 "</span>" if is_baseline(run, baselines) else html.escape(name))
        badge = flag_badge(flags)  # beside the headline; beside the name without one
        if fixed == 1:
            shown += badge
        tds = [_td(shown, name, "fix", escape=False),
               *_score_cells(row, before, fixed - 1, badge if fixed == 2 else ""),
               *_score_cells(row, after, 0),
               _td(flag_html, str(len(flags)), escape=False), _td(files, "", escape=False)]
        tds += [_td(text, text) for text in (run.model_name, run.checkpoint_short, run.label)]
        parts.append(f'<tr{" class=flagged" if flags else ""}>' + "".join(tds) + "</tr>")
    parts.append("</tbody></table></div>")
    return "".join(parts)


def _row_name(run: Run, group: list[Run]) -> str:
    """The model's label, with its run where another row of ``group`` has the same label."""
    same = sum(r.model_label == run.model_label for r in group)
    return run.model_label if same == 1 else f"{run.model_label} ({run.label})"


#: The tag that marks a page this command wrote (and may replace without ``overwrite``).
MARKER = '<meta name="generator" content="neuromark leaderboard">'


def claim_site(site: Path, overwrite: bool = False) -> None:
    """Refuse (DataError, before anything is written) a ``site`` whose ``index.html`` this
    command did not write (no :data:`MARKER`), or a non-empty folder without one, unless
    ``overwrite``: the ``--overwrite`` rule of ``neuromark run``."""
    index = site / "index.html"
    if overwrite or not site.exists():
        return
    if not site.is_dir():
        raise DataError(f"{site}: --out is a file, not a folder")
    if index.exists() or index.is_symlink():
        if index.is_symlink() or not index.is_file() or \
                MARKER not in index.read_text(encoding="utf-8", errors="replace")[:4000]:
            raise DataError(f"{index}: not written by neuromark leaderboard (no generator "
                            "marker); it is not replaced: choose another --out or pass --overwrite")
    elif any(site.iterdir()):
        raise DataError(f"{site}: the folder holds files and no leaderboard written by neuromark; "
                        "choose another --out or pass --overwrite")


def build_leaderboard(runs: list[Run], out: str | Path, overwrite: bool = False) -> Path:
    """Write ``out/index.html`` (and the run files beside it) for ``runs``; returns the page.
    A page or folder this command did not write is refused unless ``overwrite``
    (:func:`claim_site`)."""
    site = Path(out)
    claim_site(site, overwrite)
    site.mkdir(parents=True, exist_ok=True)
    by_key: dict[tuple[str, str], list[tuple[int, Run]]] = defaultdict(list)
    for index, run in enumerate(runs):
        by_key[run.key].append((index, run))
    sections, contents = [], []
    baselines = shipped_baselines()
    for key in sorted(by_key):
        group = [run for _, run in by_key[key]]
        cells = [flatten_scores(run.results) for run in group]
        links = [_copy_run(run, index, site) for index, run in by_key[key]]
        info = group[0].results.benchmark
        bench = benchmark_title(key)
        parent = f" · parent {html.escape(info.parent)}" if info.parent else ""
        anchor = html.escape(_slug(f"{key[0]}-v{key[1]}"))
        marked = sum(is_baseline(run, baselines) for run in group)
        derived = next((n for n in map(derived_note, (r.results for r in group)) if n), None)
        derived_html = (f' · <span class="derived">{html.escape(derived)}: its own benchmark, '
                        "never ranked with the shipped one</span>" if derived else "")
        contents.append(f'<li><a href="#{anchor}">{html.escape(key[0])}</a> v{html.escape(key[1])}'
                        f" · {len(group)} model(s), {marked} shipped baseline(s)</li>")
        sections.append(
            f'<section id="{anchor}"><h2>{html.escape(key[0])}'
            f'</h2><p class="note">version {html.escape(info.version)}{parent}{derived_html} · '
            f"{len(group)} model run(s), best headline first; click a column header to sort</p>"
            + _table(group, cells, links, baselines) + _pareto(group, cells, site, bench)
            + "</section>")
    page = (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">{MARKER}<title>neuromark leaderboard"
            f"</title><style>{_STYLE}</style></head><body>\n<h1>neuromark leaderboard</h1>\n"
            f'<p class="note">{len(runs)} results files, {len(by_key)} benchmarks, one row per '
            "model run on each. Values are "
            "per-sample means ± standard error where the metric has one; estimates (energy_"
            "estimate) are labelled in their unit; flags mark scores that were not measured "
            "and runs with diverged instances or overruns, untrained weights and tied "
            "decisions: a red ⚑ badge beside the headline score counts them (hover for the "
            "text; all of them in the flags column, with the run's files and identity); rows "
            f"are sorted by the headline score, best first; ★ marks {BASELINE_NOTE}."
            "</p>\n<nav><h2>Contents</h2><ul>" + "".join(contents) + "</ul></nav>\n"
            + "\n".join(sections) + f"\n<script>{_SORT_JS}</script>\n</body></html>\n")
    index = site / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
