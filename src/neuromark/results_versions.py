"""The results schema versions this neuromark reads, and the one wording of a file of any
other version (:meth:`neuromark.results.Results.load`, the report, leaderboard and compare)."""

from __future__ import annotations

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
