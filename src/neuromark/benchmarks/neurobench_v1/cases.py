"""The small cases neuromark's central tests run for the neurobench_v1 family:
:data:`TASK_CASES`, :data:`DATASET_CASES` and :data:`SUT_CASES`, found through
``neuromark.registry.families()`` (what each case holds: ``docs/extending.md``, "The
family's cases")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The shipped row configs (``configs/neurobench_v1/`` of the checkout).
ROWS = Path(__file__).resolve().parents[4] / "configs" / "neurobench_v1"


def row_case(tmp_path: Path, cache: Path, monkeypatch: Any) -> dict[str, Any]:
    """NeuroBench's ANN2D on session indy_20160622_01 (a shipped row, milliseconds of CPU):
    the published footprint under NeuroBench's rule and Dense, reproduced."""

    def check(results: list[dict[str, Any]], cache: Path) -> None:
        scores, published = results[0]["scores"], results[0]["details"]["published"]
        assert scores["footprint_neurobench"]["value"] == published["footprint"] == 20824
        assert scores["dense"]["value"] == published["dense"] == 4704

    # a copy in tmp_path (tests write beside a case's config), its checkpoint path absolute
    shipped = ROWS / "primate_ann2d_indy_20160622_01.yaml"
    config = tmp_path / shipped.name
    config.write_text(shipped.read_text().replace("checkpoint: checkpoints/",
                                                  f"checkpoint: {ROWS / 'checkpoints'}/"))
    return {"config": config, "repeat": True, "flags": {"check": check}}


TASK_CASES = {"neurobench_v1_row": row_case}
DATASET_CASES: dict[str, dict[str, Any]] = {}
SUT_CASES: dict[str, dict[str, Any]] = {}
