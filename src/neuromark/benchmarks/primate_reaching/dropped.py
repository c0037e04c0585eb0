"""What ``data.on_invalid: drop`` dropped in the primate-reaching tasks
(:class:`~neuromark.benchmarks.primate_reaching.reader.PrimateReaching`'s counts per rule), as results
details and a flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neuromark.benchmarks.primate_reaching.reader import PrimateReaching


def invalid_entry(root: Path, session: str, kw: dict[str, Any], test: PrimateReaching
                  ) -> dict[str, Any]:
    """``{"invalid_records": {"train": {rule: n}, "test": {rule: n}}}`` when ``kw`` drops (spike
    times: the whole session's, in both), else ``{}``."""
    if kw.get("on_invalid") != "drop":
        return {}
    train = PrimateReaching(root, session, "train", **kw)
    return {"invalid_records": {"train": train.invalid_records, "test": test.invalid_records}}


def dropped_flag(per_session: dict[str, dict[str, Any]]) -> str:
    """The results' flag when ``on_invalid: drop`` dropped anything, else ``""``:
    ``per_session[s]["invalid_records"]`` is ``{rule: n}`` or ``{split: {rule: n}}``."""
    hit = {s: e["invalid_records"] for s, e in per_session.items()
           if any(v for v in e.get("invalid_records", {}).values())}
    if not hit:
        return ""
    return ("on_invalid: drop: invalid records dropped (figures are of the remaining records): "
            + "; ".join(f"{s} {c}" for s, c in hit.items()))
