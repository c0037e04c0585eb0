"""Repeated fixed-timeout runs of one solver on one library instance (``neuromark qubo
solve``), and their figures.

Run ``r`` (0-based) uses solver seed ``seed + r`` and the whole timeout (no early stop), so
``tau``, the seconds of one run, is its measured wall time. Per run: the best energy (the
instance's own energy, :attr:`~.library.Instance.energy`), for an MIS instance ``|S|`` and
whether S is independent (feasible), the wall time and overrun, and the history of new
bests ``[(t_s, energy), ...]`` (seconds since the solve started, as MQLib prints it).

The target: the optimum's energy when one is given (``--optimum``, or the known-value table,
:mod:`.known`, matched by content), else the best energy over the runs (the algorithm's own
best, as QOBLIB's "successful runs" count). A stated target that a feasible run beats is not
trusted: the figures are computed against the best energy actually seen, and the summary says
so (``target_beaten``; a beaten *proven* optimum means the table or the file is wrong). A run
succeeds when it is feasible (MIS instances) and its energy is <= the target (1e-9 tolerance).

Over the runs (:mod:`.tts`): the success probability at the timeout; the field's TTS99, the
minimum over ``tau`` of ``TTS99(tau)``, with the ``tau`` that gives it, from each run's *hit
time* (the first time of its history at or below the target; a successful run without a
history hits at its wall time); TTS99 at the timeout (``tau`` = the mean wall time of a run),
under its own name; the time-to-target curve. Times: a run's history is on the solver's own
clock, which starts when the timed solve call starts (loading the instance, ``prepare``, is
before it and not counted, as everywhere in this track). A run stopped at ``tau`` would also
pay the time to notice the stop and return, which the runs measure as their overrun
``wall_s - timeout_s``: its mean over runs is ``stop_overhead_s`` (>= 0) and
``tts99_with_overhead_s`` is the minimum of ``(tau + stop_overhead_s) * runs needed``.
Residual energy = mean over runs of ``energy - target`` (>= 0); gap = ``(energy - target) /
|target|`` of the best run and the mean over runs (for feasible MIS runs this is ``(|S*| -
|S|) / |S*|`` in either energy, NeuroBench's or QOBLIB's).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from neuromark.benchmarks.qubo.library import Instance
from neuromark.benchmarks.qubo.objective import is_independent_set
from neuromark.benchmarks.qubo.scenarios import load_into, timed_solve
from neuromark.benchmarks.qubo.solvers.base import allowed_overrun
from neuromark.benchmarks.qubo.tts import hit_times_curve, tts_over_tau, tts_summary
from neuromark.errors import DataError

#: Energies within this of the target count as reaching it.
TOLERANCE = 1e-9


def check_optimum(instance: Instance, x: np.ndarray, where: str) -> float:
    """The energy of a stated optimal solution; for an MIS instance it must be independent."""
    if instance.is_mis and not is_independent_set(instance.edges, x):
        inside = x[instance.edges[:, 0]].astype(bool) & x[instance.edges[:, 1]].astype(bool)
        u, v = (instance.edges[np.flatnonzero(inside)[0]] + 1).tolist()
        raise DataError(f"{where}: the solution is not an independent set of {instance.path} "
                        f"({int(inside.sum())} of its edges join chosen nodes, e.g. {u}-{v}); "
                        f"it cannot be the optimum of this graph")
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


def hit_time(run: dict[str, Any], target: float, succeeded: bool) -> float:
    """Seconds (solver clock) at which a run first reached ``target``: the first history entry
    at or below it; ``inf`` for a run that did not succeed; the wall time for a successful run
    with no such entry (a solver that reports no history)."""
    if not succeeded:
        return math.inf
    for t, energy in run.get("history", []):
        if energy <= target + TOLERANCE:
            return float(t)
    return float(run["wall_s"])


def _beaten(target: float, best_seen: float | None, source: str, proven: bool,
            runs: int) -> dict[str, Any] | None:
    """What a stated target that a feasible run beat was, in a dict for the results."""
    if best_seen is None or best_seen >= target - TOLERANCE:
        return None
    meaning = ("a run beat a PROVEN optimum: the stated value or this file is wrong" if proven
               else "the runs improve on the stated value")
    return {"stated_energy": target, "stated_source": source, "best_seen_energy": best_seen,
            "by_runs": runs, "stated_proven": proven, "meaning": meaning}


def summarise_runs(instance: Instance, runs: list[dict[str, Any]], optimum: float | None,
                   optimum_source: str, bootstrap_seed: int = 0,
                   optimum_size: int | None = None, timeout_s: float | None = None,
                   optimum_proven: bool = False) -> dict[str, Any]:
    """The figures over ``runs`` (see the module docstring) against ``optimum`` (an energy,
    or None: the runs' own best; ``optimum_size``: its |S| for an MIS instance;
    ``optimum_proven``: the stated value claims optimality). ``timeout_s`` (default: the
    shortest wall time) bounds ``tau``."""
    feasible = [r.get("feasible", True) for r in runs]
    energies = np.array([r["energy"] for r in runs], dtype=np.float64)
    candidates = energies[np.array(feasible, dtype=bool)]
    best_seen = float(candidates.min()) if candidates.size else None
    notes: list[str] = []
    beaten = None
    if optimum is None:
        target = best_seen
        source = "the runs' own best (no optimum given)"
    else:
        target, source = float(optimum), optimum_source
        beaten = _beaten(target, best_seen, source, optimum_proven,
                         int(np.sum(candidates < target - TOLERANCE)))
        if beaten is not None:
            notes.append(f"stated target {target:g} ({source}) beaten by {beaten['by_runs']} "
                         f"run(s), best {best_seen:g}: {beaten['meaning']}; figures are "
                         f"computed against the best seen")
            target, optimum_size = best_seen, None
            source = f"the runs' best (the stated {optimum:g} from {optimum_source} was beaten)"
    success = [bool(f and target is not None and e <= target + TOLERANCE)
               for f, e in zip(feasible, energies)]
    walls = [r["wall_s"] for r in runs]
    timeout = float(timeout_s) if timeout_s is not None else float(min(walls))
    at_timeout = tts_summary(success, walls, seed=bootstrap_seed)
    out: dict[str, Any] = {
        "target_energy": target, "target_source": source, "target_beaten": beaten,
        "notes": notes, "feasible_runs": int(sum(feasible)), "runs": at_timeout["runs"],
        "successes": at_timeout["successes"], "p_success": at_timeout["p_success"],
        "tts99_at_timeout_s": at_timeout["tts99_s"],
        "tts99_at_timeout_ci95_s": at_timeout["tts99_ci95_s"],
        "tau_at_timeout_s": at_timeout["tau_s"], "bootstrap": at_timeout["bootstrap"]}
    hits = [hit_time(r, target, ok) if target is not None else math.inf
            for r, ok in zip(runs, success)]
    out.update(tts_over_tau(hits, timeout, seed=bootstrap_seed))
    overhead = max(0.0, float(np.mean([w - timeout for w in walls])))
    out["stop_overhead_s"] = overhead
    out["tts99_with_overhead_s"] = tts_over_tau([h + overhead for h in hits],
                                                timeout + overhead, resamples=0)["tts99_s"]
    out["hit_times_s"] = [None if math.isinf(h) else h for h in hits]
    out["time_to_target"] = hit_times_curve(hits, timeout)
    if instance.is_mis and target is not None:
        out["target_size"] = optimum_size if optimum is not None and beaten is None else max(
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
               optimum_size: int | None = None, progress: Any = None,
               optimum_proven: bool = False, done: list[dict[str, Any]] | None = None,
               keep_solutions: bool = False) -> dict[str, Any]:
    """``runs`` runs (seeds ``seed .. seed + runs - 1``) and their summary:
    ``{"instance", "runs": [...], "summary": {...}}``; the best solution is in
    ``"best_x"`` (int8, length n; not JSON), and with ``keep_solutions`` every run's in
    ``"run_x"`` (a list of them, also not JSON: what a submission folder needs). ``progress(run)``
    is called after each run; ``done`` (a list) receives the runs as they finish, so that a
    caller interrupted keeps the completed ones."""
    done = [] if done is None else done
    for r in range(runs):
        done.append(one_run(solver, instance, timeout_s, seed + r))
        if progress is not None:
            progress(done[-1])
    order = sorted(range(runs), key=lambda i: (not done[i].get("feasible", True),
                                                done[i]["energy"]))
    best_x = done[order[0]]["x"]
    run_x = [run.pop("x") for run in done]
    summary = summarise_runs(instance, done, optimum, optimum_source, bootstrap_seed=seed,
                             optimum_size=optimum_size, timeout_s=timeout_s,
                             optimum_proven=optimum_proven)
    result = {"instance": {"name": instance.name, "path": str(instance.path),
                         "format": instance.fmt, "n": instance.n,
                         "edges": None if instance.edges is None else int(len(instance.edges)),
                         "energy": instance.energy},
            "timeout_s": timeout_s, "seed": seed, "runs": done, "summary": summary,
            "best_x": best_x}
    if keep_solutions:
        result["run_x"] = run_x
    return result
