"""Scores across training seeds: the ``-seed<S>`` copies of one config (suite entries
``{config, seeds}``, :mod:`neuromark.suite_seeds`) summarised as mean ± standard error.

Results are grouped by their ``benchmark.id`` with the ``-seed<S>`` suffix removed; a group
needs two or more seeds. Only scores whose value is a finite number in every member are
summarised (dict-valued scores such as synaptic operations, and text such as "not
measured", are left to each seed's own section).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from neuromark.results import Results

SEED_SUFFIX = re.compile(r"^(?P<base>.+)-seed(?P<seed>\d+)$")


@dataclass(frozen=True)
class SeedSummary:
    """One score over the seeds of a group: mean, standard error (ddof 1; None for one
    value) and the per-seed values in seed order."""

    metric: str
    mean: float
    se: float | None
    values: tuple[float, ...]


def seed_groups(results: Sequence[Results]) -> dict[str, list[tuple[int, Results]]]:
    """Group name -> [(seed, results)] in seed order, for groups of at least two seeds: a
    model label ``<label>-seed<S>`` groups as ``<benchmark id> [<label>]``; a benchmark id
    ``<id>-seed<S>`` (configs without a model section) as ``<id>``."""
    groups: dict[str, list[tuple[int, Results]]] = {}
    for res in results:
        label = getattr(getattr(res, "model", None), "label", None)
        by_label = SEED_SUFFIX.match(label) if isinstance(label, str) else None
        if by_label:
            name = f"{res.benchmark.id} [{by_label['base']}]"
            groups.setdefault(name, []).append((int(by_label["seed"]), res))
            continue
        match = SEED_SUFFIX.match(res.benchmark.id)
        if match:
            groups.setdefault(match["base"], []).append((int(match["seed"]), res))
    return {base: sorted(members, key=lambda m: m[0])
            for base, members in groups.items() if len(members) >= 2}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def summarise(members: Sequence[tuple[int, Results]]) -> list[SeedSummary]:
    """Mean ± SE of every score that is a finite number in every member."""
    out = []
    for name in members[0][1].scores:
        values = [_number(res.scores[name].value) if name in res.scores else None
                  for _, res in members]
        if any(v is None for v in values):
            continue
        xs = [float(v) for v in values if v is not None]
        mean = sum(xs) / len(xs)
        se = (math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) / math.sqrt(len(xs))
              if len(xs) > 1 else None)
        out.append(SeedSummary(name, mean, se, tuple(xs)))
    return out


def _mean_se(s: SeedSummary) -> str:
    return f"{s.mean:.4g}" + (f" ± {s.se:.2g}" if s.se is not None else "")


def seed_text(results: Sequence[Results]) -> list[str]:
    """Terminal lines: ``seeds [base] metric: mean ± SE (n seeds)``."""
    return [f"seeds [{base}] {s.metric}: {_mean_se(s)} ({len(members)} seeds)"
            for base, members in seed_groups(results).items() for s in summarise(members)]


def seed_lines(results: Sequence[Results]) -> list[str]:
    """Markdown: one table per seed group (metric, mean ± SE, per-seed values)."""
    lines: list[str] = []
    for base, members in seed_groups(results).items():
        seeds = ", ".join(str(s) for s, _ in members)
        lines += [f"## {base}: {len(members)} seeds ({seeds})", "",
                  "| metric | mean ± SE over seeds | per seed |", "|---|---|---|"]
        lines += [f"| {s.metric} | {_mean_se(s)} | {', '.join(f'{v:.4g}' for v in s.values)} |"
                  for s in summarise(members)]
        lines.append("")
    return lines
