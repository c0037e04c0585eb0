"""What ``neuromark qubo library`` writes from its units: the table (CSV, Markdown report)
and the gap plot. (The QOBLIB submission folders are written as each unit finishes, by
:func:`~.qoblib_submission.write_submission_dir`: :func:`~.library_sweep.sweep`.)
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuromark.benchmarks.qubo.library_known import QOBLIB_TABLE, SOLUTION_FILE
from neuromark.benchmarks.qubo.library_sweep import SolverChoice, fmt
from neuromark.errors import DataError
from neuromark.io_atomic import write_text_atomic
from neuromark.plotting import pyplot, save_figure

#: Columns of ``library.csv`` (the rows of :func:`~.library_sweep.unit_row`).
CSV_COLUMNS = ("instance", "n", "m", "solver", "best_known", "best_known_source",
               "best_known_reference", "best_known_proven", "literature_best", "proven_here",
               "best_found", "gap",
               "improves_best_known", "runs", "feasible_runs", "p_success", "tts99_s",
               "tau_opt_s", "tts99_at_timeout_s", "over_deadline_fraction", "mean_wall_s",
               "timeout_s")


def short_source(row: dict[str, Any]) -> str:
    """``opt.sol``/``bst.sol``/``sol`` (the solution file's suffix), ``table`` (QOBLIB's
    table) or the source's words, + ``*`` when proven, for the Markdown table."""
    source = row["best_known_source"]
    if source == SOLUTION_FILE:
        suffixes = Path(row.get("best_known_reference") or "x.sol").suffixes
        text = "".join(suffixes[-2:] if suffixes[-2:-1] in ([".opt"], [".bst"]) else
                       suffixes[-1:]).lstrip(".")
    elif source == QOBLIB_TABLE:
        text = "table"
    else:
        text = source
    return text + ("*" if row["best_known_proven"] in (True, "True") else "")


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row.get(k) for k in CSV_COLUMNS})
    return write_text_atomic(path, buf.getvalue())


#: Typed columns of ``library.csv`` (the others are text).
_INTS = ("n", "m", "best_known", "literature_best", "best_found", "runs", "feasible_runs")
_FLOATS = ("gap", "p_success", "tts99_s", "tau_opt_s", "tts99_at_timeout_s",
           "over_deadline_fraction", "mean_wall_s", "timeout_s")
_BOOLS = ("best_known_proven", "improves_best_known")


def read_csv(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``library.csv`` (:func:`write_csv`) typed back: whole numbers, floats,
    ``True``/``False``, an empty cell as None (``proven_here``: left out where the whole
    column is empty, as in a sweep without ``--prove``). A file with other columns is a
    :class:`~neuromark.errors.DataError` naming it."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != CSV_COLUMNS:
            raise DataError(f"{path}: columns {reader.fieldnames}, expected {list(CSV_COLUMNS)}")
        raw = list(reader)
    rows = []
    for line, cells in enumerate(raw, 2):
        row: dict[str, Any] = {}
        for key, text in cells.items():
            try:
                if text == "" and key != "proven_here":
                    row[key] = None
                elif key in _INTS:
                    row[key] = int(text)
                elif key in _FLOATS:
                    row[key] = float(text)
                elif key in _BOOLS:
                    if text not in ("True", "False"):
                        raise ValueError(f"not True/False: {text!r}")
                    row[key] = text == "True"
                else:
                    row[key] = text
            except ValueError as exc:
                raise DataError(f"{path}:{line}: column {key}: {exc}") from None
        rows.append(row)
    if not any(r["proven_here"] for r in rows):
        for r in rows:
            del r["proven_here"]
    return rows


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The Markdown table of the rows (one line per instance x solver)."""
    head = ("| instance | n | m | best-known (source) | literature | solver | best found | gap "
            "| p_s | TTS99 (s) | tau* (s) | over deadline | mean wall (s) |")
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        found = fmt(r["best_found"]) + (" (improves!)" if r["improves_best_known"] else "")
        proven = f"; CP-SAT {r['proven_here']}" if r.get("proven_here") else ""
        lines.append(
            f"| {r['instance']} | {r['n']} | {r['m']} | {r['best_known']} ({short_source(r)}"
            f"{proven}) | {fmt(r['literature_best'])} | {r['solver']} | {found} | "
            f"{fmt(r['gap'], '.3f')} | {fmt(r['p_success'], '.2f')} | {fmt(r['tts99_s'])} | "
            f"{fmt(r['tau_opt_s'])} | {fmt(r['over_deadline_fraction'], '.2f')} | "
            f"{fmt(r['mean_wall_s'])} |")
    return "\n".join(lines) + "\n"


def wide_table(rows: Sequence[dict[str, Any]], choices: Sequence[SolverChoice]) -> str:
    """One line per instance: n, m, best-known (source), literature, CP-SAT's proof (when
    tried), then per solver ``best |S| (p_s)``, ``*`` where a run went past its deadline,
    ``-`` where the unit was not run."""
    by_unit = {(r["instance"], r["solver"]): r for r in rows}
    names = list(dict.fromkeys(r["instance"] for r in rows))
    proofs = any("proven_here" in r for r in rows)
    head = "| instance | n | m | best-known | lit. |" + (" CP-SAT |" if proofs else "")
    head += "".join(f" {c.label} |" for c in choices)
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name in names:
        first = next(r for r in rows if r["instance"] == name)
        cells = [name, str(first["n"]), str(first["m"]),
                 f"{first['best_known']} ({short_source(first)})", fmt(first["literature_best"])]
        if proofs:
            cells.append(first.get("proven_here") or "-")
        for c in choices:
            r = by_unit.get((name, c.label))
            if r is None:
                cells.append("-")
                continue
            late = "*" if r["over_deadline_fraction"] > 0 else ""
            better = " (improves!)" if r["improves_best_known"] else ""
            cells.append(f"{fmt(r['best_found'])} ({r['p_success']:.2f}){late}{better}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def solver_totals(rows: Sequence[dict[str, Any]], choices: Sequence[SolverChoice]) -> str:
    """Per solver: instances at the best-known (best run), mean gap, runs over deadline."""
    lines = ["| solver | instances | best run at best-known | mean gap | mean p_s | "
             "runs over deadline |", "|---|---|---|---|---|---|"]
    for choice in choices:
        mine = [r for r in rows if r["solver"] == choice.label]
        if not mine:
            continue
        hit = sum(r["gap"] is not None and r["gap"] <= 0 for r in mine)
        gaps = [r["gap"] for r in mine if r["gap"] is not None]
        over = sum(round(r["over_deadline_fraction"] * r["runs"]) for r in mine)
        total = sum(r["runs"] for r in mine)
        lines.append(f"| {choice.label} | {len(mine)} | {hit}/{len(mine)} | "
                     f"{fmt(sum(gaps) / len(gaps) if gaps else None, '.4f')} | "
                     f"{fmt(sum(r['p_success'] for r in mine) / len(mine), '.2f')} | "
                     f"{over}/{total} |")
    return "\n".join(lines) + "\n"


def plot_gaps(rows: Sequence[dict[str, Any]], choices: Sequence[SolverChoice],
              path: Path) -> Path | None:
    """Gap to the best-known per instance (x: instances by n), one marker series per solver."""
    if not rows:
        return None
    names = list(dict.fromkeys(r["instance"] for r in rows))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.22 * len(names) + 2), 4))
    markers = "os^Dv<>px*"
    for k, choice in enumerate(choices):
        mine = {r["instance"]: r["gap"] for r in rows if r["solver"] == choice.label}
        xs = [i for i, name in enumerate(names) if mine.get(name) is not None]
        ax.plot(xs, [mine[names[i]] for i in xs], linestyle="none", marker=markers[k % 10],
                alpha=0.8, label=choice.label)
    ax.axhline(0.0, color="grey", lw=0.5)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=90, fontsize=6)
    ax.set_ylabel("gap (best-known - best found) / best-known")
    ax.set_title("QUBO MIS library: gap to the best-known value (best of the runs)")
    ax.legend(fontsize=7)
    return save_figure(fig, path, dpi=100)


def write_report(out: Path, rows: Sequence[dict[str, Any]], choices: Sequence[SolverChoice],
                 skipped: Sequence[tuple[str, str]], *, command: str, settings: dict[str, Any],
                 notes: Sequence[str] = ()) -> Path:
    """``OUT/report.md``: command, settings, per-solver totals, the table, notes on the
    best-known values, skipped files."""
    plot = plot_gaps(rows, choices, out / "gap.png")
    parts = ["# QUBO MIS library sweep", "", f"Command: `{command}`", "",
             f"Settings: timeout {settings['timeout_s']:g} s, {settings['runs']} run(s) per "
             f"instance and solver, seeds {settings['seed']}..{settings['seed'] + settings['runs'] - 1}"
             f"; best-known source marks: `opt.sol`/`bst.sol` QOBLIB solution file (checked on "
             f"the instance), `table` QOBLIB's table (matched by content), `*` proven optimal "
             f"by the source.", "",
             solver_totals(rows, choices),
             "Per instance: best |S| over the runs (p_s at the best-known), `*`: a run past its "
             "deadline, `-`: not run.", "", wide_table(rows, choices), "All figures:", "",
             markdown_table(rows)]
    if plot is not None:
        parts += [f"Gap plot: `{plot.name}`", ""]
    if notes:
        parts += ["Notes on best-known values:", ""] + [f"- {note}" for note in notes] + [""]
    if skipped:
        parts += ["Skipped:", ""] + [f"- {name}: {why}" for name, why in skipped] + [""]
    return write_text_atomic(out / "report.md", "\n".join(parts))
