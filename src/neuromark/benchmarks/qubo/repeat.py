"""Repeated fixed-timeout runs of one solver on one library instance (``neuromark qubo
solve``), and their figures.

Run ``r`` (0-based) uses solver seed ``seed + r`` and the whole timeout (no early stop), so
``tau``, the seconds of one run, is its measured wall time. Per run: the best energy (the
instance's own energy, :attr:`~.library.Instance.energy`), for an MIS instance ``|S|`` and
whether S is independent (feasible), the wall time and overrun, and the history of new
bests ``[(t_s, energy), ...]`` (seconds since the solve started, as MQLib prints it).

The target: the optimum's energy when one is given (an ``.opt.sol`` or the known-optimum
table, :mod:`.optima`), else the best energy over the runs (the algorithm's own best, as
QOBLIB's "successful runs" count). A run succeeds when it is feasible (MIS instances) and
its energy is <= the target (1e-9 tolerance). Over the runs: success probability and TTS99
with a bootstrap interval (:mod:`.tts`); residual energy = mean over runs of ``energy -
target`` (>= 0 against an optimum); gap = ``(energy - target) / |target|`` of the best run
and the mean over runs (for feasible MIS runs this is ``(|S*| - |S|) / |S*|`` in either
energy, NeuroBench's or QOBLIB's).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.library import Instance
from neuromark.benchmarks.qubo.objective import is_independent_set
from neuromark.benchmarks.qubo.scenarios import load_into, timed_solve
from neuromark.benchmarks.qubo.solvers.base import allowed_overrun
from neuromark.benchmarks.qubo.tts import tts_summary
from neuromark.errors import DataError

#: Energies within this of the target count as reaching it.
TOLERANCE = 1e-9


def check_optimum(instance: Instance, x: np.ndarray, where: str) -> float:
    """The energy of a stated optimal solution; for an MIS instance it must be independent."""
    if instance.is_mis and not is_independent_set(instance.edges, x):
        raise DataError(f"{where}: the solution is not an independent set of {instance.path}")
    return instance.cost(x)


def one_run(solver: Any, instance: Instance, timeout_s: float, seed: int) -> dict[str, Any]:
    """One timed run: energy, |S| and feasibility (MIS), wall, overrun and the history."""
    workload = instance.workload()
    load_s = load_into(solver, workload)
    result, wall, _ = timed_solve(solver, workload, timeout_s, seed)
    run: dict[str, Any] = {"seed": seed, "energy": result.cost + instance.offset,
                           "wall_s": wall, "overrun_s": wall - timeout_s,
                           "within_limit": wall - timeout_s <= allowed_overrun(timeout_s),
                           "load_s": load_s,
                           "history": [[float(t), float(c) + instance.offset]
                                       for t, c in result.trace]}
    if instance.is_mis:
        run["size"] = int(result.x.sum())
        run["feasible"] = bool(is_independent_set(instance.edges, result.x))
    run["x"] = result.x
    return run


def summarise_runs(instance: Instance, runs: list[dict[str, Any]], optimum: float | None,
                   optimum_source: str, bootstrap_seed: int = 0,
                   optimum_size: int | None = None) -> dict[str, Any]:
    """The figures over ``runs`` (see the module docstring) against ``optimum`` (an energy,
    or None: the runs' own best; ``optimum_size``: its |S| for an MIS instance)."""
    feasible = [r.get("feasible", True) for r in runs]
    energies = np.array([r["energy"] for r in runs], dtype=np.float64)
    if optimum is None:
        candidates = energies[np.array(feasible, dtype=bool)]
        target = float(candidates.min()) if candidates.size else None
        source = "the runs' own best (no optimum given)"
    else:
        target, source = float(optimum), optimum_source
    success = [bool(f and target is not None and e <= target + TOLERANCE)
               for f, e in zip(feasible, energies)]
    out: dict[str, Any] = {"target_energy": target, "target_source": source,
                           "feasible_runs": int(sum(feasible)),
                           **tts_summary(success, [r["wall_s"] for r in runs],
                                         seed=bootstrap_seed)}
    if instance.is_mis and target is not None:
        out["target_size"] = optimum_size if optimum is not None else max(
            (r["size"] for r in runs if r["feasible"]), default=None)
        sizes = [r["size"] for r in runs if r["feasible"]]
        out["best_size"] = max(sizes) if sizes else None
    if target is not None:
        residual = energies - target
        out["residual_energy_mean"] = float(residual.mean())
        if target != 0:
            gaps = residual / abs(target)
            best = int(np.argmin(np.where(feasible, energies, math.inf))) if any(feasible) \
                else int(np.argmin(energies))
            out["gap_best"] = float(gaps[best])
            out["gap_mean"] = float(gaps.mean())
    return out


def solve_runs(solver: Any, instance: Instance, timeout_s: float, runs: int, seed: int,
               optimum: float | None = None, optimum_source: str = "",
               optimum_size: int | None = None, progress: Any = None) -> dict[str, Any]:
    """``runs`` runs (seeds ``seed .. seed + runs - 1``) and their summary:
    ``{"instance", "runs": [...], "summary": {...}}``; the best solution is in
    ``"best_x"`` (int8, length n; not JSON)."""
    done: list[dict[str, Any]] = []
    for r in range(runs):
        done.append(one_run(solver, instance, timeout_s, seed + r))
        if progress is not None:
            progress(done[-1])
    order = sorted(range(runs), key=lambda i: (not done[i].get("feasible", True),
                                                done[i]["energy"]))
    best_x = done[order[0]]["x"]
    for run in done:
        del run["x"]
    summary = summarise_runs(instance, done, optimum, optimum_source, bootstrap_seed=seed,
                             optimum_size=optimum_size)
    return {"instance": {"name": instance.name, "path": str(instance.path),
                         "format": instance.fmt, "n": instance.n,
                         "edges": None if instance.edges is None else int(len(instance.edges)),
                         "energy": instance.energy},
            "timeout_s": timeout_s, "seed": seed, "runs": done, "summary": summary,
            "best_x": best_x}
