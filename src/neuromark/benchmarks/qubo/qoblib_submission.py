"""QOBLIB's submission CSV for a ``neuromark qubo solve`` result.

The columns are those of QOBLIB's ``misc/submission_template.csv`` (ZIB-AOPT/QOBLIB, commit
a6b69e4); their meaning is the one its ``CONTRIBUTING.md`` gives:

- **Best Objective Value**: the best objective found over all runs, in the library's sense
  (an MIS instance: the size ``|S|`` of the best independent set; another ``.qs`` QUBO: the
  minimised energy ``x^T Q x + offset``; an MQLib QUBO: its maximised ``x^T W x``);
- **# Feasible Runs**: runs whose best solution is feasible (an independent set; every run
  of an unconstrained QUBO);
- **# Successful Runs**: feasible runs whose objective is within ``(1 + eps)`` of the
  algorithm's own best ``f`` (``<= (1 + eps) f`` minimising, ``>= (1 - eps) f``
  maximising), ``eps`` the **Success Threshold**, not the library's best-known value;
- runtimes: the average over the runs, in seconds (the timed solve call; CPU solvers only:
  GPU, QPU and other hardware runtimes are ``N/A``).
"""

from __future__ import annotations

import csv
import io
import math
import os
import platform
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from neuromark.benchmarks.qubo.library import Instance
from neuromark.io_atomic import write_text_atomic

#: The columns of QOBLIB's misc/submission_template.csv, in order.
COLUMNS = ("Problem", "Submitter", "Date", "Reference", "Best Objective Value",
           "Optimality Bound", "Modeling Approach", "# Decision Variables",
           "# Binary Variables", "# Integer Variables", "# Continuous Variables",
           "# Non-Zero Coefficients", "Coefficients Type", "Coefficients Range", "Workflow",
           "Algorithm Type", "# Runs", "# Feasible Runs", "# Successful Runs",
           "Success Threshold", "Hardware Specifications", "Total Runtime", "CPU Runtime",
           "GPU Runtime", "QPU Runtime", "Other HW Runtime", "Remarks")


def objective(instance: Instance, run: dict[str, Any]) -> float:
    """A run's objective in the library's sense (see the module docstring)."""
    if instance.is_mis:
        return float(run["size"])
    return -float(run["energy"]) if instance.maximise else float(run["energy"])


def successful_runs(instance: Instance, runs: list[dict[str, Any]], eps: float) -> int:
    """Feasible runs within ``(1 + eps)`` of the algorithm's own best (QOBLIB's definition)."""
    feasible = [objective(instance, r) for r in runs if r.get("feasible", True)]
    if not feasible:
        return 0
    if instance.maximise:
        best = max(feasible)
        bound = (1 - eps) * best if best >= 0 else (1 + eps) * best
        return sum(f >= bound - 1e-9 for f in feasible)
    best = min(feasible)
    bound = (1 + eps) * best if best >= 0 else (1 - eps) * best
    return sum(f <= bound + 1e-9 for f in feasible)


def _coefficients(Q: sp.csr_matrix) -> tuple[int, str, str]:
    upper = sp.triu(Q, k=0).tocsr()
    data = upper.data[upper.data != 0]
    kind = "Integer" if np.all(np.equal(np.round(data), data)) else "Continuous"
    lo, hi = (float(data.min()), float(data.max())) if data.size else (0.0, 0.0)
    return int(data.size), kind, f"{{{lo:g}; {hi:g}}}"


def submission_row(result: dict[str, Any], instance: Instance, *, solver: str,
                   submitter: str, eps: float = 0.0, reference: str = "",
                   when: date | None = None) -> dict[str, str]:
    """One CSV row (``COLUMNS`` -> text) for a :func:`~.repeat.solve_runs` result."""
    runs = result["runs"]
    feasible = [r for r in runs if r.get("feasible", True)]
    values = [objective(instance, r) for r in feasible]
    best = (max(values) if instance.maximise else min(values)) if values else math.nan
    nnz, kind, span = _coefficients(instance.Q)
    mean_wall = float(np.mean([r["wall_s"] for r in runs]))
    seeds = [r["seed"] for r in runs]
    model = ("Penalty QUBO " + instance.energy if instance.is_mis else
             "QUBO " + instance.energy)
    return {
        "Problem": instance.name, "Submitter": submitter,
        "Date": (when or date.today()).isoformat(),
        "Reference": reference or "neuromark qubo solve",
        "Best Objective Value": "N/A" if math.isnan(best) else f"{best:g}",
        "Optimality Bound": "N/A", "Modeling Approach": model,
        "# Decision Variables": str(instance.n), "# Binary Variables": str(instance.n),
        "# Integer Variables": "0", "# Continuous Variables": "0",
        "# Non-Zero Coefficients": str(nnz), "Coefficients Type": kind,
        "Coefficients Range": span,
        "Workflow": (f"read {instance.path.name}; {solver}, {len(runs)} runs of "
                     f"{result['timeout_s']:g} s wall-clock, seeds {seeds[0]}..{seeds[-1]}; "
                     f"no pre- or post-processing"),
        "Algorithm Type": "Stochastic", "# Runs": str(len(runs)),
        "# Feasible Runs": str(len(feasible)),
        "# Successful Runs": str(successful_runs(instance, runs, eps)),
        "Success Threshold": f"{eps:g}",
        "Hardware Specifications": (f"{platform.processor() or platform.machine()}, "
                                    f"{os.cpu_count()} logical CPUs, {platform.system()}"),
        "Total Runtime": f"{mean_wall:.6g}", "CPU Runtime": f"{mean_wall:.6g}",
        "GPU Runtime": "N/A", "QPU Runtime": "N/A", "Other HW Runtime": "N/A",
        "Remarks": ("runtimes: mean wall seconds of one run (the timed solve call, after "
                    "loading); success: within the threshold of the algorithm's own best"),
    }


def write_submission(path: str | Path, row: dict[str, str]) -> Path:
    """Write the header and ``row`` as QOBLIB's submission CSV (atomically)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerow(row)
    return write_text_atomic(path, buf.getvalue())
