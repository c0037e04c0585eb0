"""The results schema versions this neuromark reads, and the one wording of a file of any
other version (:meth:`neuromark.results.Results.load`, the report, leaderboard and compare)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Schema versions :meth:`~neuromark.results.Results.load` reads (1.0: no ceiling rule,
#: errors or sidecar; 1.0 and 1.1: no model block, derived on load).
READABLE_SCHEMAS = ("1.0", "1.1", "1.2", "1.3")


def unsupported_schema(data: dict[str, Any]) -> str | None:
    """Why a results object's ``schema_version`` cannot be read (None when it can)."""
    version = data.get("schema_version")
    if version in READABLE_SCHEMAS:
        return None
    return (f"results schema_version {version!r} is not supported: this neuromark reads "
            f"{READABLE_SCHEMAS[0]} to {READABLE_SCHEMAS[-1]}"
            + (" (a newer neuromark wrote it? upgrade neuromark)" if isinstance(version, str) else ""))


def results_object(data: Any) -> bool:
    """Whether a parsed JSON value is meant as a results file (an object with
    ``schema_version`` or ``scores``); other JSON in a run folder (a submission manifest, a
    QUBO sweep's ``entries.meta.json``) is not."""
    return isinstance(data, dict) and ("schema_version" in data or "scores" in data)


def meant_as_results(path: Path) -> bool:
    """:func:`results_object` of the JSON file ``path``; True when it cannot be read, so that
    the reader, not a skip, names its fault."""
    try:
        return results_object(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return True
