"""Append-only JSONL store of finished sweep entries; resuming skips completed keys.

Each line is one finished entry ``{"key": ..., ...}``, appended with flush + fsync, so an
interrupted sweep loses at most the entry that was running. A truncated last entry line
(the process died mid-write) is ignored and rewritten on resume. Beside it, ``entries.meta.json`` records
``{"neuromark_entries": 1, "config_digest": ...}`` (the digest of the resolved sweep config
that wrote it). Anything else that is not such a file (a folder, random
bytes, a line that is not an entry) is an error before any solving: the file is never
replaced silently. An entry's key holds its full spec (the resolved solver spec included),
so an entry is reused only for exactly the spec that produced it; :func:`check_entry`
validates a reused entry's fields.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from neuromark.benchmarks.qubo.gap import bks_gap
from neuromark.errors import DataError, MetricError
from neuromark.io_atomic import to_jsonable, write_text_atomic

#: Version of the header line.
STORE_FORMAT = 1


class EntryStore:
    """Finished entries of one sweep, on disk at ``path`` (``entries.jsonl``).

    Attributes:
        digest: the config digest of this run (written into the header).
        stored_digest: the digest found in an existing file's header (None: new file or a
            file of an older version without a header).
        lines: the line number of each entry key (for error messages).
    """

    def __init__(self, path: Path, digest: str | None = None) -> None:
        self.path = Path(path)
        self.meta_path = self.path.with_suffix(".meta.json")
        self.digest = digest
        self.stored_digest: str | None = None
        self.entries: dict[str, dict[str, Any]] = {}
        self.lines: dict[str, int] = {}
        for file in (self.path, self.meta_path):
            if file.exists() and not file.is_file():
                raise DataError(f"{file}: resume file is not a regular file (a folder?); "
                                f"move it away")
        ours = self._read_meta()
        if self.path.is_file():
            self._read(ours)
        if self._stale():
            self._write_meta()

    def _read_meta(self) -> bool:
        if not self.meta_path.is_file():
            return False
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise DataError(f"{self.meta_path}: not a neuromark entries header (not JSON); "
                            f"move it away or choose another --out") from None
        if not isinstance(meta, dict) or meta.get("neuromark_entries") != STORE_FORMAT:
            raise DataError(f"{self.meta_path}: not a neuromark entries header")
        self.stored_digest = meta.get("config_digest")
        return True

    def _write_meta(self) -> None:
        self.stored_digest = self.digest
        write_text_atomic(self.meta_path, json.dumps(
            {"neuromark_entries": STORE_FORMAT, "config_digest": self.digest}) + "\n")

    def _read(self, ours: bool) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            raise DataError(f"{self.path}: not a neuromark entries file (not UTF-8 text); "
                            f"move it away or choose another --out") from None
        good = []
        for i, line in enumerate(lines):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                if i == len(lines) - 1 and (i > 0 or ours) and not line.endswith("\n"):
                    break  # torn final write: drop it
                raise DataError(f"{self.path}:{i + 1}: corrupt line (not JSON); not a complete "
                                f"neuromark entries file") from None
            if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
                raise DataError(f"{self.path}:{i + 1}: not an entry (a JSON object with a "
                                f"'key')")
            self.entries[entry["key"]] = entry
            self.lines[entry["key"]] = i + 1
            good.append(line if line.endswith("\n") else line + "\n")
        if len(good) != len(lines) or (lines and not lines[-1].endswith("\n")):
            self.rewrite()

    def _stale(self) -> bool:
        return self.stored_digest != self.digest or not self.meta_path.is_file()

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def append(self, entry: dict[str, Any]) -> None:
        """Write one finished entry durably (flush + fsync)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._stale():
            self._write_meta()
        line = json.dumps(to_jsonable(entry), allow_nan=False) + "\n"
        with self.path.open("a") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self.entries[entry["key"]] = entry

    def rewrite(self) -> None:
        """Write every entry in memory (amended since it was appended) to the file, once
        per key, atomically (temp file, fsync, rename)."""
        write_text_atomic(self.path, "".join(json.dumps(to_jsonable(e), allow_nan=False) + "\n"
                                             for e in self.entries.values()))


def _number(entry: dict[str, Any], name: str, where: str, *, allow_str: bool = False) -> None:
    value = entry.get(name)
    if isinstance(value, str) and allow_str:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DataError(f"{where}: field {name!r} must be a finite number, got {value!r}")


#: Fields a finished entry must carry, per scenario (numbers unless listed in _FLAGS).
_FIELDS = {
    "fixed_timeout": ("cost", "gap", "bks", "wall_s", "overrun_s", "independent", "within_limit",
                      "power_w"),
    "time_to_solution": ("cost", "gap", "bks", "wall_s", "overrun_s", "independent",
                         "latency_s", "energy_j_to_gap"),
    "max_size": ("largest", "tried", "density"),
}
_FLAGS = ("independent", "within_limit")


def check_entry(entry: dict[str, Any], spec: dict[str, Any], where: str) -> None:
    """Raise :class:`DataError` naming ``where`` (``file:line``) and the field unless the
    finished ``entry`` is a well-formed result of ``spec``: every spec field equal, every
    measured field present and typed, and its gap equal to ``bks_gap(cost, bks)`` with the
    BKS of the spec."""
    missing = [k for k in ("key", *spec) if k not in entry]
    if missing:
        raise DataError(f"{where}: entry lacks field(s) {', '.join(map(repr, missing))}")
    for k, v in spec.items():
        if entry[k] != v:
            raise DataError(f"{where}: field {k!r} is {entry[k]!r}, its key says {v!r}")
    fields = _FIELDS.get(spec.get("scenario", ""), ())
    absent = [k for k in fields if k not in entry]
    if absent:
        raise DataError(f"{where}: entry lacks field(s) {', '.join(map(repr, absent))}")
    if spec["scenario"] == "max_size":
        if entry["largest"] is not None and (not isinstance(entry["largest"], int)
                                             or isinstance(entry["largest"], bool)):
            raise DataError(f"{where}: field 'largest' must be an integer or null")
        if not isinstance(entry["tried"], list):
            raise DataError(f"{where}: field 'tried' must be a list")
        return
    for name in _FLAGS:
        if name in fields and not isinstance(entry[name], bool):
            raise DataError(f"{where}: field {name!r} must be true or false, got {entry[name]!r}")
    for name in ("cost", "gap", "bks", "wall_s", "overrun_s"):
        _number(entry, name, where)
    if "power_w" in fields:
        _number(entry, "power_w", where, allow_str=True)
    if entry["wall_s"] < 0:
        raise DataError(f"{where}: field 'wall_s' is negative ({entry['wall_s']})")
    if "bks" in spec and entry["bks"] != spec["bks"]:
        raise DataError(f"{where}: field 'bks' is {entry['bks']!r}, the table says {spec['bks']!r}")
    try:
        expected = bks_gap(entry["cost"], entry["bks"])
    except MetricError as exc:
        raise DataError(f"{where}: {exc}") from None
    if not math.isclose(entry["gap"], expected, rel_tol=1e-9, abs_tol=1e-12):
        raise DataError(f"{where}: field 'gap' is {entry['gap']!r}, but cost {entry['cost']!r} "
                        f"against the BKS {entry['bks']!r} gives {expected!r}")
    if spec["scenario"] == "time_to_solution":
        for name in ("latency_s", "energy_j_to_gap"):
            value = entry[name]
            want = {f"{g:g}" for g in spec.get("gaps", [])}
            if not isinstance(value, dict) or set(value) != want:
                raise DataError(f"{where}: field {name!r} must map each gap of {sorted(want)}")
            for g, v in value.items():
                if not isinstance(v, str) and (isinstance(v, bool) or not isinstance(v, (int, float))
                                               or not math.isfinite(v) or v < 0):
                    raise DataError(f"{where}: field {name}[{g!r}] must be a non-negative "
                                    f"number or a reason, got {v!r}")
