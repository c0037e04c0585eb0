"""QUBO solves over their real-time deadline (NeuroBench system rules review).

A real-time system must answer by its deadline; a solve that returns late is a miss however
good its answer. The deadline of an entry is its ``timeout_s`` (fixed timeout) or its
``cap_s`` (time to solution); its ``wall_s`` is the timed solve call (after the workload was
loaded). A solver is allowed the overrun the solver contract states,
:func:`~neuromark.benchmarks.qubo.solvers.base.allowed_overrun` (max(5 % of the deadline,
2 ms): the time to notice the timer and return the best solution), so
:func:`over_deadline` reports, per scenario, the share of solves with
``wall_s - deadline > allowed_overrun(deadline)``, and the distribution of the overruns
``wall_s - deadline`` (negative: early). A solver that keeps its timeout scores 0; one that
returns later than the allowance counts as a miss. A time-to-solution run that stops early
at its target is never late.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.solvers.base import allowed_overrun

#: The definition stated beside the figures in every QUBO result.
DEFINITION = ("over_deadline_fraction = solves with wall_s - deadline > allowed overrun / "
              "solves, per scenario; deadline = timeout_s (fixed_timeout) or cap_s "
              "(time_to_solution); wall_s = the timed solve call after loading; allowed "
              "overrun = max(5% of the deadline, 2 ms), the solver contract's "
              "(within_time_limit uses the same allowance); overrun_s = wall_s - deadline "
              "(min, median, p95, max over the solves)")
#: The deadline field of each scenario.
DEADLINE = {"fixed_timeout": "timeout_s", "time_to_solution": "cap_s"}


def overrun_distribution(overruns: list[float]) -> dict[str, float]:
    """``{"min", "median", "p95", "max"}`` of overruns in seconds (``wall_s - deadline``)."""
    arr = np.asarray(overruns, dtype=np.float64)
    return {"min": float(arr.min()), "median": float(np.median(arr)),
            "p95": float(np.percentile(arr, 95)), "max": float(arr.max())}


def over_deadline(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{scenario: {"fraction", "over", "solves", "deadline", "overrun_s", "definition"}}``
    for the scenarios of ``entries`` that have a deadline (max_size has none per solve);
    entries without ``wall_s`` or a deadline (not run) are left out. ``overrun_s`` is the
    distribution of ``wall_s - deadline`` (:func:`overrun_distribution`); a
    time-to-solution run that reached its target early counts 0 there too."""
    out: dict[str, dict[str, Any]] = {}
    for scenario, key in DEADLINE.items():
        runs = [e for e in entries if e.get("scenario") == scenario
                and isinstance(e.get("wall_s"), (int, float)) and isinstance(e.get(key), (int, float))]
        if not runs:
            continue
        overruns = [float(e["wall_s"]) - float(e[key]) for e in runs]
        over = sum(o > allowed_overrun(float(e[key])) for o, e in zip(overruns, runs))
        out[scenario] = {"fraction": over / len(runs), "over": over, "solves": len(runs),
                         "deadline": key, "overrun_s": overrun_distribution(overruns),
                         "definition": DEFINITION}
    return out
