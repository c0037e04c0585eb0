"""The three QUBO scenarios, one entry at a time: fixed timeout, time to solution, max size.

Every entry is a plain JSON-able dict. The clock starts after the workload is loaded into
the solver (``solver.prepare(Q)``: format conversion, JIT compilation); the solve call,
including the solver's own cost tracking, is timed with ``time.perf_counter``. A solver
must return within ``timeout + max(5%, 2 ms)``; the overrun is recorded for every run.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from neuromark.errors import DataError, MetricError, ModelOutputError
from neuromark.system.qubo.energy import as_solution, energy, is_independent_set
from neuromark.system.qubo.gap import bks_gap, cost_at_gap
from neuromark.system.qubo.solvers.base import SolveResult, allowed_overrun, check_timeout
from neuromark.system.qubo.workloads import Workload

NOT_MEASURED = "not measured"
NOT_REACHED = "not reached within the cap"


def load_into(solver: Any, workload: Workload) -> float:
    """Load the workload into the solver (untimed for the scenarios); returns seconds taken."""
    start = time.perf_counter()
    prepare = getattr(solver, "prepare", None)
    if prepare is not None:
        prepare(workload.Q)
    return time.perf_counter() - start


def timed_solve(solver: Any, workload: Workload, timeout_s: float, seed: int, *,
                target: float | None = None, meter: Any = None
                ) -> tuple[SolveResult, float, dict[str, Any]]:
    """Run one timed solve; returns (checked result, wall seconds, power figures).

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
    power = power_figures(meter, t0, t1)
    power["meter_window"] = [t0, t1] if t0 is not None else None
    return result, wall, power


def power_figures(meter: Any, t0: float | None, t1: float | None) -> dict[str, Any]:
    """Average power (W) and energy (J) over [t0, t1], or "not measured" with the reason."""
    if meter is None or t0 is None or t1 is None:
        return {"power_w": NOT_MEASURED, "energy_j": NOT_MEASURED,
                "power_reason": "no power meter configured"}
    meta = meter.metadata() if hasattr(meter, "metadata") else {}
    if meta.get("measured") is False:
        reason = meta.get("reason") or "the meter does not measure"
        return {"power_w": NOT_MEASURED, "energy_j": NOT_MEASURED, "power_reason": reason}
    try:
        joules = float(meter.energy(t0, t1))
    except (DataError, MetricError) as exc:
        return {"power_w": NOT_MEASURED, "energy_j": NOT_MEASURED, "power_reason": str(exc)}
    return {"power_w": joules / max(t1 - t0, 1e-12), "energy_j": joules, "power_reason": ""}


def fixed_timeout(solver: Any, workload: Workload, timeout_s: float, seed: int,
                  target_cost: float, meter: Any = None) -> dict[str, Any]:
    """Best cost, BKS-gap, independence, wall time, overrun and power at one timeout."""
    load_s = load_into(solver, workload)
    result, wall, power = timed_solve(solver, workload, timeout_s, seed, meter=meter)
    overrun = wall - timeout_s
    return {
        "cost": result.cost, "gap": bks_gap(result.cost, target_cost), "bks": target_cost,
        "independent": is_independent_set(workload.edges, result.x),
        "wall_s": wall, "overrun_s": overrun,
        "within_limit": overrun <= allowed_overrun(timeout_s), "load_s": load_s,
        **power, "trace": [list(p) for p in result.trace], "info": result.info,
    }


def time_to_solution(solver: Any, workload: Workload, gaps: list[float], cap_s: float,
                     seed: int, target_cost: float, meter: Any = None) -> dict[str, Any]:
    """Latency to reach each gap threshold, from one run aimed at the tightest threshold.

    The latency of a threshold is the first time in the best-cost trace at which the best
    cost was within it; solvers without an intermediate trace (D-Wave) report their wall
    time when their final cost is within it. Thresholds never reached are reported as
    "not reached within the cap", never as a number.
    """
    load_s = load_into(solver, workload)
    tightest = cost_at_gap(target_cost, min(gaps))
    result, wall, power = timed_solve(solver, workload, cap_s, seed, target=tightest,
                                      meter=meter)
    trace = sorted(result.trace) or [(wall, result.cost)]
    latencies: dict[str, Any] = {}
    for g in gaps:
        threshold = cost_at_gap(target_cost, g)
        hit = next((t for t, c in trace if c <= threshold + 1e-9), None)
        if hit is None and result.cost <= threshold + 1e-9:
            hit = wall
        latencies[f"{g:g}"] = NOT_REACHED if hit is None else min(hit, wall)
    energy_j: dict[str, Any] = {}
    window = power.get("meter_window")
    for g, lat in latencies.items():
        if isinstance(lat, str):
            energy_j[g] = NOT_REACHED
        elif window is None or not isinstance(power.get("power_w"), float):
            energy_j[g] = NOT_MEASURED
        else:  # the meter's energy from the start of the solve to the moment it got there
            energy_j[g] = power_figures(meter, window[0], window[0] + max(lat, 1e-9))["energy_j"]
    return {"cost": result.cost, "gap": bks_gap(result.cost, target_cost), "bks": target_cost,
            "latency_s": latencies, "energy_j_to_gap": energy_j, "cap_s": cap_s,
            "wall_s": wall, "overrun_s": wall - cap_s if result.cost > tightest else 0.0,
            "independent": is_independent_set(workload.edges, result.x), "load_s": load_s,
            "power_w": power["power_w"], "power_reason": power["power_reason"],
            "meter_window": power["meter_window"],
            "trace": [list(p) for p in result.trace]}


def max_supported_size(solver_factory: Any, sizes: list[int], density: float, timeout_s: float,
                       seed: int = 0) -> dict[str, Any]:
    """The largest size (ascending ``sizes``) whose (size, density, seed 0) workload loads and
    whose solve beats cost 0 within ``timeout_s``; stops at the first failure."""
    from neuromark.system.qubo.workloads import mis_workload

    largest, tried = None, []
    for n in sorted(sizes):
        record: dict[str, Any] = {"n": n}
        try:
            start = time.perf_counter()
            w = mis_workload(n, density, 0)
            solver = solver_factory()
            record["load_s"] = time.perf_counter() - start + load_into(solver, w)
            result, wall, _ = timed_solve(solver, w, timeout_s, seed)
            record.update(cost=result.cost, wall_s=wall, ok=bool(result.cost < 0))
        except MemoryError:
            record.update(ok=False, error="out of memory")
        except (ValueError, RuntimeError, OSError) as exc:
            record.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        tried.append(record)
        if not record["ok"]:
            break
        largest = n
        del w
    return {"density": density, "largest": largest, "tried": tried,
            "edge_nnz_note": "Q stored sparse (CSR)", "timeout_s": timeout_s,
            "mean_load_s": float(np.mean([r.get("load_s", 0.0) for r in tried])) if tried else 0.0}
