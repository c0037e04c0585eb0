"""The small cases neuromark's central tests run for the closed_loop family: :data:`TASK_CASES`,
:data:`DATASET_CASES` and :data:`SUT_CASES`, found through ``neuromark.registry.families()``
(what each case holds: ``docs/extending.md``, "The family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def closed_loop_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """The online prosthesis simulator with the Wiener-filter agent (one DAgger round): 2
    episodes of at most 60 steps, one per unit, after 2 training episodes."""
    return {"config": {"task": "closed_loop", "benchmark": {"id": "cl-test", "version": "1.0"},
                       "env": {"name": "ops"},
                       "agent": {"model": {"name": "loop_wiener", "options": {"dagger_rounds": 1}}},
                       "episodes": {"count": 2, "max_steps": 60, "seeds": [0], "per_unit": 1},
                       "train": {"seeds": [9], "episodes": 2}},
            "repeat": True,
            # one episode per unit, each evaluated under the run's context
            "flags": {"coverage": True, "units": 2, "evaluations": 2,
                      "caches": ["checkpoints/closed_loop"]}}


TASK_CASES = {"closed_loop": closed_loop_case}
DATASET_CASES: dict[str, dict[str, Any]] = {}
SUT_CASES: dict[str, dict[str, Any]] = {}
