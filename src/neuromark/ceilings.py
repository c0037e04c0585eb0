"""Noise ceilings as in Brain-Score ("what is a benchmark"; Schrimpf et al. 2018, brain-score
``metrics/internal_consistency/ceiling.py``) and ceiled neural predictivity.

- :func:`internal_consistency`: split the repetitions into random halves ``n_splits`` times,
  average each half, Pearson r per neuroid across conditions, Spearman-Brown ``2r/(1+r)``,
  median over neuroids, mean over splits; error = SEM over splits (std with ddof 0 /
  sqrt(n_splits), as Brain-Score's xarray std).
- :func:`ceiled_explained_variance`: ``r² / ceiling`` (rule "explained_variance",
  Brain-Score's neural benchmarks since brain-score/vision PR #2169, merged December 2025:
  a Spearman-Brown split-half ceiling is already a variance, so squaring it lowered the
  ceiling and inflated scores; PR #2244 bumped every affected benchmark's version) or,
  with ``rule="explained_variance_squared_ceiling"``, the old ``(r / ceiling)²`` (to
  reproduce pre-2026 Brain-Score figures); the sign of r kept; the error propagated by a
  joint bootstrap over neuroids (the predictivity and the ceiling recomputed on each
  resample), never copied from the raw score; clipped to [0, 1] (brain-score/vision issue
  #2112) with the unclipped value kept (:class:`neuromark.results.Score`).
- :func:`delta_method_error`: for ``s = r²/c``: ``|s| sqrt((2 σ_r / r)² + (σ_c / c)²)``;
  for ``s = (r/c)²``: ``|s| sqrt((2 σ_r / r)² + (2 σ_c / c)²)``.

Differences from Brain-Score: the halves come from numpy's ``default_rng(seed)`` rather
than scikit-learn's ``ShuffleSplit(random_state=seed)`` (same sizes: floor(R/2) and the
rest); neuroids whose split-half r is undefined (constant responses) are left out of the
median and counted in ``raw``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from neuromark.results import Score


def pearson_columns(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r per column of two (C, N) arrays (NaN where a column is constant)."""
    a = a - a.mean(0)
    b = b - b.mean(0)
    denom = np.sqrt((a * a).sum(0) * (b * b).sum(0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (a * b).sum(0) / np.where(denom > 0, denom, 1), np.nan)


def spearman_brown(r: np.ndarray | float, n: float = 2.0) -> Any:
    """Reliability of n times the data from correlation r: ``n r / (1 + (n - 1) r)``."""
    return n * np.asarray(r) / (1.0 + (n - 1.0) * np.asarray(r))


def split_half_reliability(responses: np.ndarray, *, n_splits: int = 10, seed: int = 1
                           ) -> np.ndarray:
    """(n_splits, N) Spearman-Brown-corrected split-half r per neuroid (see the module)."""
    r = np.asarray(responses, dtype=np.float64)
    if r.ndim != 3:
        raise ValueError(f"responses must be (repetitions, conditions, neuroids), got shape {r.shape}")
    reps, conds, _ = r.shape
    if reps < 2 or conds < 3:
        raise ValueError(f"need >= 2 repetitions and >= 3 conditions, got {reps} and {conds}")
    if not np.isfinite(r).all():
        raise ValueError("responses contain NaN or inf")
    if n_splits < 1:
        raise ValueError(f"n_splits={n_splits} must be >= 1")
    rng = np.random.default_rng(seed)
    out = np.empty((n_splits, r.shape[2]))
    for k in range(n_splits):
        order = rng.permutation(reps)
        half = reps // 2
        out[k] = spearman_brown(pearson_columns(r[order[:half]].mean(0), r[order[half:]].mean(0)))
    return out


def internal_consistency(responses: np.ndarray, *, n_splits: int = 10, seed: int = 1) -> Score:
    """Brain-Score's internal-consistency ceiling of ``responses`` (repetitions, conditions,
    neuroids). Returns a Score: value = mean over splits of the median over neuroids of the
    Spearman-Brown split-half r; error = SEM over splits; raw = {"per_split" (n_splits,),
    "per_neuroid" (n_splits, N), "undefined_neuroids"}."""
    per = split_half_reliability(responses, n_splits=n_splits, seed=seed)
    defined = ~np.isnan(per).any(0)
    if not defined.any():
        raise ValueError("no neuroid has a defined split-half correlation (constant responses)")
    medians = np.median(per[:, defined], axis=1)
    error = float(medians.std() / math.sqrt(n_splits)) if n_splits > 1 else None
    return Score(float(medians.mean()), error, "", True,
                 raw={"per_split": medians, "per_neuroid": per,
                      "undefined_neuroids": int((~defined).sum())})


EXPLAINED_VARIANCE_RULES = ("explained_variance", "explained_variance_squared_ceiling")


def ceil_explained_variance(r: Any, c: Any, rule: str = "explained_variance") -> Any:
    """Ceiled explained variance of correlation(s) ``r`` under ceiling(s) ``c`` (unclipped,
    sign of r kept): ``r²/c`` or, for the old rule, ``(r/c)²``."""
    if rule not in EXPLAINED_VARIANCE_RULES:
        raise ValueError(f"rule={rule!r}: one of {', '.join(EXPLAINED_VARIANCE_RULES)}")
    r, c = np.asarray(r, dtype=np.float64), np.asarray(c, dtype=np.float64)
    return np.sign(r) * (r * r / c if rule == "explained_variance" else (r / c) ** 2)


def delta_method_error(r: float, r_error: float, c: float, c_error: float,
                       rule: str = "explained_variance") -> float:
    """First-order error of the ceiled value ``s`` (see :func:`ceil_explained_variance`):
    ``|s| sqrt((2 σ_r / r)² + (k σ_c / c)²)`` with k = 1 for ``r²/c``, 2 for ``(r/c)²``."""
    s = float(ceil_explained_variance(r, c, rule))
    k = 1.0 if rule == "explained_variance" else 2.0
    return abs(s) * math.sqrt((2 * r_error / r) ** 2 + (k * c_error / c) ** 2)


def ceiled_explained_variance(per_neuroid_r: np.ndarray, ceiling: Score, *,
                              rule: str = "explained_variance",
                              n_bootstrap: int = 1000, seed: int = 0) -> Score:
    """Neural predictivity ceiled as explained variance.

    Args:
        per_neuroid_r: (N,) held-out Pearson r of the model's prediction per neuroid.
        ceiling: :func:`internal_consistency` of the same N neuroids (its raw
            ``per_neuroid`` is resampled with them).
        rule: "explained_variance" (``r²/c``) or "explained_variance_squared_ceiling"
            (``(r/c)²``, Brain-Score before PR #2169).
        n_bootstrap, seed: joint bootstrap over neuroids (``default_rng(seed)``).

    Returns a Score: value = raw = median r over neuroids, error = its bootstrap std;
    ceiling (with ceiling_error) and ``rule``, so ``ceiled`` = the rule's value clipped to
    [0, 1] (sign kept before clipping); ceiled_error = bootstrap std of the ceiled value
    recomputed jointly; raw per-neuroid values in details of the caller.
    """
    if rule not in EXPLAINED_VARIANCE_RULES:
        raise ValueError(f"rule={rule!r}: one of {', '.join(EXPLAINED_VARIANCE_RULES)}")
    r = np.asarray(per_neuroid_r, dtype=np.float64)
    per = np.asarray(ceiling.raw["per_neuroid"], dtype=np.float64)
    if r.ndim != 1 or per.ndim != 2 or per.shape[1] != r.size:
        raise ValueError(f"per_neuroid_r {r.shape} and the ceiling's per-neuroid values "
                         f"{per.shape} must cover the same neuroids")
    keep = np.isfinite(r) & ~np.isnan(per).any(0)
    r, per = r[keep], per[:, keep]
    if r.size < 2:
        raise ValueError("fewer than 2 neuroids with a defined predictivity and ceiling")
    rng = np.random.default_rng(seed)
    raw_b, ceil_b = np.empty(n_bootstrap), np.empty(n_bootstrap)
    for b in range(n_bootstrap):
        pick = rng.integers(0, r.size, r.size)
        raw_b[b] = np.median(r[pick])
        ceil_b[b] = np.median(per[:, pick], axis=1).mean()
    center = float(np.median(r))
    return Score(center, float(raw_b.std(ddof=1)), "", True, raw=center,
                 ceiling=float(ceiling.value), ceiling_rule=rule,
                 ceiling_error=ceiling.error,
                 ceiled_error=float(ceil_explained_variance(raw_b, ceil_b, rule).std(ddof=1)))
