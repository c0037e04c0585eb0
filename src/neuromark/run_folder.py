"""The run folder: claimed before any work, locked while a run writes, with a manifest;
this module is the one writer of what a run keeps there.

An output folder must be a writable folder; one run holds its exclusive lock
(``.neuromark.lock``, with the holder's pid), and its manifest (``.neuromark-run``, JSON)
records the digest of the resolved configs. A rerun with the same configs resumes; other
configs into a non-empty folder are refused (naming the differing keys) unless
``overwrite``.

A claimed folder is a :class:`RunFolder` (:func:`claim_run`): it names each suite entry's
artefact folder (:meth:`RunFolder.entry_dir`, where the entry's task writes its own files),
writes each results file (:meth:`RunFolder.save`: ``<benchmark id>--<model label>.json``,
never a path, never a config, never twice in one run) and the artefacts a unit returns
from another node (:meth:`RunFolder.write_files`). The report (``report.md``) and the
system track's submission are written into the claimed folder by their own modules.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from neuromark.config import ConfigFile
from neuromark.errors import ConfigError, DataError
from neuromark.identity import config_digest, path_in, results_name
from neuromark.io_atomic import atomic_path, same_file, to_jsonable, write_json_atomic
from neuromark.results import Results

#: The folder's lock and manifest (hidden: they are not results).
LOCK_NAME = ".neuromark.lock"
MANIFEST_NAME = ".neuromark-run"
MANIFEST_FORMAT = 1


def timestamped_dir(base: str | Path = "results") -> Path:
    """``base/<YYYYmmdd-HHMMSS>``, made unique if it exists already."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(base) / stamp
    n = 1
    while out.exists():
        out = Path(base) / f"{stamp}-{n}"
        n += 1
    out.mkdir(parents=True)
    return out


def entry_stem(config: ConfigFile) -> str:
    """The folder of a suite entry's artefacts under the run folder: its config's stem."""
    stem = config.label or (config.path.stem if config.path else str(config.data.get("task")))
    return stem if stem.strip(".") else str(config.data.get("task"))


def resolved_configs(configs: Sequence[ConfigFile]) -> dict[str, Any]:
    """What a run folder's digest covers: each config's data by task folder (config stem)."""
    out: dict[str, Any] = {}
    for config in configs:
        stem = entry_stem(config)
        key, n = stem, 1
        while key in out:
            n += 1
            key = f"{stem}#{n}"
        out[key] = to_jsonable(config.data)
    return out


def differing_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted key paths where ``old`` and ``new`` differ (added, removed or changed)."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys: list[str] = []
        for k in sorted(set(old) | set(new), key=str):
            where = f"{prefix}.{k}" if prefix else str(k)
            if k not in old or k not in new:
                keys.append(where)
            else:
                keys += differing_keys(old[k], new[k], where)
        return keys
    return [] if old == new else [prefix or "<root>"]


def _lock(out_dir: Path) -> Any:
    """Open and exclusively lock ``out_dir/.neuromark.lock`` (non-blocking); the pid is
    written into it. A held lock raises :class:`ConfigError` naming the holder's pid."""
    import fcntl

    path = out_dir / LOCK_NAME
    try:
        handle = open(path, "a+")  # noqa: SIM115 - held for the whole run
    except OSError as exc:
        raise ConfigError(f"--out {out_dir}: cannot write there ({exc.strerror}); choose a "
                          f"writable folder") from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise ConfigError(f"--out {out_dir}: another neuromark run (pid {holder}) is writing "
                          f"to this folder; wait for it or choose another --out") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def _read_manifest(out_dir: Path) -> dict[str, Any] | None:
    path = out_dir / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: unreadable run manifest ({exc}); move it away or pass "
                          f"--overwrite") from None
    if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
        raise ConfigError(f"{path}: not a neuromark run manifest; move it away or pass "
                          f"--overwrite")
    return data


def check_folder(out_dir: Path, resolved: dict[str, Any], *, overwrite: bool = False) -> str:
    """Decide whether a run of ``resolved`` configs may write into ``out_dir`` (already
    locked): ``"new"``, ``"resume"`` (same digest) or ``"overwrite"``; raises
    :class:`ConfigError` naming the differing keys when it may not."""
    digest = config_digest(resolved)
    manifest = _read_manifest(out_dir) if not overwrite else None
    if manifest is not None:
        if manifest["digest"] == digest:
            return "resume"
        keys = differing_keys(manifest.get("configs", {}), resolved) or ["<config digest>"]
        shown = ", ".join(keys[:12]) + (f" (+{len(keys) - 12} more)" if len(keys) > 12 else "")
        raise ConfigError(f"--out {out_dir}: holds results of other configs (differing keys: "
                          f"{shown}); rerun the same configs to resume, choose another "
                          f"--out, or pass --overwrite to replace them")
    others = sorted(p.name for p in out_dir.iterdir() if p.name not in (LOCK_NAME, MANIFEST_NAME))
    if others and not overwrite:
        raise ConfigError(f"--out {out_dir}: not empty and not a neuromark results folder of "
                          f"these configs (holds {', '.join(others[:5])}); choose an empty "
                          f"folder or pass --overwrite")
    return "overwrite" if others or (out_dir / MANIFEST_NAME).exists() else "new"


@contextlib.contextmanager
def claim_folder(out_dir: Path, configs: Sequence[ConfigFile], *, overwrite: bool = False
                 ) -> Iterator[str]:
    """Check, lock and record ``out_dir`` for a run of ``configs`` before any work; yields
    the mode (:func:`check_folder`). The lock is released when the block ends."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out {out_dir}: exists and is not a folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--out {out_dir}: cannot create it ({exc.strerror})") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {out_dir}: the folder is not writable")
    handle = _lock(out_dir)
    try:
        resolved = resolved_configs(configs)
        mode = check_folder(out_dir, resolved, overwrite=overwrite)
        try:
            write_json_atomic(out_dir / MANIFEST_NAME, {
                "format": MANIFEST_FORMAT, "digest": config_digest(resolved),
                "configs": resolved,
                "config_files": [str(c.path.absolute()) if c.path else None for c in configs]})
        except OSError as exc:
            raise ConfigError(f"--out {out_dir}: cannot write there ({exc.strerror})") from None
        if mode != "new":
            print(f"{out_dir}: {'resuming' if mode == 'resume' else 'overwriting'} "
                  f"(config digest recorded in {MANIFEST_NAME})")
        yield mode
    finally:
        handle.close()


class RunFolder:
    """A claimed run folder (:func:`claim_run`) for a run of ``configs`` (in plan order;
    a suite entry is named by its index there): where each entry writes, and the writer of
    the run's results files, which it keeps in config order (:meth:`written`)."""

    def __init__(self, path: Path, configs: Sequence[ConfigFile], *, overwrite: bool = False,
                 mode: str = "new") -> None:
        self.path = path
        self.configs = list(configs)
        self.overwrite = overwrite
        self.mode = mode  #: :func:`check_folder`'s verdict: new, resume or overwrite
        self._order: dict[Path, int] = {}
        self._written: list[tuple[Path, Results]] = []

    def entry_dir(self, index: int) -> Path:
        """The artefact folder of entry ``index``: ``<folder>/<config stem>``."""
        return self.path / entry_stem(self.configs[index])

    def save(self, index: int, results: Results, task_name: str) -> Path:
        """Write ``results`` of entry ``index`` (made by task ``task_name``) as
        ``<benchmark id>--<model label>.json`` and return the path. Raises
        :class:`ConfigError` when that name is not a plain file name, would be the entry's
        own config file, or was already written in this run by another entry or model."""
        config = self.configs[index]
        who = config.path or task_name
        try:  # <benchmark id>--<model label>.json: models of one benchmark side by side
            target = path_in(self.path, results_name(results.benchmark.id, results.model))
        except DataError as exc:
            raise ConfigError(f"{who}: {exc}") from None
        if config.path is not None and same_file(target, config.path):
            raise ConfigError(f"{config.path}: its results file {target} would be the config "
                              f"itself; neuromark never writes over its own inputs (not even "
                              f"with --overwrite): choose another --out")
        if target in self._order:
            label = results.model.label if results.model is not None else None
            raise ConfigError(f"{who}: benchmark id {results.benchmark.id!r} with model label "
                              f"{label!r} is produced twice (also by "
                              f"{self.configs[self._order[target]].path or '<config>'}); its "
                              f"results would overwrite {target}. Give each model its own label "
                              f"(model.label)")
        results.save(target, replace=self.overwrite)
        self._written.append((target, results))
        self._order[target] = index
        return target

    def write_files(self, index: int, files: dict[str, bytes]) -> None:
        """Write the artefacts a unit of entry ``index`` returned (:func:`write_files`)."""
        write_files(self.entry_dir(index), files)

    def written(self) -> list[tuple[Path, Results]]:
        """``[(results file, results)]`` saved so far, in config order (entries run on the
        driver finish before units elsewhere: the order saved is not the order planned)."""
        return sorted(self._written, key=lambda w: self._order[w[0]])


@contextlib.contextmanager
def claim_run(out_dir: Path, configs: Sequence[ConfigFile], *, overwrite: bool = False
              ) -> Iterator[RunFolder]:
    """:func:`claim_folder` ``out_dir`` for a run of ``configs``; yields the
    :class:`RunFolder` to write through while the lock is held."""
    with claim_folder(out_dir, configs, overwrite=overwrite) as mode:
        yield RunFolder(out_dir, configs, overwrite=overwrite, mode=mode)


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """Write a unit's artefacts (``{relative path: bytes}``) under ``folder`` (each
    atomically: temp file + rename); a path leaving the folder raises :class:`DataError`."""
    for rel, data in files.items():
        target = (folder / rel).resolve()
        if not target.is_relative_to(folder.resolve()):
            raise DataError(f"{folder}: a unit's artefact {rel!r} lies outside its folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            tmp.write_bytes(data)
