"""QUBO solves over their real-time deadline (NeuroBench system rules review).

A real-time system must answer by its deadline; a solve that returns late is a miss however
good its answer. The deadline of an entry is its ``timeout_s`` (fixed timeout) or its
``cap_s`` (time to solution); its ``wall_s`` is the timed solve call (after the workload was
loaded). :func:`over_deadline` reports, per scenario, the share of solves with
``wall_s > deadline``, with no tolerance: unlike ``within_time_limit``, which allows the
overrun of :func:`~neuromark.system.qubo.solvers.base.allowed_overrun` (max(5 %, 2 ms)).
A time-to-solution run that stops early at its target is never late.
"""

from __future__ import annotations

from typing import Any

#: The definition stated beside the figures in every QUBO result.
DEFINITION = ("over_deadline_fraction = solves with wall_s > deadline / solves, per scenario; "
              "deadline = timeout_s (fixed_timeout) or cap_s (time_to_solution); wall_s = the "
              "timed solve call after loading; no tolerance (within_time_limit allows "
              "max(5%, 2 ms))")
#: The deadline field of each scenario.
DEADLINE = {"fixed_timeout": "timeout_s", "time_to_solution": "cap_s"}


def over_deadline(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``{scenario: {"fraction", "over", "solves", "deadline", "definition"}}`` for the
    scenarios of ``entries`` that have a deadline (max_size has none per solve); entries
    without ``wall_s`` or a deadline (not run) are left out."""
    out: dict[str, dict[str, Any]] = {}
    for scenario, key in DEADLINE.items():
        runs = [e for e in entries if e.get("scenario") == scenario
                and isinstance(e.get("wall_s"), (int, float)) and isinstance(e.get(key), (int, float))]
        if not runs:
            continue
        over = sum(float(e["wall_s"]) > float(e[key]) for e in runs)
        out[scenario] = {"fraction": over / len(runs), "over": over, "solves": len(runs),
                         "deadline": key, "definition": DEFINITION}
    return out
