"""``neuromark compare A B``: two runs of a benchmark side by side, each difference judged
against the combined standard error ``sqrt(se_A^2 + se_B^2)``."""

from __future__ import annotations

import math
from dataclasses import dataclass

from neuromark.report.runs import Cell, Run, flatten_scores


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
                and isinstance(y.value, float):
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
    return f"{cell.value:.6g}" + (f" ± {cell.error:.2g}" if cell.error is not None else "")


def format_comparison(a: Run, b: Run, rows: list[Difference]) -> str:
    """A plain-text table of ``rows``."""
    header = ("score", f"A: {a.label}", f"B: {b.label}", "B - A", "combined SE", "verdict")
    body = [(d.name, _show(d.a), _show(d.b), "" if d.diff is None else f"{d.diff:+.4g}",
             "" if d.combined_se is None else f"{d.combined_se:.2g}", d.verdict) for d in rows]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = [f"{a.id}: A = {a.path}, B = {b.path}",
             "  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in body]
    return "\n".join(lines)
