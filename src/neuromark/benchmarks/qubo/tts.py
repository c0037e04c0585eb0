"""Success probability and time to solution over repeated runs (the optimisation literature's
figures; Rønnow et al., "Defining and detecting quantum speedup", Science 345:420, 2014; King
et al., "Benchmarking a quantum annealing processor with the time-to-target metric",
arXiv 1508.05087, 2015; Aiex, Resende and Ribeiro, "TTT plots: a perl program to create
time-to-target plots", Optimization Letters 1:355, 2007; QOBLIB, Koch et al., arXiv 2504.03832).

For ``R`` independent runs of ``tau`` seconds each, ``k`` of which reached the target:

- success probability ``p_s = k / R``;
- ``TTS99 = tau * ln(1 - 0.99) / ln(1 - p_s)``: the expected seconds of repeated runs until
  the target is reached at least once with 99 % confidence, never less than one run:
  ``p_s >= 0.99`` (``p_s = 1`` included) gives ``tau`` (the formula's value would be below
  one run, which no repetition achieves);
  ``p_s = 0`` gives no finite value (reported as ``None``, "not reached");
- its uncertainty: a seeded bootstrap over runs (resample the R runs with replacement,
  ``B`` times, recompute ``TTS99`` from the resampled success flags and wall times; the
  2.5 and 97.5 percentiles). A resample without a success has an infinite TTS99, so the
  upper bound is ``None`` (unbounded) when more than 2.5 % of the resamples have none.

**TTS over tau** (:func:`tts_over_tau`, the field's figure): each run records when it first
reached the target, its *hit time* ``h_r`` (seconds on the solver's clock, ``inf`` if never).
One set of runs of ``T`` seconds then gives ``p_s(tau) = #{r : h_r <= tau} / R`` for every
``tau <= T`` (a run cut at ``tau`` would have found what it had found by ``tau``: its history
says so), the time-to-target curve of Aiex, Resende and Ribeiro. ``TTS99(tau)`` grows with
``tau`` between two hit times (``p_s`` is constant there), so its minimum over ``tau`` lies at
an observed hit time: the grid is the set of hit times and the minimum is exact. The figure is
``tts99_s = min_tau TTS99(tau)`` with ``tau_opt_s`` the ``tau`` that gives it (Rønnow et al.,
King et al.), and its bootstrap interval resamples the runs (each resample's minimum taken the
same way).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from neuromark.errors import MetricError

#: The confidence of TTS99.
CONFIDENCE = 0.99
#: Bootstrap resamples for the TTS99 interval.
BOOTSTRAP = 2000


def tts(tau_s: float, p_success: float, confidence: float = CONFIDENCE) -> float:
    """``tau * ln(1 - confidence) / ln(1 - p_s)`` seconds, at least ``tau`` (so ``tau`` at
    ``p_s = 1``); ``inf`` at ``p_s = 0``.

    Example:
        >>> round(tts(1.0, 0.5), 4)
        6.6439
    """
    if not (math.isfinite(tau_s) and tau_s > 0):
        raise MetricError(f"tts: tau must be positive seconds, got {tau_s}")
    if not 0.0 <= p_success <= 1.0:
        raise MetricError(f"tts: success probability must be in [0, 1], got {p_success}")
    if p_success >= 1.0:
        return float(tau_s)
    if p_success <= 0.0:
        return math.inf
    return max(float(tau_s), tau_s * math.log(1.0 - confidence) / math.log1p(-p_success))


def _finite_or_none(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def tts_summary(success: Sequence[bool], wall_s: Sequence[float], seed: int = 0,
                resamples: int = BOOTSTRAP) -> dict[str, Any]:
    """Success probability and TTS99 of R runs (``success`` and ``wall_s``, length R) with a
    seeded bootstrap 95 % interval; ``tau`` is the mean wall time of a run.

    Returns ``{"runs", "successes", "p_success", "tau_s", "tts99_s", "tts99_ci95_s"}``;
    ``tts99_s`` is ``None`` when no run succeeded, and an interval bound is ``None`` where
    it is unbounded.
    """
    ok = np.asarray(success, dtype=bool)
    wall = np.asarray(wall_s, dtype=np.float64)
    if ok.size == 0 or ok.shape != wall.shape:
        raise MetricError(f"tts_summary: need one success flag per wall time, got "
                          f"{ok.size} and {wall.size}")
    p = float(ok.mean())
    tau = float(wall.mean())
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, ok.size, size=(resamples, ok.size))
    p_b = ok[picks].mean(axis=1)
    tau_b = wall[picks].mean(axis=1)
    tts_b = np.array([tts(t, q) for t, q in zip(tau_b, p_b)])
    low, high = np.quantile(tts_b, [0.025, 0.975], method="inverted_cdf")
    return {"runs": int(ok.size), "successes": int(ok.sum()), "p_success": p, "tau_s": tau,
            "tts99_s": _finite_or_none(tts(tau, p)),
            "tts99_ci95_s": [_finite_or_none(low), _finite_or_none(high)],
            "bootstrap": {"resamples": resamples, "seed": seed}}


def hit_times_curve(hits: Sequence[float], timeout_s: float) -> list[dict[str, float]]:
    """The time-to-target curve: one point per distinct hit time ``t <= timeout_s`` (sorted),
    ``{"t_s", "reached", "p_s", "tts99_s"}`` with ``reached`` the runs at the target by ``t``
    and ``p_s = reached / R`` (the empirical distribution of the hit times; ``hits`` length R,
    ``inf`` for a run that never reached it)."""
    h = np.asarray(hits, dtype=np.float64)
    if h.size == 0 or np.any(np.isnan(h)) or np.any(h < 0):
        raise MetricError(f"hit times must be >= 0 seconds (inf: not reached), got {list(h)}")
    within = np.sort(h[h <= timeout_s])
    points = []
    for t in np.unique(within):
        k = int(np.searchsorted(within, t, side="right"))
        p = k / h.size
        points.append({"t_s": float(t), "reached": k, "p_s": p,
                       "tts99_s": float(t) * _runs_needed(p)})
    return points


def _runs_needed(p: float | np.ndarray, confidence: float = CONFIDENCE) -> Any:
    """``ln(1 - confidence) / ln(1 - p)``, at least 1 (``p >= confidence`` gives 1), ``inf``
    at ``p = 0``: runs of ``tau`` needed for TTS."""
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        runs = np.where(p >= confidence, 1.0,
                        np.where(p <= 0, np.inf, math.log(1.0 - confidence) / np.log1p(-p)))
    runs = np.maximum(runs, 1.0)
    return float(runs) if runs.ndim == 0 else runs


def _min_tts(sorted_hits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(min TTS99, its tau) per row of ``sorted_hits`` (shape (B, R), each row ascending, ``inf``
    past the timeout): the k-th smallest hit time with ``p_s = k / R`` (ties: the last of equal
    times has the full count, and gives the smaller value)."""
    rows, r = sorted_hits.shape
    factor = _runs_needed(np.arange(1, r + 1) / r)
    with np.errstate(invalid="ignore"):
        cand = np.where(np.isfinite(sorted_hits), sorted_hits * factor, np.inf)
    best = np.argmin(cand, axis=1)
    pick = np.arange(rows)
    return cand[pick, best], np.where(np.isfinite(cand[pick, best]), sorted_hits[pick, best],
                                      np.nan)


def tts_over_tau(hits: Sequence[float], timeout_s: float, seed: int = 0,
                 resamples: int = BOOTSTRAP) -> dict[str, Any]:
    """The field's TTS99 of R runs from their hit times (see the module docstring).

    Args:
        hits: seconds at which each run first reached the target on its own clock (length R;
            ``inf``: never); hits after ``timeout_s`` count as not reached by any ``tau``.
        timeout_s: the runs' budget T; ``tau`` ranges over ``(0, T]``.
        seed, resamples: the bootstrap's (``resamples=0``: no interval, both bounds the
            estimate).

    Returns:
        ``{"tts99_s", "tau_opt_s", "p_s_at_tau_opt", "tts99_ci95_s", "late_hits"}``:
        ``tts99_s`` (None: no run reached the target by the timeout), the ``tau`` of the
        minimum and ``p_s`` there, the bootstrap 95 % interval (a bound is None where
        unbounded), the runs whose hit came after the timeout.
    """
    h = np.asarray(hits, dtype=np.float64)
    if h.size == 0:
        raise MetricError("tts_over_tau: no runs")
    cut = np.where(h <= timeout_s, h, np.inf)
    best, tau = _min_tts(np.sort(cut)[None, :])
    if resamples == 0:
        boot = np.array([best[0]])
    rng = np.random.default_rng(seed)
    found = [boot] if resamples == 0 else []
    chunk = max(1, min(resamples, 2_000_000 // h.size))  # bounded memory for many runs
    for start in range(0, resamples, chunk):
        picks = rng.integers(0, h.size, size=(min(chunk, resamples - start), h.size))
        found.append(_min_tts(np.sort(cut[picks], axis=1))[0])
    boot = np.concatenate(found)
    low, high = np.quantile(boot, [0.025, 0.975], method="inverted_cdf")
    reached = math.isfinite(best[0])
    p_opt = float(np.mean(cut <= tau[0])) if reached else 0.0
    return {"tts99_s": float(best[0]) if reached else None,
            "tau_opt_s": float(tau[0]) if reached else None,
            "p_s_at_tau_opt": p_opt,
            "tts99_ci95_s": [_finite_or_none(low), _finite_or_none(high)],
            "late_hits": int(np.sum(np.isfinite(h) & (h > timeout_s)))}
