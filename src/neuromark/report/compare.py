"""``neuromark compare A B``: two models run on one benchmark (id, version) side by side,
each difference judged against the combined standard error ``sqrt(se_A^2 + se_B^2)``. An
impossible figure (:func:`~neuromark.report.runs.impossible`: not finite, a negative count or
standard error) is shown with "(!)" and its row's verdict says why, never a difference; a
difference that overflows is flagged "NOT FINITE"."""

from __future__ import annotations

import math
from dataclasses import dataclass

from neuromark.report.runs import (
    Cell,
    Run,
    benchmark_title,
    derived_note,
    flatten_scores,
    primary_score,
    run_flags,
)
from neuromark.results import FOOTPRINT_RULE_LABELS


@dataclass(frozen=True)
class Difference:
    """One score in both runs: values, ``diff = b - a``, the combined standard error (None
    when a run has no error for it) and whether ``|diff| <= combined``."""

    name: str
    a: Cell | None
    b: Cell | None
    diff: float | None
    combined_se: float | None

    @property
    def verdict(self) -> str:
        if self.a is None or self.b is None:
            return "only in " + ("B" if self.a is None else "A")
        for side, cell in (("A", self.a), ("B", self.b)):
            if cell.problem:
                return f"IMPOSSIBLE in {side}: {cell.problem}"
        if self.diff is not None and not math.isfinite(self.diff):
            return "NOT FINITE: B - A overflows"
        if self.diff is None:
            return "same" if self.a.value == self.b.value else "differs (text)"
        if self.combined_se is None:
            return "equal" if self.diff == 0 else "no standard error"
        return "within SE" if abs(self.diff) <= self.combined_se else "outside SE"


def compare(a: Run, b: Run) -> list[Difference]:
    """Every flattened score of either run, compared."""
    ca, cb = flatten_scores(a.results), flatten_scores(b.results)
    out = []
    for name in sorted(set(ca) | set(cb)):
        x, y = ca.get(name), cb.get(name)
        diff = se = None
        if x is not None and y is not None and isinstance(x.value, float) \
                and isinstance(y.value, float) and not (x.problem or y.problem):
            diff = y.value - x.value
            if x.error is not None and y.error is not None:
                se = math.hypot(x.error, y.error)
        out.append(Difference(name, x, y, diff, se))
    return out


def _show(cell: Cell | None) -> str:
    if cell is None:
        return "—"
    if isinstance(cell.value, str):
        return cell.value
    text = f"{cell.value:.6g}" + (f" ± {cell.error:.2g}" if cell.error is not None else "")
    return f"{text} (!)" if cell.problem else text


def pair_runs(runs_a: list[Run], runs_b: list[Run]
              ) -> tuple[list[tuple[Run, Run]], list[Run], list[Run]]:
    """(pairs, left in A, left in B): runs of A and B on the same benchmark (id, version).
    Within a benchmark, runs with the same model label pair up; when one run of each side is
    left after that (e.g. a user's model against a baseline), those two pair; the rest are
    left, in their order."""
    pairs: list[tuple[Run, Run]] = []
    left_a: list[Run] = []
    left_b: list[Run] = []
    keys = list(dict.fromkeys(r.key for r in [*runs_a, *runs_b]))
    for key in keys:
        xa = [r for r in runs_a if r.key == key]
        xb = [r for r in runs_b if r.key == key]
        rest_a = []
        for run in xa:
            match = next((r for r in xb if r.model_label == run.model_label), None)
            if match is None:
                rest_a.append(run)
            else:
                pairs.append((run, match))
                xb.remove(match)
        if len(rest_a) == 1 and len(xb) == 1:
            pairs.append((rest_a[0], xb[0]))
        else:
            left_a += rest_a
            left_b += xb
    return pairs, left_a, left_b


def headline_difference(a: Run, b: Run, rows: list[Difference]) -> str | None:
    """The comparison's first line: the benchmark's main score (the leaderboard's,
    :func:`~neuromark.report.runs.primary_score`), B - A and that difference in combined
    standard errors, e.g. ``headline: classification_accuracy B - A = +0.05 = +1.3 SE
    (A: 0.4 ± 0.03, B: 0.45 ± 0.03)``; None when neither run has a main score."""
    main = primary_score(b.results) or primary_score(a.results)
    row = next((d for d in rows if d.name == main), None)
    if row is None:
        return None
    values = f"(A: {_show(row.a)}{badge(a)}, B: {_show(row.b)}{badge(b)})"
    if row.diff is None or not math.isfinite(row.diff):
        return f"headline: {main} {row.verdict} {values}"
    if not row.combined_se:
        return f"headline: {main} B - A = {row.diff:+.4g}, no standard error {values}"
    return (f"headline: {main} B - A = {row.diff:+.4g} = {row.diff / row.combined_se:+.2f} SE "
            f"{values}")


def badge(run: Run) -> str:
    """`` ⚑ N flag(s)`` beside a run's headline value when it carries flags, else ""."""
    count = len(run_flags(run.results))
    return f" ⚑ {count} flag{'s' if count > 1 else ''}" if count else ""


def flag_lines(a: Run, b: Run) -> list[str]:
    """One ``⚑ A: flag`` line per flag of either run, and a line for a benchmark derived
    from a shipped one (its settings differ: :mod:`neuromark.benchmark_settings`)."""
    lines = [f"⚑ {side}: {flag}" for side, run in (("A", a), ("B", b))
             for flag in run_flags(run.results)]
    note = derived_note(a.results) or derived_note(b.results)
    if note:
        lines.append(f"benchmark {a.key[0]}: {note}")
    return lines


def format_comparison(a: Run, b: Run, rows: list[Difference]) -> str:
    """A plain-text table led by the headline difference in standard errors
    (:func:`headline_difference`): the two models (label, name, options and checkpoint
    digests, run) side by side, then ``rows``."""
    def digest(run: Run, field: str) -> str:
        value = getattr(run.results.model, field, None) if run.results.model else None
        return value[:12] if isinstance(value, str) else "—"

    header = ("score", f"A: {a.model_label}", f"B: {b.model_label}", "B - A", "combined SE",
              "verdict")
    models = [("model name", a.model_name, b.model_name),
              ("options digest", digest(a, "options_digest"), digest(b, "options_digest")),
              ("checkpoint", a.checkpoint_short, b.checkpoint_short),
              ("run", a.label, b.label)]
    label = FOOTPRINT_RULE_LABELS  # which rule a footprint follows (never two unlabelled)
    body = [(label.get(d.name, d.name), _show(d.a), _show(d.b), "" if d.diff is None else f"{d.diff:+.4g}",
             "" if d.combined_se is None else f"{d.combined_se:.2g}", d.verdict) for d in rows]
    widths = [max(len(r[i]) for r in [header, *body, *models] if i < len(r))
              for i in range(len(header))]
    lines = [f"{benchmark_title(a.key)}: A = {a.path}, B = {b.path}"]
    lead = headline_difference(a, b, rows)
    if lead:
        lines.append(lead)
    lines += flag_lines(a, b)  # beside the headline, before the table
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in models]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in body]
    return "\n".join(lines)
