"""Local executor vs Ray on this machine (issue 16): wall times, speed-up, per-unit overhead.

Runs the same QUBO sweep (single-threaded dwave-tabu units of 1 s, plus 1-worker
neuromark-sa units) and a Mackey-Glass multi-tau config (ESN instances, one torch thread
each) twice: with the local executor (one unit after another) and with Ray on ``--cpus``
CPUs (default 2). Ray's start-up and its workers' first imports are timed apart (a warm-up
unit per CPU), so the speed-up compares the runs themselves. The per-unit overhead is the
wall time of ``--noop`` no-op units divided by their count, Ray minus local.

The Mackey-Glass config's wall time includes its serial driver part (validation, data
checks, aggregation, results and report); the executor's own share is measured apart by
running the config's instance units only (a larger ESN, ``--mg-units-reservoir``, so that
each unit lasts >= 1 s, the issue's condition for the target).

Also prints an estimate of a QUBO config's local wall time (``--estimate CONFIG``, default
``configs/qubo/mis_medium.yaml``) from its planned entries and the per-entry overhead
measured here, without running it.

Targets (issue 16): speed-up >= 1.6x on 2 cores for single-threaded units >= 1 s; overhead
<= 20 ms per unit. The machine's load average is printed: other processes share the cores.

    .venv/bin/python bench/ray_sweep.py [--quick] [--cpus 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QUBO = """task: qubo
benchmark: {{id: bench-ray-qubo, version: "1.0"}}
workloads: {{sizes: [{sizes}], densities: [0.05], seeds: [0, 1]}}
solvers:
  - name: dwave-tabu
  - {{name: neuromark-sa, options: {{workers: 1}}}}
seeds: [0]
fixed_timeout: {{timeouts: [{timeout}]}}
plots: false
"""
MG = """task: mackey_glass
benchmark: {{id: bench-ray-mg, version: "1.0"}}
data: {{taus: [{taus}], instances: {instances}, length: {length}, shift: 0.5}}
models: [{{name: esn, seed: 0, params: {{reservoir_size: 186, connection_probability: 0.11,
          leak: 0.6, ridge: 1.0e-8, warmup: 100}}}}]
threads: 1
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def warm_up() -> str:
    """Import what the units import (run in every Ray worker before timing)."""
    import neuromark.benchmarks.mackey_glass.task  # noqa: F401
    import neuromark.benchmarks.qubo.solvers.anneal  # noqa: F401
    import neuromark.benchmarks.qubo.solvers.dwave  # noqa: F401
    import neuromark.benchmarks.qubo.task  # noqa: F401

    time.sleep(0.5)  # hold the CPU so that each warm-up lands on another worker
    return str(os.getpid())


def warm(executor, tmp: Path) -> float:
    """Seconds of a small run of both configs on ``executor`` (first imports, numba caches,
    torch start-up, workload generation in each worker), before anything is timed."""
    qubo, mg = tmp / "warm-qubo.yaml", tmp / "warm-mg.yaml"
    qubo.write_text(QUBO.format(sizes="100", timeout=0.01))
    mg.write_text(MG.format(taus="17", instances=2, length=20))
    start = time.perf_counter()
    for config in (qubo, mg):
        timed_run(config, executor)
    return time.perf_counter() - start


def timed_run(config: Path, executor) -> tuple[float, list]:
    """Wall time of one run of ``config`` on ``executor`` into a fresh folder."""
    from neuromark.context import RunContext
    from neuromark.suite import run_configs

    out = Path(tempfile.mkdtemp(prefix="ray-bench-")) / "out"
    start = time.perf_counter()
    written = run_configs([config], out, ctx=RunContext.build(executor=executor, quiet=True))
    wall = time.perf_counter() - start
    return wall, [r for _, r in written]


def mg_units(config: Path) -> list:
    """The instance units of a Mackey-Glass config, as its task declares them."""
    from neuromark.benchmarks.mackey_glass.instances import instance_units
    from neuromark.benchmarks.mackey_glass.task import TASK, _model_params
    from neuromark.config import load_config
    from neuromark.context import RunContext

    cfg = TASK.plan(load_config(config), RunContext.build())
    units = []
    for i, model in enumerate(cfg.models):
        for tau in cfg.data.taus:
            units += instance_units(model, _model_params(model, None, i), tau, cfg.data, None,
                                    tuple(cfg.metrics), cfg.threads, str(config))
    return units


def units_wall(executor, units: list) -> tuple[float, float]:
    """(wall time of ``units`` on ``executor``, mean wall time of one unit), after a warm
    round of one unit per CPU."""
    list(executor.run(units[: executor.cpus()]))
    start = time.perf_counter()
    outcomes = list(executor.run(units))
    return time.perf_counter() - start, statistics.mean(o.wall_s for o in outcomes)


def noop_overhead(executor, n: int) -> float:
    """Seconds per no-op unit (``abs``) on ``executor``, after one warm round."""
    from neuromark.executors import Unit

    units = [Unit(f"noop {i}", "<bench>", abs, (-i,)) for i in range(n)]
    list(executor.run(units[: min(n, 20)]))
    start = time.perf_counter()
    list(executor.run(units))
    return (time.perf_counter() - start) / n


def qubo_entry_overhead(results: list, wall_s: float) -> tuple[float, float]:
    """Seconds per entry beyond its timeout: inside the timed solve (overrun) and in all
    (the run's wall time less its timeouts, per entry: loading, checks, bookkeeping)."""
    entries = [e for r in results for e in r.details["entries"]]
    solve = statistics.mean(e["wall_s"] - e["timeout_s"] for e in entries)
    return solve, (wall_s - sum(e["timeout_s"] for e in entries)) / len(entries)


def estimate(config: Path, per_entry_s: float, cpus: int) -> dict:
    """Local wall time of a QUBO config from its plan: the timeouts it waits for (TTS at
    its cap as the upper bound, 10 % of it as the lower), plus ``per_entry_s`` per entry."""
    from neuromark.benchmarks.qubo.task import TASK, plan
    from neuromark.config import load_config
    from neuromark.context import RunContext

    task_plan = TASK.plan(load_config(config), RunContext.build())
    specs = plan(task_plan.settings, task_plan.parts["table"])
    fixed = sum(s["timeout_s"] for s in specs if s["scenario"] == "fixed_timeout")
    tts = sum(s["cap_s"] for s in specs if s["scenario"] == "time_to_solution")
    low = fixed + 0.1 * tts + per_entry_s * len(specs)
    high = fixed + tts + per_entry_s * len(specs)
    return {"config": str(config), "entries": len(specs), "fixed_timeout_s": fixed,
            "tts_cap_s": tts, "local_low_s": low, "local_high_s": high,
            f"ray_{cpus}cpu_low_s": low / cpus, f"ray_{cpus}cpu_high_s": high / cpus}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sweeps (a smoke run)")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--mg-length", type=int, default=45,
                        help="Lyapunov times per Mackey-Glass instance (45: the longest "
                             "the 50-L series allows for 6 instances)")
    parser.add_argument("--mg-units-reservoir", type=int, default=600,
                        help="ESN reservoir of the units-only Mackey-Glass measurement (units >= 1 s)")
    parser.add_argument("--noop", type=int, default=300, help="no-op units for the overhead")
    parser.add_argument("--estimate", type=Path, default=ROOT / "configs/qubo/mis_medium.yaml")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()

    from neuromark.executors import LocalExecutor, Unit
    from neuromark.executors.ray_executor import RayExecutor

    tmp = Path(tempfile.mkdtemp(prefix="ray-bench-cfg-"))
    qubo, mg = tmp / "qubo.yaml", tmp / "mg.yaml"
    qubo.write_text(QUBO.format(sizes="100, 250" if not args.quick else "100",
                                timeout=1.0 if not args.quick else 0.5))
    mg.write_text(MG.format(taus="17, 18" if not args.quick else "17",
                            instances=6 if not args.quick else 4, length=args.mg_length))
    # the same instances with a larger reservoir, as units only: single-threaded units of >= 1 s
    mg_units_cfg = tmp / "mg_units.yaml"
    mg_units_cfg.write_text(MG.format(taus="17, 18" if not args.quick else "17",
                                      instances=6 if not args.quick else 4, length=args.mg_length)
                            .replace("reservoir_size: 186", f"reservoir_size: {args.mg_units_reservoir}"))
    figures: dict = {"load_before": load(), "cpus": args.cpus}
    print(f"load average before: {figures['load_before']}", flush=True)

    local = LocalExecutor()
    figures["local_warmup_s"] = warm(local, tmp)
    for name, config in (("qubo", qubo), ("mackey_glass", mg)):
        wall, results = timed_run(config, local)
        figures[f"{name}_local_s"] = wall
        if name == "qubo":
            figures["qubo_entries"] = sum(len(r.details["entries"]) for r in results)
            solve, total = qubo_entry_overhead(results, wall)
            figures["qubo_entry_overrun_s"], figures["qubo_entry_overhead_s"] = solve, total
        else:
            figures["mackey_glass_units"] = len(results[0].details["entries"]) * len(
                results[0].details["entries"][0]["per_instance_sMAPE"])
            figures["mackey_glass_scores"] = dict(results[0])
        print(f"{name}: local {wall:.2f} s", flush=True)
    figures["noop_local_ms"] = 1e3 * noop_overhead(local, args.noop)
    units = mg_units(mg_units_cfg)
    figures["mg_units"] = len(units)
    figures["mg_units_local_s"], figures["mg_unit_s"] = units_wall(local, units)

    start = time.perf_counter()
    ray_ex = RayExecutor(num_cpus=args.cpus)
    figures["ray_init_s"] = time.perf_counter() - start
    try:
        start = time.perf_counter()
        pids = {o.value for o in ray_ex.run([Unit(f"warm {i}", "<bench>", warm_up)
                                             for i in range(args.cpus)])}
        figures["ray_workers_warmed"] = len(pids)
        figures["ray_warmup_s"] = time.perf_counter() - start + warm(ray_ex, tmp)
        for name, config in (("qubo", qubo), ("mackey_glass", mg)):
            wall, results = timed_run(config, ray_ex)
            figures[f"{name}_ray_s"] = wall
            figures[f"{name}_speedup"] = figures[f"{name}_local_s"] / wall
            if name == "mackey_glass":
                figures["mackey_glass_identical"] = dict(results[0]) == figures[
                    "mackey_glass_scores"]
            print(f"{name}: ray {wall:.2f} s, speed-up {figures[f'{name}_speedup']:.2f}x",
                  flush=True)
        figures["noop_ray_ms"] = 1e3 * noop_overhead(ray_ex, args.noop)
        figures["mg_units_ray_s"] = units_wall(ray_ex, units)[0]
        figures["mg_units_speedup"] = figures["mg_units_local_s"] / figures["mg_units_ray_s"]
    finally:
        ray_ex.close()
    figures["noop_overhead_ms"] = figures["noop_ray_ms"] - figures["noop_local_ms"]
    figures["load_after"] = load()
    del figures["mackey_glass_scores"]
    if args.estimate.is_file():
        figures["estimate"] = estimate(args.estimate, figures["qubo_entry_overhead_s"], args.cpus)

    print(f"ray init {figures['ray_init_s']:.2f} s, warm-up {figures['ray_warmup_s']:.2f} s "
          f"({figures['ray_workers_warmed']} workers); local warm-up "
          f"{figures['local_warmup_s']:.2f} s")
    print(f"QUBO per entry beyond its timeout: {figures['qubo_entry_overrun_s'] * 1e3:.1f} ms "
          f"in the solve, {figures['qubo_entry_overhead_s'] * 1e3:.1f} ms in all (local)")
    print(f"no-op unit: local {figures['noop_local_ms']:.3f} ms, ray {figures['noop_ray_ms']:.3f} "
          f"ms, overhead {figures['noop_overhead_ms']:.3f} ms per unit (target <= 20 ms)")
    figures["mackey_glass_unit_s"] = figures["mackey_glass_local_s"] / figures["mackey_glass_units"]
    print(f"Mackey-Glass: {figures['mackey_glass_units']} units of {figures['mackey_glass_unit_s']:.2f} s "
          f"each on average (local); scores identical: {figures['mackey_glass_identical']}")
    print(f"Mackey-Glass units only ({figures['mg_units']} instances, ESN of "
          f"{args.mg_units_reservoir}, {figures['mg_unit_s']:.2f} s per unit): local "
          f"{figures['mg_units_local_s']:.2f} s, ray {figures['mg_units_ray_s']:.2f} s: "
          f"{figures['mg_units_speedup']:.2f}x (target >= 1.6x for units >= 1 s)")
    for name in ("qubo", "mackey_glass"):
        print(f"{name}: local {figures[f'{name}_local_s']:.2f} s, ray {figures[f'{name}_ray_s']:.2f}"
              f" s on {args.cpus} CPUs: {figures[f'{name}_speedup']:.2f}x (target >= 1.6x)")
    print(f"Mackey-Glass scores identical: {figures['mackey_glass_identical']}")
    if "estimate" in figures:
        est = figures["estimate"]
        print(f"estimate {est['config']}: {est['entries']} entries, local "
              f"{est['local_low_s'] / 60:.1f}-{est['local_high_s'] / 60:.1f} min, Ray on "
              f"{args.cpus} CPUs {est[f'ray_{args.cpus}cpu_low_s'] / 60:.1f}-"
              f"{est[f'ray_{args.cpus}cpu_high_s'] / 60:.1f} min (not run)")
    print(f"load average before {figures['load_before']}, after {figures['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))


if __name__ == "__main__":
    main()
