"""The three QUBO scenarios, one entry at a time: fixed timeout, time to solution, max size.

Every entry is a plain JSON-able dict. The clock starts after the workload is loaded into
the solver (``solver.prepare(Q)``: format conversion, JIT compilation); the solve call,
including the solver's own cost tracking, is timed with ``time.perf_counter``. A solver
must return within ``timeout + max(5%, 2 ms)``; the overrun is recorded for every run.

Power: each solve is bracketed by meter marks (``meter_window``); :func:`add_power` turns the
window into power and energy figures. A sweep calls it once the meter has stopped
(``defer_power``), since a meter's trace may only cover the run by then.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.gap import bks_gap, cost_at_gap
from neuromark.benchmarks.qubo.objective import as_solution, energy, is_independent_set
from neuromark.benchmarks.qubo.solvers.base import SolveResult, allowed_overrun, check_timeout
from neuromark.benchmarks.qubo.workloads import Workload, mis_workload
from neuromark.errors import DataError, MetricError, ModelOutputError

NOT_MEASURED = "not measured"
NOT_REACHED = "not reached within the cap"
#: The power reason of an entry whose figures were deferred and never filled in.
POWER_PENDING = "the sweep stopped before the meter was read"


def load_into(solver: Any, workload: Workload) -> float:
    """Load the workload into the solver (untimed for the scenarios); returns seconds taken."""
    start = time.perf_counter()
    prepare = getattr(solver, "prepare", None)
    if prepare is not None:
        prepare(workload.Q)
    return time.perf_counter() - start


def timed_solve(solver: Any, workload: Workload, timeout_s: float, seed: int, *,
                target: float | None = None, meter: Any = None
                ) -> tuple[SolveResult, float, list[float] | None]:
    """Run one timed solve; returns (checked result, wall seconds, meter window ``[t0, t1]``
    or None without a meter).

    The solution is checked (length n, binary); its cost is recomputed from Q, and a
    solver that reports a different cost is an error, as is a wrong-length vector.
    """
    timeout_s = check_timeout(timeout_s)
    kwargs = {} if target is None else {"target": target}
    t0 = meter.mark("qubo-solve-start") if meter is not None else None
    start = time.perf_counter()
    result = solver.solve(workload.Q, timeout_s, seed, **kwargs)
    wall = time.perf_counter() - start
    t1 = meter.mark("qubo-solve-end") if meter is not None else None
    name = getattr(solver, "name", type(solver).__name__)
    if not isinstance(result, SolveResult):
        raise ModelOutputError(f"solver {name!r} returned {type(result).__name__}, expected "
                               f"SolveResult")
    result.x = as_solution(result.x, workload.n, f"solver {name!r} on {workload.name}")
    true_cost = energy(workload.Q, result.x)
    if not math.isclose(true_cost, result.cost, rel_tol=1e-9, abs_tol=1e-6):
        raise ModelOutputError(f"solver {name!r} on {workload.name}: reported cost "
                               f"{result.cost:g} but x^T Q x = {true_cost:g}")
    return result, wall, ([t0, t1] if t0 is not None and t1 is not None else None)


def power_figures(meter: Any, t0: float | None, t1: float | None) -> dict[str, Any]:
    """Average power (W) and energy (J) over [t0, t1], or "not measured" with the reason."""
    if meter is None or t0 is None or t1 is None:
        return {"power_w": NOT_MEASURED, "energy_j": NOT_MEASURED,
                "power_reason": "no power meter configured"}
    try:
        meta = meter.metadata() if hasattr(meter, "metadata") else {}
        if meta.get("measured") is False:
            reason = meta.get("reason") or "the meter does not measure"
            return {"power_w": NOT_MEASURED, "energy_j": NOT_MEASURED, "power_reason": reason}
        joules = float(meter.energy(t0, t1))
    except (DataError, MetricError) as exc:
        return {"power_w": NOT_MEASURED, "energy_j": NOT_MEASURED, "power_reason": str(exc)}
    return {"power_w": joules / max(t1 - t0, 1e-12), "energy_j": joules, "power_reason": ""}


def add_power(entry: dict[str, Any], meter: Any) -> dict[str, Any]:
    """Fill in the power figures of a fixed-timeout or time-to-solution entry from its
    ``meter_window`` (in place; returns it): ``power_w``, ``power_reason`` and ``energy_j``
    (fixed timeout) or ``energy_j_to_gap`` (time to solution: the meter's energy from the
    start of the solve to the moment each threshold was reached)."""
    window = entry.get("meter_window")
    t0, t1 = window if window else (None, None)
    power = power_figures(meter, t0, t1)
    entry["power_w"], entry["power_reason"] = power["power_w"], power["power_reason"]
    if "latency_s" not in entry:
        entry["energy_j"] = power["energy_j"]
        return entry
    energy_j: dict[str, Any] = {}
    for g, lat in entry["latency_s"].items():
        if isinstance(lat, str):
            energy_j[g] = NOT_REACHED
        elif t0 is None or not isinstance(power["power_w"], float):
            energy_j[g] = NOT_MEASURED
        else:
            energy_j[g] = power_figures(meter, t0, t0 + max(lat, 1e-9))["energy_j"]
    entry["energy_j_to_gap"] = energy_j
    return entry


def _power(entry: dict[str, Any], meter: Any, defer: bool) -> dict[str, Any]:
    if defer and meter is not None:  # filled in by add_power once the meter has stopped
        entry["power_reason"] = POWER_PENDING
        return entry
    return add_power(entry, meter)


def fixed_timeout(solver: Any, workload: Workload, timeout_s: float, seed: int,
                  target_cost: float, meter: Any = None, *, defer_power: bool = False
                  ) -> dict[str, Any]:
    """Best cost, BKS-gap, independence, wall time, overrun and power at one timeout.

    With ``defer_power`` (and a meter) the power figures are left "not measured" (reason
    :data:`POWER_PENDING`) for :func:`add_power` to fill in after the meter stops.
    """
    load_s = load_into(solver, workload)
    result, wall, window = timed_solve(solver, workload, timeout_s, seed, meter=meter)
    overrun = wall - timeout_s
    entry = {
        "cost": result.cost, "gap": bks_gap(result.cost, target_cost), "bks": target_cost,
        "independent": is_independent_set(workload.edges, result.x),
        "wall_s": wall, "overrun_s": overrun,
        "within_limit": overrun <= allowed_overrun(timeout_s), "load_s": load_s,
        "power_w": NOT_MEASURED, "energy_j": NOT_MEASURED, "power_reason": "",
        "meter_window": window, "trace": [list(p) for p in result.trace], "info": result.info,
    }
    return _power(entry, meter, defer_power)


def time_to_solution(solver: Any, workload: Workload, gaps: list[float], cap_s: float,
                     seed: int, target_cost: float, meter: Any = None, *,
                     defer_power: bool = False) -> dict[str, Any]:
    """Latency to reach each gap threshold, from one run aimed at the tightest threshold.

    The latency of a threshold is the first time in the best-cost trace at which the best
    cost was within it; solvers without an intermediate trace (D-Wave) report their wall
    time when their final cost is within it. Thresholds never reached are reported as
    "not reached within the cap", never as a number. ``defer_power``: as in
    :func:`fixed_timeout`.
    """
    load_s = load_into(solver, workload)
    tightest = cost_at_gap(target_cost, min(gaps))
    result, wall, window = timed_solve(solver, workload, cap_s, seed, target=tightest,
                                       meter=meter)
    trace = sorted(result.trace) or [(wall, result.cost)]
    latencies: dict[str, Any] = {}
    for g in gaps:
        threshold = cost_at_gap(target_cost, g)
        hit = next((t for t, c in trace if c <= threshold + 1e-9), None)
        if hit is None and result.cost <= threshold + 1e-9:
            hit = wall
        latencies[f"{g:g}"] = NOT_REACHED if hit is None else min(hit, wall)
    entry = {"cost": result.cost, "gap": bks_gap(result.cost, target_cost), "bks": target_cost,
             "latency_s": latencies,
             "energy_j_to_gap": {g: NOT_REACHED if isinstance(lat, str) else NOT_MEASURED
                                 for g, lat in latencies.items()},
             "cap_s": cap_s, "wall_s": wall,
             "overrun_s": wall - cap_s if result.cost > tightest else 0.0,
             "independent": is_independent_set(workload.edges, result.x), "load_s": load_s,
             "power_w": NOT_MEASURED, "power_reason": "", "meter_window": window,
             "trace": [list(p) for p in result.trace]}
    return _power(entry, meter, defer_power)


def max_supported_size(solver_factory: Any, sizes: list[int], density: float, timeout_s: float,
                       seed: int = 0) -> dict[str, Any]:
    """The largest size (ascending ``sizes``) whose (size, density, seed 0) workload loads and
    whose solve beats cost 0 within ``timeout_s`` plus the allowed overrun (max(5%, 2 ms));
    stops at the first failure.

    Only running out of memory counts as "does not fit"; any other error (a bad config, a
    solver reporting a false cost, a failing kernel) propagates.
    """

    largest, tried = None, []
    for n in sorted(sizes):
        record: dict[str, Any] = {"n": n}
        w = solver = None
        try:
            start = time.perf_counter()
            w = mis_workload(n, density, 0)
            solver = solver_factory()
            record["load_s"] = time.perf_counter() - start + load_into(solver, w)
            result, wall, _ = timed_solve(solver, w, timeout_s, seed)
        except MemoryError:
            record.update(ok=False, error="out of memory")
        else:
            overrun = wall - timeout_s
            in_time = overrun <= allowed_overrun(timeout_s)
            record.update(cost=result.cost, wall_s=wall, overrun_s=overrun, within_limit=in_time,
                          ok=bool(result.cost < 0 and in_time))
            if not in_time:
                record["error"] = (f"overran the {timeout_s:g} s timeout by {overrun:.4f} s "
                                   f"(limit max(5%, 2 ms))")
            elif not result.cost < 0:
                record["error"] = f"cost {result.cost:g} does not beat the empty set (0)"
        tried.append(record)
        del w, solver  # free this size before loading the next
        if not record["ok"]:
            break
        largest = n
    loads = [r["load_s"] for r in tried if "load_s" in r]
    return {"density": density, "largest": largest, "tried": tried,
            "edge_nnz_note": "Q stored sparse (CSR)", "timeout_s": timeout_s,
            "mean_load_s": float(np.mean(loads)) if loads else None}
