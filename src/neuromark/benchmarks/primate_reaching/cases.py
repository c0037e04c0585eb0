"""The small cases neuromark's central tests run for the primate_reaching family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from neuromark.errors import DataError


def primate_reaching_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """The ridge decoder on two 16-s surrogate sessions (one per monkey), read in chunks of
    100 steps."""

    def check(results: list[dict[str, Any]], cache: Path) -> None:
        assert any((cache / "checkpoints/primate").iterdir()), "no decoder saved in --cache-dir"

    return {"config": {"task": "primate_reaching", "benchmark": {"id": "pr-test", "version": "1.0"},
                       "data": {"root": "cache:primate/tiny", "surrogate": {"duration_s": 16, "seed": 1},
                                "sessions": ["indy_20160622_01", "loco_20170210_03"], "chunk": 100},
                       "model": {"name": "ridge_decoder"},
                       "checkpoint_dir": "cache:checkpoints/primate"},
            "repeat": True,
            "flags": {"caches": ["primate/tiny", "checkpoints/primate"], "check": check}}


def psth_predictivity_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """One 45-s surrogate session, a ceiling of 10 bootstrap draws, a controller of 8 units
    trained one iteration. Not repeated (a second run would double its 9 s). It runs no
    runner: the device and the cache folder are what reach it."""

    def check(results: list[dict[str, Any]], cache: Path) -> None:
        assert results[0]["details"]["data_root"] == str(cache / "psth/tiny")

    return {"config": {"task": "psth_predictivity", "benchmark": {"id": "psth-test", "version": "1.0"},
                       "data": {"root": "cache:psth/tiny", "surrogate": {"duration_s": 45, "seed": 2},
                                "sessions": ["loco_20170215_02"]},
                       "ceiling": {"n_bootstrap": 10, "min_reliability": 0.0},
                       "controller": {"iterations": 1, "hidden": 8}},
            "flags": {"evaluated": False, "caches": ["psth/tiny"], "check": check}}


def write_session(root: Path) -> None:
    """One 6-s surrogate session (``indy_20160622_01``) with its ``surrogate.json``."""
    from neuromark.benchmarks.primate_reaching.generator import SurrogateSettings, write_surrogate

    write_surrogate(root, SurrogateSettings(6.0, 1, ("indy_20160622_01",)))


def recorded_files_are_checked_against_the_published_md5(entry: Any, root: Path, tmp_path: Path) -> None:
    """Without the surrogate's manifest and the sums record, a session is taken for a
    recorded one and checked against its published md5, which a surrogate fails."""
    from neuromark.data.entry import SUMS

    (root / "surrogate.json").unlink()
    (root / SUMS).unlink()
    try:
        entry.verify(root)
    except DataError as exc:
        assert re.search(r"indy_20160622_01\.mat.*md5", str(exc)), str(exc)
    else:
        raise AssertionError("verify() passed a surrogate session as the recorded one")


TASK_CASES = {"primate_reaching": primate_reaching_case, "psth_predictivity": psth_predictivity_case}
DATASET_CASES: dict[str, dict[str, Any]] = {
    "primate_reaching": {"write": write_session, "options": {"session": "indy_20160622_01"},
                         "shape": (1, 96), "damage": "indy_20160622_01.mat",
                         "synth": {"duration_s": 6.0, "seed": 0, "sessions": ["indy_20160622_01"]},
                         "extra": {"recorded_files_are_checked_against_the_published_md5":
                                   recorded_files_are_checked_against_the_published_md5}},
}
SUT_CASES: dict[str, dict[str, Any]] = {}
