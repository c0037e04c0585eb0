"""Terminal tables and the Markdown report of a run."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from neuromark.errors import DataError
from neuromark.io_atomic import to_jsonable, write_text_atomic
from neuromark.processors.encoder_cost import markdown_table, summary_line
from neuromark.report.runs import primary_score
from neuromark.report.seeds import seed_lines, seed_text
from neuromark.results import Results, format_value
from neuromark.said import was_said


def format_summary(results: Sequence[Results], *, full_table: bool = False) -> str:
    """What ``neuromark run`` prints: one headline line per result (:func:`headline`; with
    ``full_table``, :func:`format_table` instead, every score: ``report.md`` holds it), the
    mean ± SE of each seed group's scores (:mod:`neuromark.report.seeds`), the system-track
    verdicts, then every flag the results carry (divergences, overruns, unmeasured figures,
    untrained weights, ties), one line each: once, so not those the run printed while it
    went (:mod:`neuromark.said`; a line counts them)."""
    flags, said = [], 0
    for res in results:
        for flag in dict.fromkeys(res.flags):
            if was_said(res.benchmark.id, flag):
                said += 1
            else:
                who = f"{res.benchmark.id} / {res.model.label}" if res.model is not None else res.benchmark.id
                flags.append(f"flag [{who}]: {flag}")
    if said:
        flags.append(f"({said} flag(s) printed above as the run went; every flag is in the "
                     "results files and report.md)")
    first = [format_table(results)] if full_table else headlines(results)
    return "\n".join([*first, *seed_text(results), *system_lines(results), *front_end_lines(results),
                      *flags])


def front_end_lines(results: Sequence[Results]) -> list[str]:
    """One line per result whose input passes an encoder: its cost
    (:mod:`neuromark.processors.encoder_cost`), beside the model's figures, not in them."""
    return [f"[{res.benchmark.id}] {summary_line(block)}" for res in results
            if isinstance(res.details, dict) and isinstance(block := res.details.get("front_end"), dict)]


def headline(res: Results) -> str | None:
    """``main score ± SE · synaptic ops · footprint``: the figures a reader compares first
    (those the result has), or None for a result with none of them (a system-track result:
    its verdict line says it)."""
    parts = []
    main = primary_score(res)
    details = res.details if isinstance(res.details, dict) else {}
    if main is None and not isinstance(details.get("scenario_metric"), dict):
        main = next((n for n, s in res.scores.items()  # a task that declares none: its first
                     if isinstance(s.value, (int, float)) and not isinstance(s.value, bool)), None)
    if main is not None:
        note = score_note(res, main)
        parts.append(f"{main} {format_value(res.scores[main])}" + (f" ({note})" if note else ""))
    ops = res.scores.get("synaptic_operations")
    if ops is not None and isinstance(ops.value, dict):
        macs, acs = ops.value.get("Effective_MACs"), ops.value.get("Effective_ACs")
        if isinstance(macs, (int, float)) and isinstance(acs, (int, float)):
            parts.append(f"synaptic ops {macs:,.0f} MACs + {acs:,.0f} ACs per sample")
    footprint = res.scores.get("footprint")
    if footprint is not None and isinstance(footprint.value, (int, float)):
        parts.append(f"footprint {footprint.value:,.0f} {footprint.unit or 'bytes'}".rstrip())
    return " · ".join(parts) if parts else None


#: What a headline score's name means, where its name alone does not say it (a task's own
#: ``details["headline_note"]`` comes first): (pattern, explanation with the groups).
SCORE_NOTES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"bks_gap(\[[^\]]*\])?@([0-9.e+-]+)s"),
     "gap to the best-known cost{0} after a {1} s budget: (best cost found - best-known) / "
     "|best-known|; 0 = best-known reached, lower is better"),
    (re.compile(r"tts_gap([0-9.e+-]+)_median_s"),
     "median time to a cost within {0} of the best-known"),
    (re.compile(r"success_rate"), "fraction of episodes that reached the goal"),
)


def score_note(res: Results, name: str) -> str:
    """What score ``name`` of ``res`` is: the task's ``details["headline_note"]`` (e.g. a
    free-running vs a one-step forecast), else :data:`SCORE_NOTES`, else ""."""
    declared = res.details.get("headline_note") if isinstance(res.details, dict) else None
    if isinstance(declared, str) and declared:
        return declared
    for pattern, text in SCORE_NOTES:
        match = pattern.fullmatch(name)
        if match:
            groups = [g or "" for g in match.groups()]
            if groups and groups[0].startswith("["):
                groups[0] = f" of {groups[0][1:-1]}"
            return text.format(*groups)
    return ""


def headlines(results: Sequence[Results]) -> list[str]:
    """``benchmark  model  headline`` of each result that has a :func:`headline`, the
    columns aligned."""
    rows = [(res.benchmark.id, res.model.label if res.model is not None else "", line)
            for res in results if (line := headline(res)) is not None]
    if not rows:
        return []
    w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    return [f"{b:<{w0}}  {m:<{w1}}  {line}" for b, m, line in rows]


def system_lines(results: Sequence[Results]) -> list[str]:
    """One line per system-track result: the figure its scenario is judged on (MLPerf
    Inference paper, Table 2), its percentile and LoadGen's verdict, e.g. ``system
    [esn-singlestream]: SingleStream judged on p90 latency = 0.0712 ms: VALID``."""
    lines = []
    for res in results:
        metric = res.details.get("scenario_metric") if isinstance(res.details, dict) else None
        if not metric:
            continue
        value = metric.get("value")
        text = "n/a" if value is None else f"{value:.4g} {metric.get('unit', '')}".rstrip()
        pct = metric.get("percentile")
        where = f" (percentile p{pct * 100:g})" if pct and f"p{pct * 100:g}" not in metric["name"] else ""
        observed = metric.get("observed_ms")
        beside = (f" (observed: {metric.get('observed_name', 'p')} = {observed:.4g} ms)"
                  if observed is not None and "estimate" in metric["name"] else "")
        lines.append(f"system [{res.benchmark.id}]: {metric['scenario']} judged on {metric['name']}"
                     f"{where} = {text}{beside}: {metric.get('validity') or 'n/a'}"
                     + (f" ({metric['invalid_reason']})" if metric.get("invalid_reason") else ""))
    for res in results:  # the accuracy pass against its quality target (system track)
        accuracy = res.details.get("accuracy") if isinstance(res.details, dict) else None
        if accuracy:
            from neuromark.system.quality import describe

            sut = res.details.get("sut")
            note = sut.get("accuracy_note") if isinstance(sut, dict) else None
            lines.append(f"accuracy [{res.benchmark.id}]: {describe(accuracy)}"
                         + (f" ({note})" if isinstance(note, str) and note else ""))
    return lines


def format_table(results: Sequence[Results]) -> str:
    """A plain-text table: benchmark, model (its label), metric, value ± error."""
    rows = [("benchmark", "model", "metric", "value")]
    for res in results:
        label = res.model.label if res.model is not None else ""
        for name, score in res.scores.items():
            rows.append((res.benchmark.id, label, name, format_value(score)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d}" for a, b, c, d in rows]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return "\n".join(lines)


def folder_results(out_dir: Path, written: Sequence[tuple[Path, Results]] = ()
                   ) -> tuple[list[tuple[Path, Results]], list[tuple[Path, Results]], list[str]]:
    """(this run's results, earlier results files in ``out_dir``, problems with other JSON
    files there): everything the report describes."""
    mine = {p.resolve() for p, _ in written}
    earlier: list[tuple[Path, Results]] = []
    problems: list[str] = []
    for path in sorted(out_dir.glob("*.json")):
        if path.name.startswith(".") or path.resolve() in mine:
            continue
        try:
            earlier.append((path, Results.load(path)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, DataError) as exc:
            problems.append(f"`{path.name}`: not a readable results file ({exc})")
    return list(written), earlier, problems


def _section(out_dir: Path, path: Path, res: Results) -> list[str]:
    lines = [f"## {res.benchmark.id} (v{res.benchmark.version})", "",
             f"Results file: `{path.name}`", "", "| metric | value |", "|---|---|"]
    lines += [f"| {name} | {format_value(score)} |" for name, score in res.scores.items()]
    lines.append("")
    if isinstance(res.details, dict) and isinstance(res.details.get("front_end"), dict):
        lines += markdown_table(res.details["front_end"])
    for rel in res.artefact_files():  # relative: made in this run, under out_dir
        if rel.is_absolute():
            try:
                rel = rel.resolve().relative_to(out_dir.resolve())
            except ValueError:  # outside the report's folder: linked where it is
                pass
        lines += [f"![{rel.stem}]({rel.as_posix()})", ""]
    for flag in res.flags:
        lines += [f"- **flag:** {flag}"]
    lines += ["<details><summary>config</summary>", "", "```json",
              json.dumps(to_jsonable(res.config), indent=1), "```", "</details>", ""]
    return lines


def write_report(out_dir: Path, written: Sequence[tuple[Path, Results]], *,
                 wall_s: float | None = None) -> Path:
    """Write ``out_dir/report.md`` atomically: the latest run's seed groups (mean ± SE over
    seeds), then every results file in the folder (this run's first, then earlier ones),
    each with its scores, plots, flags and config."""
    mine, earlier, problems = folder_results(out_dir, written)
    lines = ["# neuromark report", ""]
    if wall_s is not None:
        lines += [f"Wall time of the latest run: {wall_s:.1f} s", ""]
    lines += [f"{len(mine) + len(earlier)} results file(s) in this folder: {len(mine)} from "
              f"the latest run, {len(earlier)} from earlier runs.", ""]
    across = seed_lines([res for _, res in mine])
    if across:
        lines += ["# Across training seeds", "", *across]
    for path, res in mine:
        lines += _section(out_dir, path, res)
    if earlier:
        lines += ["# Earlier results in this folder", ""]
        for path, res in earlier:
            lines += _section(out_dir, path, res)
    if problems:
        lines += ["# Other files", ""] + [f"- {p}" for p in problems] + [""]
    return write_text_atomic(out_dir / "report.md", "\n".join(lines))
