"""The small cases neuromark's central tests run for the mackey_glass family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any


def mackey_glass_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """The echo-state network on tau 17, two instances (one per unit)."""
    return {"config": {"task": "mackey_glass", "data": {"taus": [17], "instances": 2},
                       "models": [{"name": "esn", "seed": 0}]},
            "repeat": True,
            # one instance per unit, on the run's executor, each evaluated under its context
            "flags": {"coverage": True, "units": 2, "evaluations": 2}}


def write_series(root: Path) -> None:
    """The shipped tau-17 series and the Lyapunov times, copied into ``root``."""
    from neuromark.benchmarks.mackey_glass.series import MACKEY_GLASS

    for name in ("lyapunov.csv", "mackey_glass_tau17.npy"):
        shutil.copyfile(MACKEY_GLASS.shipped / name, root / name)


TASK_CASES = {"mackey_glass": mackey_glass_case}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "mackey_glass": {"write": write_series, "options": {"tau": 17, "length": 2.0}, "shape": (1,),
                     "dtype": "float64", "damage": "mackey_glass_tau17.npy"},
}
SUT_CASES: dict[str, dict[str, Any]] = {"esn": {"options": {"samples": 16, "threads": 1}}}
