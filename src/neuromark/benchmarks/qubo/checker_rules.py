"""The QUBO rules of ``neuromark check`` (the kernel's :mod:`neuromark.system.checker` calls
:func:`check_qubo_results` for every result whose task is ``qubo``; declared in the family's
``MANIFEST`` under ``checker_rules``).

- ``qubo/seeds``: a generated sweep runs the :data:`QUBO_SEEDS` announced graph seeds (when
  the submission's profile asks for the official seeds);
- ``qubo/timeouts``: every timeout of the fixed-timeout sweep ran for every workload (or
  library instance) and solver seed;
- ``qubo/bks-provenance``: every workload has a BKS row with its provenance (method, solver,
  date), in the shipped table or in the ``bks:`` table the submission carries;
- ``qubo/over-deadline``: the results state each scenario's share of solves over their
  deadline (:func:`~neuromark.benchmarks.qubo.deadline.over_deadline`), and it matches their
  entries.

``audit`` is the checker's collector of findings: ``audit.add(file, rule, message)``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from neuromark.benchmarks.qubo.bks import load_bks
from neuromark.benchmarks.qubo.deadline import over_deadline
from neuromark.errors import DataError
from neuromark.results import effective_config
from neuromark.system.checker_input import confined, numbers, schema

#: The number of announced evaluation seeds (graph seeds) a submission runs.
QUBO_SEEDS = 5


def check_qubo_results(audit: Any, file: Path, data: dict, official_seeds: bool = True) -> None:
    """QUBO sweep rules for the results ``data`` of ``file``; ``official_seeds`` (the
    submission profile's): the announced graph seeds."""
    config = effective_config(data)
    # A sweep over library instances (``instances:``) has no generated graphs: no graph
    # seeds, and its targets are the instances' optima, not BKS table rows.
    library = config.get("instances") is not None
    seeds = (config.get("workloads") or {}).get("seeds", [])
    if official_seeds and not library and len(set(seeds)) != QUBO_SEEDS:
        audit.add(file, "qubo/seeds", f"{len(set(seeds))} graph seeds {seeds}; a submission runs "
                  f"the {QUBO_SEEDS} announced seeds")
    entries = data["details"].get("entries", [])
    check_over_deadline(audit, file, data)
    timeouts = (config.get("fixed_timeout") or {}).get("timeouts", [])
    w = config.get("workloads") or {}
    if not all([numbers(audit, file, "fixed_timeout.timeouts", timeouts),
                *(numbers(audit, file, f"workloads.{k}", w.get(k, [])) for k in ("sizes", "densities"))]):
        return
    done = {(e.get("n"), e.get("density"), e.get("graph_seed"), e.get("seed"), e.get("timeout_s"))
            for e in entries if e.get("scenario") == "fixed_timeout"}
    names = sorted({e["instance"] for e in entries if isinstance(e.get("instance"), str)})
    have = {(e.get("instance"), e.get("seed"), e.get("timeout_s")) for e in entries
            if e.get("scenario") == "fixed_timeout"}
    for t in timeouts if library else []:
        lost = [(i, s) for i in names for s in config.get("seeds", [0]) if (i, s, t) not in have]
        if lost:
            audit.add(file, "qubo/timeouts", f"timeout {t:g} s of the sweep is missing for "
                      f"{len(lost)} instance run(s), e.g. instance {lost[0][0]}, solver seed "
                      f"{lost[0][1]}")
    for t in timeouts:
        missing = [(n, d, g, s) for n in w.get("sizes", []) for d in w.get("densities", [])
                   for g in seeds for s in config.get("seeds", [0]) if (n, d, g, s, t) not in done]
        if missing:
            n, d, g, s = missing[0]
            audit.add(file, "qubo/timeouts", f"timeout {t:g} s of the sweep is missing for "
                      f"{len(missing)} workload(s), e.g. n={n}, density={d:g}, graph seed {g}, "
                      f"solver seed {s}")
    bks_path = None
    if config.get("bks") is not None:  # a table travels with the submission: relative, inside
        if not schema(audit, file, "config.bks", config["bks"], str):
            return
        bks_path = confined(audit, file.parent, config["bks"], "layout/outside", "bks table")
        if bks_path is None:
            return
    try:
        table = load_bks(bks_path)
    except DataError as exc:
        audit.add(file, "qubo/bks-provenance", str(exc))
        return
    for n in w.get("sizes", []):
        for d in w.get("densities", []):
            for g in seeds:
                key = (int(n), float(d), int(g))
                row = table.rows.get(key)
                if row is None:
                    audit.add(file, "qubo/bks-provenance", f"no BKS row for n={n}, density={d:g}, "
                              f"seed {g} in {table.path}")
                elif not (row.method and row.solver and row.date):
                    audit.add(file, "qubo/bks-provenance", f"BKS row n={n}, density={d:g}, seed {g} "
                              f"has no provenance (method, solver, date) in {table.path}")


def check_over_deadline(audit: Any, file: Path, data: dict) -> None:
    """``details.over_deadline`` is there and matches the entries."""
    entries = data["details"].get("entries", [])
    want = over_deadline(entries)
    have = data["details"].get("over_deadline")
    if want and not isinstance(have, dict):
        audit.add(file, "qubo/over-deadline", "no share of solves over their deadline "
                  "(details.over_deadline); rerun with this neuromark")
        return
    for scenario, d in want.items():
        got = (have or {}).get(scenario, {}).get("fraction")
        if got is None or not math.isclose(got, d["fraction"], abs_tol=1e-12):
            audit.add(file, "qubo/over-deadline", f"{scenario}: over_deadline fraction {got} but "
                      f"the entries give {d['over']}/{d['solves']} = {d['fraction']:g}")
