"""``task: qubo``: QUBO maximum-independent-set sweeps of workloads x seeds x scenarios x
solvers, resumable (NeuroBench system track; the mechanisms live in
:mod:`neuromark.benchmarks.qubo`, the config in :mod:`neuromark.benchmarks.qubo.config`).

Finished entries are appended to ``<out>/entries.jsonl`` (flush + fsync; ``<out>`` is the
task's folder, ``<run out>/<config stem>`` under ``neuromark run``); running the same config
into the same output folder again skips them, so an interrupted sweep resumes where it
stopped. An entry's key holds its full spec, the resolved solver spec (name, options,
label) included, so an entry is reused only for the very solver that produced it; the store
records the resolved config's digest, and every reused entry is validated
(:func:`~neuromark.benchmarks.qubo.store.check_entry`: fields, cost against gap and BKS) before
any solving. ``jobs: N`` runs entries in N processes (timings then share the CPU; the
results carry a flag). One :class:`~neuromark.results.Results` per solver, with the id
``<benchmark.id>-<solver label or name>``.

Solvers and the meter are registry entries (:data:`neuromark.registry.solvers`,
:data:`neuromark.registry.meters`) built with the config's ``options`` at validate time, so
an unknown name or an option the constructor does not take is reported with ``file:line``
before anything runs.

With a ``meter``, each solve's window is marked while it runs and its power figures are
computed once the meter has stopped; the entries file is then rewritten with them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from neuromark._progress import progress
from neuromark.benchmarks.qubo import scenarios
from neuromark.benchmarks.qubo.bks import check_row
from neuromark.benchmarks.qubo.bks_auto import fill_missing, sweep_table
from neuromark.benchmarks.qubo.config import DEFAULT_BKS_BUDGET_S, PARENT, QuboConfig, SolverSpec
from neuromark.benchmarks.qubo.deadline import over_deadline
from neuromark.benchmarks.qubo.instance_sets import LibraryTarget, library_targets, library_workload
from neuromark.benchmarks.qubo.plots import plot_qubo_sweep
from neuromark.benchmarks.qubo.scenarios import NOT_MEASURED, NOT_REACHED, add_power
from neuromark.benchmarks.qubo.store import EntryStore, check_entry
from neuromark.benchmarks.qubo.workloads import mis_workload
from neuromark.components import build_component, parameters
from neuromark.config import ConfigFile
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.executors import LocalExecutor, Unit, is_local
from neuromark.identity import config_digest, id_problem, model_identity
from neuromark.metrics.functional.stats import standard_error
from neuromark.registry import solvers as solver_registry
from neuromark.results import Results, Score
from neuromark.system.power.spec import make_meter
from neuromark.tasks.base import TaskBase, TaskPlan, out_dir_of, task_results

CITATION = ("@article{yik2025neurobench, title={The neurobench framework for benchmarking "
            "neuromorphic computing algorithms and systems}, author={Yik, Jason and others}, "
            "journal={Nature Communications}, volume={16}, pages={1545}, year={2025}}")


def make_solver(spec: SolverSpec, config: ConfigFile | None = None,
                loc: Sequence[str | int] = ("solvers",)) -> Any:
    """Instantiate a registered solver (a class or factory) with the spec's options; an
    unknown name or options its signature does not take raise :class:`ConfigError` naming
    ``file:line`` of ``config`` at ``loc``."""
    return build_component(solver_registry, spec, config, loc)


def _bases(cfg: QuboConfig, table: Any, instances: list[LibraryTarget] | None
           ) -> list[dict[str, Any]]:
    """The (workload or instance) x solver x seed part of every gap-scenario entry."""
    bases = []
    if instances is not None:  # library instances: one graph each (graph seed 0)
        for inst in instances:
            for solver in cfg.solvers:
                for s in cfg.seeds:
                    bases.append({"solver": solver.tag, "instance": inst.name,
                                  "instance_file": str(inst.path), "n": inst.n,
                                  "density": inst.density, "graph_seed": 0, "seed": s,
                                  "bks": inst.energy})
        return bases
    w = cfg.workloads
    assert w is not None
    for n in w.sizes:
        for d in w.densities:
            for g in w.seeds:
                for solver in cfg.solvers:
                    for s in cfg.seeds:
                        base = {"solver": solver.tag, "n": n, "density": d, "graph_seed": g,
                                "seed": s}
                        if table is not None:
                            base["bks"] = table.target(n, d, g)
                        bases.append(base)
    return bases


def plan(cfg: QuboConfig, table: Any = None, instances: list[LibraryTarget] | None = None
         ) -> list[dict[str, Any]]:
    """Every entry of the sweep as a spec dict with a unique ``key``.

    With a BKS ``table`` the target cost is part of each entry (and of its key), so results
    resumed after the table improved are recomputed against the new target. With library
    ``instances`` (:func:`library_targets`) their optima are the targets.
    """
    specs = []
    for base in _bases(cfg, table, instances):
        if cfg.fixed_timeout:
            for t in cfg.fixed_timeout.timeouts:
                specs.append({**base, "scenario": "fixed_timeout", "timeout_s": t})
        if cfg.time_to_solution:
            specs.append({**base, "scenario": "time_to_solution",
                          "gaps": cfg.time_to_solution.gaps,
                          "cap_s": cfg.time_to_solution.cap_s})
    for solver in cfg.solvers:
        if cfg.max_size:
            for d in cfg.max_size.densities:
                specs.append({"solver": solver.tag, "scenario": "max_size", "density": d,
                              "sizes": cfg.max_size.sizes, "timeout_s": cfg.max_size.timeout_s,
                              "seed": cfg.seeds[0]})
    full = {s.tag: s.model_dump_json() for s in cfg.solvers}
    for spec in specs:
        spec["key"] = ("|".join(f"{k}={spec[k]}" for k in sorted(spec))
                       + f"|solver_spec={full[spec['solver']]}")
    return specs


@lru_cache(maxsize=2)
def _workload(n: int, density: float, seed: int) -> Any:
    return mis_workload(n, density, seed)


_SOLVERS: dict[str, Any] = {}


def run_entry(spec: dict[str, Any], solver_spec: SolverSpec, bks: float | None,
              meter: Any = None) -> dict[str, Any]:
    """Run one planned entry; returns the spec plus its measurements. With a ``meter`` the
    solve is bracketed by meter marks and its power figures are left for
    :func:`~neuromark.benchmarks.qubo.scenarios.add_power` after the meter stops."""

    if spec["scenario"] == "max_size":
        out = scenarios.max_supported_size(lambda: make_solver(solver_spec), spec["sizes"],
                                           spec["density"], spec["timeout_s"], spec["seed"])
        return {**spec, **out}
    # Same tag with other options, or a re-registered name: another solver instance.
    cache_key = f"{id(solver_registry.get(solver_spec.name))}:{solver_spec.model_dump_json()}"
    solver = _SOLVERS.get(cache_key)
    if solver is None:
        solver = _SOLVERS[cache_key] = make_solver(solver_spec)
    w = (library_workload(spec["instance_file"]) if "instance" in spec else
         _workload(spec["n"], spec["density"], spec["graph_seed"]))
    if spec["scenario"] == "fixed_timeout":
        out = scenarios.fixed_timeout(solver, w, spec["timeout_s"], spec["seed"], bks, meter,
                                      defer_power=True)
    else:
        out = scenarios.time_to_solution(solver, w, spec["gaps"], spec["cap_s"], spec["seed"],
                                         bks, meter, defer_power=True)
    return {**spec, **out}


def reserved_cpus(spec: SolverSpec, executor: Any) -> tuple[int, SolverSpec]:
    """Whole CPUs one entry of ``spec`` reserves, and the spec to build its solver with.

    Under the local serial executor nothing changes (``workers: auto`` sees this machine).
    Elsewhere a solver taking ``workers`` reserves that many CPUs (``auto``: 1, built with
    ``workers: 1``), so that its threads never exceed its reservation; other solvers are
    single-threaded (1 CPU). The entry's key keeps the config's spec, so a sweep resumes
    across executors.
    """
    if "workers" not in parameters(solver_registry.get(spec.name)):
        return 1, spec
    workers = spec.options.get("workers", "auto")
    if is_local(executor) and getattr(executor, "processes", 1) == 1:  # what auto may use
        return (workers if isinstance(workers, int) else executor.cpus()), spec
    n = workers if isinstance(workers, int) else 1
    return n, spec.model_copy(update={"options": {**spec.options, "workers": n}})


def entry_where(e: dict[str, Any]) -> str:
    """An entry's workload in words: ``instance C125-9`` or ``n=100, d=0.05, graph seed 0``."""
    if "instance" in e:
        return f"instance {e['instance']}"
    return f"n={e['n']}, d={e['density']:g}, graph seed {e['graph_seed']}"


def entry_unit(spec: dict[str, Any], solver_spec: SolverSpec, bks: float | None,
               config: ConfigFile, executor: Any, meter: Any = None) -> Unit:
    """One sweep entry as an executor unit (the meter only with the local serial one)."""
    cpus, built = reserved_cpus(solver_spec, executor)
    what = (f"{spec['solver']} {spec['scenario']} d={spec['density']:g}" if "n" not in spec else
            f"{spec['solver']} {entry_where(spec)} seed {spec['seed']} {spec['scenario']}"
            + (f" {spec['timeout_s']:g} s" if "timeout_s" in spec else ""))
    args = (spec, built, bks) if meter is None else (spec, built, bks, meter)
    return Unit(what, str(config.path or "<config>"), run_entry, args, num_cpus=cpus)


def sweep_executor(cfg: QuboConfig, ctx: RunContext) -> Any:
    """The run's executor; with the local one and ``jobs: N > 1``, a pool of N processes
    (``jobs`` and ``--executor`` do not combine: Ray replaces ``jobs``)."""
    executor = ctx.executor
    if is_local(executor) and cfg.jobs > 1:
        return LocalExecutor(processes=cfg.jobs)
    return executor


class QuboTask(TaskBase):
    """The ``qubo`` task (see module docstring)."""

    name = "qubo"
    track = "system"  # NeuroBench's QUBO is a system-track benchmark: no model execution rate
    #: Its sweep entries are units of the run's executor; the task itself runs on the driver.
    placement = "units"

    settings_model = QuboConfig

    def check(self, cfg: QuboConfig, config: ConfigFile, ctx: RunContext) -> dict[str, Any]:
        """The plan's parts: its BKS ``table``, the workloads ``missing`` from it (only with
        ``bks: auto``), its ``meter`` (None without one) and its library ``instances`` (None:
        generated workloads), each built once."""
        if not (cfg.fixed_timeout or cfg.time_to_solution or cfg.max_size):
            raise ConfigError(f"{config.where(())}: no scenario; add fixed_timeout, "
                              f"time_to_solution or max_size")
        for i, spec in enumerate(cfg.solvers):  # solvers are light; prepare(Q) loads them
            make_solver(spec, config, ("solvers", i))
        tags = [s.tag for s in cfg.solvers]
        for i, spec in enumerate(cfg.solvers):  # each solver's results id is a file name
            problem = id_problem(f"{cfg.benchmark.id}-{spec.tag}")
            if problem:
                key = "label" if spec.label else "name"
                raise ConfigError(f"{config.where(('solvers', i, key))}: solvers[{i}].{key}: "
                                  f"results id {problem}")
        if len(set(tags)) != len(tags):
            raise ConfigError(f"{config.where(('solvers',))}: solvers: duplicate names {tags}; "
                              f"give each a distinct 'label'")
        if cfg.meter is not None and cfg.jobs > 1:
            raise ConfigError(f"{config.where(('jobs',))}: jobs: power is measured for one "
                              f"process at a time; use jobs: 1 with a meter")
        if cfg.meter is not None and not is_local(ctx.executor):
            raise ConfigError(f"{config.where(('meter',))}: meter: power is measured for one "
                              f"process at a time on this machine; run this config with the "
                              f"local executor (no --executor {ctx.executor.name})")
        meter = make_meter(cfg.meter, config, ("meter",)) if cfg.meter is not None else None
        table, missing = sweep_table(cfg, config, ctx.cache_dir)
        return {"table": table, "missing": missing, "meter": meter,
                "instances": self._instances(cfg, config)}

    def _instances(self, cfg: QuboConfig, config: ConfigFile) -> list[LibraryTarget] | None:
        """The config's library instances with their optima (None: generated workloads)."""
        if cfg.instances is None:
            return None
        base = config.path.parent if config.path is not None else Path.cwd()
        return library_targets(cfg.instances.files, cfg.instances.folder, base, config.where)

    def execute(self, task_plan: TaskPlan, ctx: RunContext) -> list[Results]:
        config, cfg = task_plan.config, task_plan.settings
        table, meter = task_plan.parts["table"], task_plan.parts["meter"]
        out_dir = out_dir_of(ctx)
        store_path = ctx.artefact("entries.jsonl")  # the output folder made
        computed = _fill_bks(cfg, config, table, task_plan.parts.get("missing", []), ctx.quiet)
        store = EntryStore(store_path, config_digest(cfg.model_dump()))
        instances = task_plan.parts.get("instances")
        specs = plan(cfg, None if instances is not None else table, instances)
        for spec in specs:  # every reused entry is checked before any solving
            if spec["key"] in store:
                where = f"{store.path}:{store.lines.get(spec['key'], '?')}"
                check_entry(store.entries[spec["key"]],
                            {k: v for k, v in spec.items() if k != "key"}, where)
        by_tag = {s.tag: s for s in cfg.solvers}
        checked: dict[tuple[int, float, int], float] = {}

        def target(spec: dict[str, Any]) -> float | None:
            if spec["scenario"] == "max_size":
                return None
            if "instance" in spec:  # its optimum, checked when the config was read
                return float(spec["bks"])
            key = (spec["n"], float(spec["density"]), spec["graph_seed"])
            if key not in checked:
                row = table.get(*key)
                check_row(row, _workload(*key), str(table.path))
                checked[key] = row.cost
            return checked[key]

        todo = [s for s in specs if s["key"] not in store]
        executor = sweep_executor(cfg, ctx)
        bar = progress(total=len(specs), initial=len(specs) - len(todo), quiet=ctx.quiet,
                       desc=f"qubo {cfg.benchmark.id}", unit="entry")
        measured: list[dict[str, Any]] = []  # entries of this run with a meter window
        try:
            if meter is not None:
                meter.start()
            units = [entry_unit(s, by_tag[s["solver"]], target(s), config, executor,
                                meter) for s in todo]
            with contextlib.closing(executor.run(units)) as outcomes:
                for outcome in outcomes:
                    entry = {**outcome.value, "node": outcome.node,
                             "num_cpus": outcome.unit.num_cpus, "executor": executor.name}
                    store.append(entry)
                    if meter is not None and entry["scenario"] != "max_size":
                        measured.append(entry)
                    bar.update()
        finally:
            bar.close()
            if executor is not ctx.executor:
                executor.close()
            if meter is not None:
                meter.stop()
                # Power after the meter stopped (as the system task does): a trace may only
                # cover the whole run now. The store is rewritten with the figures.
                if measured:
                    for entry in measured:
                        add_power(entry, meter)
                    store.rewrite()
        entries = [store.entries[s["key"]] for s in specs]

        plots = plot_qubo_sweep(entries, out_dir) if cfg.plots else []
        out = [summarise(cfg, tag, [e for e in entries if e["solver"] == tag], plots,
                         meter_reason(cfg)) for tag in by_tag]
        for res in out:  # rows bks: auto computed for this run, with their provenance
            res.details["bks_computed"] = computed
            res.details["primary_metric"] = next(  # the leaderboard's headline
                (n for n in res.scores if n.startswith(("bks_gap@", "tts_gap"))), None)
        return out


def _fill_bks(cfg: QuboConfig, config: ConfigFile, table: Any, missing: list[Any],
              quiet: bool) -> list[dict[str, Any]]:
    """``bks: auto``: compute the ``missing`` rows into the user's table before any solving
    (see :mod:`neuromark.benchmarks.qubo.bks_auto`); returns them as dicts (no solution)."""
    if not missing:
        return []
    budget = cfg.bks_budget_s or DEFAULT_BKS_BUDGET_S
    if not quiet:
        print(f"{cfg.benchmark.id}: computing {len(missing)} missing best-known solution(s) "
              f"within {budget:g} s into {table.path}", flush=True)
    rows = fill_missing(table, missing, budget, where=config.where(("bks_budget_s",))
                        if "bks_budget_s" in config.data else config.where(("bks",)))
    return [{k: v for k, v in dataclasses.asdict(r).items() if k != "solution_hex"} for r in rows]


def meter_reason(cfg: QuboConfig) -> str:
    return "" if cfg.meter else "no power meter configured (set 'meter' in the config)"


def _group(e: dict[str, Any]) -> str:
    """The per-workload score group: the instance name, or ``n=<n>,d=<density>``."""
    return e["instance"] if "instance" in e else f"n={e['n']},d={e['density']:g}"


def summarise(cfg: QuboConfig, tag: str, entries: list[dict[str, Any]], plots: list[str],
              no_meter_reason: str) -> Results:
    """Scores of one solver: gaps per timeout (and per size), TTS, overruns, max size, power."""

    scores: dict[str, Score] = {}
    flags: list[str] = []
    fixed = [e for e in entries if e["scenario"] == "fixed_timeout"]
    for t in sorted({e["timeout_s"] for e in fixed}):
        at = [e for e in fixed if e["timeout_s"] == t]
        gaps = [e["gap"] for e in at]
        scores[f"bks_gap@{t:g}s"] = Score(float(np.mean(gaps)), standard_error(gaps), "", False)
        for group in sorted({_group(e) for e in at}):
            sub = [e["gap"] for e in at if _group(e) == group]
            scores[f"bks_gap[{group}]@{t:g}s"] = Score(float(np.mean(sub)), standard_error(sub),
                                                       "", False)
        scores[f"independent@{t:g}s"] = Score(float(np.mean([e["independent"] for e in at])),
                                              None, "fraction", True)
        scores[f"wall_s@{t:g}s"] = Score(float(np.mean([e["wall_s"] for e in at])),
                                         standard_error([e["wall_s"] for e in at]), "s", None)
        power = [e["power_w"] for e in at]
        scores[f"avg_power_w@{t:g}s"] = (
            Score(float(np.mean(power)), standard_error(power), "W", False)
            if all(isinstance(p, float) for p in power) else
            Score(NOT_MEASURED, None, "W", False))
    if fixed:
        over = [e["overrun_s"] for e in fixed]
        scores["max_overrun_s"] = Score(float(max(over)), None, "s", False)
        late = [e for e in fixed if not e["within_limit"]]
        scores["within_time_limit"] = Score(1.0 - len(late) / len(fixed), None, "fraction", True)
        for e in late:
            flags.append(f"{tag} overran timeout {e['timeout_s']:g} s by {e['overrun_s']:.4f} s "
                         f"(limit max(5%, 2 ms)) on {entry_where(e)}")
    tts = [e for e in entries if e["scenario"] == "time_to_solution"]
    if tts:
        for g in tts[0]["latency_s"]:
            lats = [e["latency_s"][g] for e in tts]
            vals = [math.inf if isinstance(v, str) else v for v in lats]
            med = float(np.median(vals))
            reached = sum(not isinstance(v, str) for v in lats)
            scores[f"tts_gap{g}_median_s"] = Score(NOT_REACHED if math.isinf(med) else med,
                                                   None, "s", False)
            scores[f"tts_gap{g}_reached"] = Score(reached / len(lats), None, "fraction", True)
            energies = [e["energy_j_to_gap"][g] for e in tts]
            if any(v == NOT_MEASURED for v in energies):
                scores[f"tts_gap{g}_median_energy_j"] = Score(NOT_MEASURED, None, "J", False)
            else:
                joules = [math.inf if isinstance(v, str) else v for v in energies]
                med_j = float(np.median(joules))
                scores[f"tts_gap{g}_median_energy_j"] = Score(
                    NOT_REACHED if math.isinf(med_j) else med_j, None, "J", False)
    for e in entries:
        if e["scenario"] == "max_size":
            scores[f"max_size@d={e['density']:g}"] = Score(
                e["largest"] if e["largest"] is not None else "none loaded", None, "nodes", True)
        elif e.get("gap", 0) < 0:
            flags.append(f"{tag} beat the BKS on {entry_where(e)}: cost {e['cost']:g} < {e['bks']:g}")
        if e.get("independent") is False and e["scenario"] == "fixed_timeout":
            flags.append(f"{tag}: best solution is not an independent set on {entry_where(e)}, "
                         f"timeout {e['timeout_s']:g} s")
    deadlines = over_deadline(entries)  # real-time misses per scenario (past the allowance)
    for scen, d in deadlines.items():
        scores[f"over_deadline_fraction@{scen}"] = Score(d["fraction"], None, "fraction", False)
    if no_meter_reason:
        flags.append(f"power: not measured ({no_meter_reason})")
    else:
        reasons = sorted({e["power_reason"] for e in entries
                          if e.get("power_w") == NOT_MEASURED and e.get("power_reason")})
        flags += [f"power: not measured ({r})" for r in reasons]
    runs = {e.get("executor", "local") for e in entries if e["scenario"] != "max_size"}
    if cfg.jobs > 1 and "local" in runs:
        flags.append(f"entries ran in {cfg.jobs} parallel processes: timings share the CPU")
    if cfg.jobs > 1 and runs - {"local"}:
        flags.append(f"jobs: {cfg.jobs} unused by the {'/'.join(sorted(runs - {'local'}))} "
                     f"executor (it replaces jobs: each entry reserves whole CPUs)")
    rows = [{k: v for k, v in e.items() if k not in ("trace", "key")} for e in entries]
    info = cfg.benchmark.info(CITATION)  # one benchmark; each solver is its model (label: tag)
    spec = next(s for s in cfg.solvers if s.tag == tag)
    return task_results(scores, benchmark=dataclasses.replace(info, parent=info.parent or PARENT),
                        model=model_identity(spec.name, spec.options, None, tag),
                        effective=cfg.model_dump(), device=None,  # no torch device: solvers
                        seeds={"solver": cfg.seeds,
                               "graph": cfg.workloads.seeds if cfg.workloads else [0]},
                        details={"entries": rows, "plots": plots, "flags": flags,
                                 "over_deadline": deadlines})


TASK = QuboTask()
