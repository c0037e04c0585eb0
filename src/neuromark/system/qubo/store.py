"""Append-only JSONL store of finished sweep entries; resuming skips completed keys.

Each line is one finished entry ``{"key": ..., ...}``, appended with flush + fsync, so an
interrupted sweep loses at most the entry that was running. A truncated last line (the
process died mid-write) is ignored and rewritten on resume.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from neuromark.errors import DataError
from neuromark.results import to_jsonable, write_text_atomic


class EntryStore:
    """Finished entries of one sweep, on disk at ``path`` (``entries.jsonl``)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.is_file():
            self._read()

    def _read(self) -> None:
        lines = self.path.read_text().splitlines(keepends=True)
        good = []
        for i, line in enumerate(lines):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                if i == len(lines) - 1:  # torn final write: drop it
                    break
                raise DataError(f"{self.path}:{i + 1}: corrupt entry line (not JSON)") from None
            if not isinstance(entry, dict) or "key" not in entry:
                raise DataError(f"{self.path}:{i + 1}: entry without a 'key'")
            self.entries[entry["key"]] = entry
            good.append(line if line.endswith("\n") else line + "\n")
        if len(good) != len(lines) or (lines and not lines[-1].endswith("\n")):
            tmp = self.path.with_suffix(".jsonl.tmp")
            tmp.write_text("".join(good))
            os.replace(tmp, self.path)

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def append(self, entry: dict[str, Any]) -> None:
        """Write one finished entry durably (flush + fsync)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
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
