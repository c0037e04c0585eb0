"""Suites and config dispatch: which benchmarks exist and how a config file is run.

A benchmark config is a YAML mapping with a ``task`` key naming a registered task
(``neuromark list`` shows them); the task validates and runs the rest. A suite config has
a ``suite`` key listing benchmark configs (paths relative to the suite file)::

    suite: default
    entries:
      - ../mackey_glass/esn.yaml
      - ../mackey_glass/lstm.yaml
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from neuromark.config import ConfigFile, StrictModel, load_config, validate
from neuromark.errors import ConfigError
from neuromark.registry import tasks
from neuromark.results import Results


class Task(Protocol):
    """A benchmark protocol driven by a config file."""

    name: str

    def validate(self, config: ConfigFile) -> Any:
        """Check ``config`` fully without running it; raise :class:`ConfigError` if bad."""

    def run(self, config: ConfigFile, out_dir: Path, *, quiet: bool = False) -> list[Results]:
        """Run the benchmark, writing any extra artefacts (plots, logs) under ``out_dir``."""


class SuiteConfig(StrictModel):
    suite: str
    description: str = ""
    entries: list[str]


def project_root() -> Path:
    """The checkout root (holds ``configs/``) when installed from source, else the cwd."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "configs").is_dir() else Path.cwd()


def default_suite_path() -> Path:
    """``configs/suite/default.yaml`` in the working directory, else in the checkout."""
    local = Path("configs/suite/default.yaml")
    return local if local.is_file() else project_root() / "configs/suite/default.yaml"


def expand(paths: Sequence[str | Path]) -> list[ConfigFile]:
    """Load configs, expanding suites into their entries (in order)."""
    out: list[ConfigFile] = []
    for path in paths:
        config = load_config(path)
        if "suite" in config.data:
            suite = validate(SuiteConfig, config.data, config)
            for i, entry in enumerate(suite.entries):
                entry_path = Path(path).parent / entry
                if not entry_path.is_file():
                    raise ConfigError(f"{config.where(('entries', i))}: entries[{i}]: "
                                      f"no such config {entry_path}")
                out.extend(expand([entry_path]))
        else:
            out.append(config)
    return out


def task_of(config: ConfigFile) -> Task:
    """The registered task named by the config's ``task`` key."""
    name = config.data.get("task")
    if not isinstance(name, str):
        raise ConfigError(f"{config.where(('task',))}: missing or invalid 'task' key "
                          f"(one of: {', '.join(tasks.names())})")
    try:
        return tasks.get(name)
    except KeyError as exc:
        raise ConfigError(f"{config.where(('task',))}: {exc}") from None


def validate_configs(paths: Sequence[str | Path]) -> list[ConfigFile]:
    """Validate every config (and suite entry); returns the expanded list."""
    configs = expand(paths)
    for config in configs:
        task_of(config).validate(config)
    return configs


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


def run_configs(paths: Sequence[str | Path], out_dir: Path, *, quiet: bool = False
                ) -> list[tuple[Path, Results]]:
    """Validate all configs first, then run them; each result is saved under ``out_dir``."""
    configs = validate_configs(paths)
    written: list[tuple[Path, Results]] = []
    for config in configs:
        task = task_of(config)
        stem = config.path.stem if config.path else task.name
        for results in task.run(config, out_dir / stem, quiet=quiet):
            target = out_dir / f"{results.benchmark.id}.json"
            if any(where == target for where, _ in written):
                raise ConfigError(f"{config.path or task.name}: benchmark id "
                                  f"{results.benchmark.id!r} is produced twice; its results "
                                  f"would overwrite {target}. Give each benchmark its own id")
            results.save(target)
            written.append((target, results))
    return written
