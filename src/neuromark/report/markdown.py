"""Terminal tables and the Markdown report of a run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from neuromark.results import Results, Score, to_jsonable


def format_value(score: Score) -> str:
    """``value ± error`` with 4 significant digits; dict values as ``k=v`` pairs."""
    def fmt(x: object) -> str:
        return f"{x:.4g}" if isinstance(x, float) else str(x)

    value = score.value
    if isinstance(value, dict):
        return ", ".join(f"{k}={fmt(v)}" for k, v in value.items())
    text = fmt(value)
    if isinstance(value, str):  # e.g. "not measured": a unit would read as a number
        return text
    if isinstance(score.error, (int, float)):
        text += f" ± {fmt(float(score.error))}"
    return f"{text} {score.unit}".rstrip()


def format_summary(results: Sequence[Results]) -> str:
    """:func:`format_table`, then every flag the results carry (``details["flags"]``:
    divergences, overruns, unmeasured figures), one line each."""
    flags = [f"flag [{res.benchmark.id}]: {flag}"
             for res in results for flag in res.details.get("flags", [])]
    return "\n".join([format_table(results), *flags])


def format_table(results: Sequence[Results]) -> str:
    """A plain-text table: benchmark, metric, value ± error."""
    rows = [("benchmark", "metric", "value")]
    for res in results:
        for name, score in res.scores.items():
            rows.append((res.benchmark.id, name, format_value(score)))
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines = [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}" for a, b, c in rows]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return "\n".join(lines)


def write_report(out_dir: Path, written: Sequence[tuple[Path, Results]], *,
                 wall_s: float | None = None) -> Path:
    """Write ``out_dir/report.md``: per benchmark, its scores, plots found beside it, config."""
    lines = ["# neuromark report", ""]
    if wall_s is not None:
        lines += [f"Wall time: {wall_s:.1f} s", ""]
    for path, res in written:
        lines += [f"## {res.benchmark.id} (v{res.benchmark.version})", "",
                  f"Results file: `{path.name}`", "", "| metric | value |", "|---|---|"]
        lines += [f"| {name} | {format_value(score)} |" for name, score in res.scores.items()]
        lines.append("")
        for plot in res.details.get("plots", []):
            plot_path = Path(plot)
            rel = (plot_path.resolve().relative_to(out_dir.resolve())
                   if plot_path.is_absolute() else plot_path)
            lines += [f"![{rel.stem}]({rel.as_posix()})", ""]
        for flag in res.details.get("flags", []):
            lines += [f"- **flag:** {flag}"]
        lines += ["<details><summary>config</summary>", "", "```json",
                  json.dumps(to_jsonable(res.config), indent=1), "```", "</details>", ""]
    target = out_dir / "report.md"
    target.write_text("\n".join(lines))
    return target
