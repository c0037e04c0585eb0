"""The results schema versions this neuromark reads, and the one wording of a file of any
other version (:meth:`neuromark.results.Results.load`, the report, leaderboard and compare).

Our own results files of the earlier schemas (:data:`OLD_SCHEMAS`: 1.0 to 1.2, written by
neuromark before 0.2.0) stay readable until the sunset, :data:`OLD_SCHEMAS_READ_UNTIL`
(2027-12-06, one year after release 0.2.0); from the day after, they are refused as any
unsupported version is, with a message saying so (re-run the benchmark to write the current
schema).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

#: The schema version this neuromark writes (:data:`neuromark.results.SCHEMA_VERSION`).
CURRENT_SCHEMA = "1.3"
#: Earlier schema versions still read until :data:`OLD_SCHEMAS_READ_UNTIL` (1.0: no ceiling
#: rule, errors or sidecar; 1.0 and 1.1: no model block, derived on load; before 1.3: the
#: flags and artefacts in ``details``).
OLD_SCHEMAS = ("1.0", "1.1", "1.2")
#: The last day files of :data:`OLD_SCHEMAS` are read (one year after release 0.2.0,
#: 2026-12-06); after it they are refused.
OLD_SCHEMAS_READ_UNTIL = datetime.date(2027, 12, 6)


def readable_schemas(today: datetime.date | None = None) -> tuple[str, ...]:
    """The schema versions read on ``today`` (default: the local date): the old ones until
    :data:`OLD_SCHEMAS_READ_UNTIL` included, then the current one only."""
    day = today if today is not None else datetime.date.today()
    return (*OLD_SCHEMAS, CURRENT_SCHEMA) if day <= OLD_SCHEMAS_READ_UNTIL else (CURRENT_SCHEMA,)


#: Schema versions :meth:`~neuromark.results.Results.load` reads (:func:`readable_schemas`
#: on the day this module was imported).
READABLE_SCHEMAS = readable_schemas()


def unsupported_schema(data: dict[str, Any], today: datetime.date | None = None) -> str | None:
    """Why a results object's ``schema_version`` cannot be read on ``today`` (default: the
    local date; None when it can)."""
    version = data.get("schema_version")
    readable = readable_schemas(today)
    if version in readable:
        return None
    if version in OLD_SCHEMAS:
        return (f"results schema_version {version!r} is no longer read: files of schema "
                f"{OLD_SCHEMAS[0]} to {OLD_SCHEMAS[-1]} (neuromark before 0.2.0) were read until "
                f"{OLD_SCHEMAS_READ_UNTIL.isoformat()}; re-run the benchmark to write schema "
                f"{CURRENT_SCHEMA}")
    reads = readable[0] if len(readable) == 1 else f"{readable[0]} to {readable[-1]}"
    return (f"results schema_version {version!r} is not supported: this neuromark reads {reads}"
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


def _kind(value: Any) -> str:
    return "null" if value is None else {"str": "text", "dict": "object", "list": "list",
                                          "bool": "boolean"}.get(type(value).__name__,
                                                                 type(value).__name__)


def field_problems(data: dict[str, Any]) -> list[str]:
    """The fields of a results object whose type or range the schema does not allow, each
    as ``"field: why"`` ([] when all are right): ``benchmark`` an object with a text ``id``;
    ``scores``, ``details``, ``seeds``, ``provenance``, ``config`` objects; ``model`` an
    object or null; ``flags`` and ``artefacts`` lists of texts (a text would be read one
    letter at a time); each score an object with a ``value`` (not a list), a text ``unit``
    and a boolean or null ``higher_is_better``; ``footprint``'s recorded widths (``raw.precision.NAME.bits``)
    integers in 1..64 and at most the tensor's ``dtype_bits`` where recorded."""
    out: list[str] = []
    bench = data.get("benchmark")
    if not isinstance(bench, dict):
        out.append(f"benchmark: must be an object, got {_kind(bench)}")
    elif not isinstance(bench.get("id"), str):
        out.append(f"benchmark.id: must be a text, got {_kind(bench.get('id'))}")
    for key in ("scores", "details", "seeds", "provenance", "config"):
        if key in data and not isinstance(data[key], dict):
            out.append(f"{key}: must be an object, got {_kind(data[key])}")
    if "scores" not in data:
        out.append("scores: missing")
    if data.get("model") is not None and not isinstance(data["model"], dict):
        out.append(f"model: must be an object or null, got {_kind(data['model'])}")
    for key in ("flags", "artefacts"):
        value = data.get(key, [])
        if not isinstance(value, list):
            out.append(f"{key}: must be a list of texts, got {_kind(value)}")
        else:
            out += [f"{key}[{i}]: must be a text, got {_kind(v)}"
                    for i, v in enumerate(value) if not isinstance(v, str)]
    details = data.get("details") if isinstance(data.get("details"), dict) else {}
    for key in ("flags", "plots"):  # before 1.3 the flags and artefacts lived here
        value = details.get(key)
        if isinstance(value, (str, bytes)) or isinstance(value, list) and not all(
                isinstance(v, str) for v in value):
            got = "a list with a non-text" if isinstance(value, list) else _kind(value)
            out.append(f"details.{key}: must be a list of texts (or a task's object of named "
                       f"conditions), got {got}")
    scores = data.get("scores") if isinstance(data.get("scores"), dict) else {}
    for name, score in scores.items():
        if not isinstance(score, dict):
            out.append(f"scores.{name}: must be an object, got {_kind(score)}")
            continue
        if "value" not in score:
            out.append(f"scores.{name}.value: missing")
        elif isinstance(score["value"], list):
            out.append(f"scores.{name}.value: must be a number, a text or an object of them, "
                       f"got list")
        if not isinstance(score.get("unit", ""), (str, type(None))):
            out.append(f"scores.{name}.unit: must be a text, got {_kind(score['unit'])}")
        if not isinstance(score.get("higher_is_better"), (bool, type(None))):
            out.append(f"scores.{name}.higher_is_better: must be true, false or null, got "
                       f"{_kind(score['higher_is_better'])}")
        raw = score.get("raw")
        precision = raw.get("precision") if isinstance(raw, dict) else None
        if precision is None:
            continue
        if not isinstance(precision, dict):
            out.append(f"scores.{name}.raw.precision: must be an object, got {_kind(precision)}")
            continue
        for tensor, entry in precision.items():
            where = f"scores.{name}.raw.precision.{tensor}.bits"
            bits = entry.get("bits") if isinstance(entry, dict) else None
            stored = entry.get("dtype_bits") if isinstance(entry, dict) else None
            if isinstance(bits, bool) or not isinstance(bits, int) or not 1 <= bits <= 64:
                out.append(f"{where}: must be an integer number of bits in 1..64, got {bits!r}")
            elif isinstance(stored, int) and not isinstance(stored, bool) and bits > stored:
                out.append(f"{where}: {bits} bits is wider than the tensor's dtype "
                           f"({stored} bits) can hold")
    return out
