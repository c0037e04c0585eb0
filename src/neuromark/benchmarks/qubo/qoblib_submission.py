"""QOBLIB's submission CSV and folder for a ``neuromark qubo solve`` result.

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
import json
import math
import os
import platform
import re
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from neuromark.benchmarks.qubo.library import Instance
from neuromark.errors import ConfigError
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


# ---- the submission folder (QOBLIB's layout, as its real MIS submissions have it) ----------
#
# ``DIR/<instance>/``: ``README.md`` (the summary as a table), ``<instance>_summary.csv`` (the
# row above), ``solutions/<instance>_solution_<N>.mst`` (one per run, N = 0, 1, ...
# consecutive, ``x#<i> <0|1>`` per variable, 1-based, as in ZIB-AOPT/QOBLIB
# ``07-independentset/submissions/20250115_QAOA_Egger/aves-sparrow-social/``) and
# ``<instance>_objective_time_series.json`` (per run, its history as ``[{"Time", "Incumbent"}]``,
# the optional file of QOBLIB's ``misc/check_submission.py``).

#: README groups: a separator row follows each of these fields (as QOBLIB's READMEs do).
_GROUP_ENDS = ("Date", "Reference", "Optimality Bound", "Coefficients Range", "Success Threshold",
               "Hardware Specifications", "Other HW Runtime")


def _ours(instance_dir: Path, name: str) -> list[Path]:
    """The files of ``instance_dir`` this writer writes (those present)."""
    fixed = [instance_dir / f"{name}_summary.csv", instance_dir / "README.md",
             instance_dir / f"{name}_objective_time_series.json"]
    sols = instance_dir / "solutions"
    pattern = re.compile(rf"^{re.escape(name)}_solution_[0-9]+\.mst$")
    found = [p for p in fixed if p.exists()]
    if sols.is_dir():
        found += sorted(p for p in sols.iterdir() if pattern.match(p.name))
    return found


def check_submission_dir(root: str | Path, name: str, inputs: list[Path],
                         overwrite: bool = False, option: str = "--submission") -> Path:
    """``root/<name>``, the folder :func:`write_submission_dir` will write, checked before any
    work: ``root`` must not be a file nor the input; an existing ``root/<name>`` that holds
    anything is refused unless ``overwrite`` (which replaces only this writer's own files);
    a folder that holds one of ``inputs`` (the instance, the optimum) is refused always."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise ConfigError(f"{option} {root}: exists and is a file; a QOBLIB submission is a "
                          f"folder (DIR/<instance>/...), and this file is left as it is")
    check_folder_path(root, option)
    if root.suffix.lower() == ".csv":
        raise ConfigError(f"{option} {root}: names a folder (QOBLIB's layout: DIR/<instance>/"
                          f"<instance>_summary.csv, solutions/, README.md), not a CSV file")
    target = root / name
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{option} {root}: {target} exists and is a file; it is left as it is")
    for path in inputs:
        resolved = path.resolve()
        if resolved == target.resolve() or target.resolve() in resolved.parents:
            raise ConfigError(f"{option} {root}: the folder {target} holds the input {path}; "
                              f"never written into, even with --overwrite")
    if target.is_dir() and any(target.iterdir()) and not overwrite:
        raise ConfigError(f"{option} {root}: {target} exists and is not empty; pass "
                          f"--overwrite to replace this command's files in it (other files "
                          f"are never touched)")
    return target


def check_folder_path(folder: Path, option: str) -> None:
    """A folder that can be made: its nearest existing ancestor is a folder (not a file)."""
    for parent in [folder, *folder.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"{option} {folder}: {parent} is a file, so no folder can be "
                                  f"made under it; it is left as it is")
            return


def _readme(name: str, row: dict[str, str]) -> str:
    lines = [f"# Submission for {name}", "",
             f"This directory contains the submission for the problem **{name}**.", "",
             "## CSV Summary", "", "| Field | Value |", "|-------|-------|"]
    for column in COLUMNS:
        value = str(row.get(column, "")).replace("|", r"\|").replace("\n", "<br>")
        lines.append(f"| {column} | {value} |")
        if column in _GROUP_ENDS:
            lines.append("|======||")
    return "\n".join(lines) + "\n"


def _mst(x: np.ndarray) -> str:
    return "".join(f"x#{i} {int(v)}\n" for i, v in enumerate(np.asarray(x).tolist(), 1))


def _incumbent(instance: Instance, energy: float) -> float:
    """A history energy as the library's objective (MIS: ``-energy``, which is ``|S|`` at an
    independent set; MQLib: ``-energy``; another ``.qs``: the energy)."""
    return -float(energy) if instance.maximise else float(energy)


def write_submission_dir(root: str | Path, instance: Instance, result: dict[str, Any], *,
                         solver: str, submitter: str = "N/A", eps: float = 0.0,
                         reference: str = "", overwrite: bool = False,
                         when: date | None = None) -> Path:
    """Write ``root/<instance>/`` in QOBLIB's submission layout (see the comment above) for a
    :func:`~.repeat.solve_runs` result made with ``keep_solutions=True`` (its ``run_x``: one
    solution per run); returns the instance's folder. Checks as :func:`check_submission_dir`
    (call that before solving)."""
    if "run_x" not in result:
        raise ValueError("write_submission_dir: the result holds no run_x; call solve_runs with "
                         "keep_solutions=True")
    target = check_submission_dir(root, instance.name, [instance.path], overwrite)
    row = submission_row(result, instance, solver=solver, submitter=submitter, eps=eps,
                         reference=reference, when=when)
    name = instance.name
    for stale in _ours(target, name):  # only this writer's files, and only with overwrite
        stale.unlink()
    (target / "solutions").mkdir(parents=True, exist_ok=True)
    width = max(3, len(str(len(result["run_x"]) - 1)))
    for i, x in enumerate(result["run_x"]):
        write_text_atomic(target / "solutions" / f"{name}_solution_{i:0{width}d}.mst", _mst(x))
    series = [[{"Time": float(t), "Incumbent": _incumbent(instance, e)} for t, e in r["history"]]
              for r in result["runs"]]
    write_text_atomic(target / f"{name}_objective_time_series.json", json.dumps(series) + "\n")
    write_submission(target / f"{name}_summary.csv", row)
    write_text_atomic(target / "README.md", _readme(name, row))
    return target
