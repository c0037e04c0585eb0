"""Scores, the results bundle, provenance, and atomic JSON writing.

Results file schema (``schema_version`` "1.0"), one JSON object:

- ``schema_version``: "1.0".
- ``benchmark``: ``{"id": "<data>-<metric-set>", "version", "parent", "citation"}``.
- ``scores``: ``{name: {"value", "error", "unit", "higher_is_better", "raw", "ceiling",
  "ceiled"}}``. ``value`` is a number or a dict of numbers (``synaptic_operations``);
  ``error`` is the standard error over samples where the metric is a mean, else null.
- ``details``: task-specific extras (per-layer figures, per-instance values, flags).
- ``config``: the fully resolved config; ``seeds``: every seed used.
- ``provenance``: ``created`` (UTC ISO time), ``python``, ``packages`` (versions),
  ``machine`` (platform, CPU, cores, GPU), ``git_commit``.

``dict(results)`` maps score names to plain JSON values, with the key names of the
``neurobench`` package (``footprint``, ``synaptic_operations``, ...).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import platform
import re
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from neuromark.errors import DataError

SCHEMA_VERSION = "1.0"

#: Packages whose versions are recorded when installed.
TRACKED_PACKAGES = (
    "neuromark", "torch", "numpy", "scipy", "snntorch", "tonic", "h5py", "jitcdde",
    "mlcommons-loadgen", "dimod", "dwave-samplers", "networkx", "numba", "librosa",
)


#: Benchmark ids (and every name derived from one) are file names: letters, digits, ``._-``.
ID_PATTERN = re.compile(r"[A-Za-z0-9._-]+")


def id_problem(name: object) -> str | None:
    """Why ``name`` is not a valid benchmark id (a file name, never a path), or None."""
    if not isinstance(name, str) or not ID_PATTERN.fullmatch(name):
        return (f"{name!r} is not a valid id: use letters, digits, '.', '_' and '-' only "
                f"(an id names a file in the output folder; it is never a path)")
    if set(name) == {"."}:
        return f"{name!r} is not a valid id: it must not be only dots"
    return None


def path_in(folder: str | os.PathLike[str], name: str) -> Path:
    """``folder/name`` for a valid id-like ``name``, refusing anything that would resolve
    outside ``folder`` (:class:`~neuromark.errors.DataError`)."""
    problem = id_problem(name.removesuffix(".json")) if isinstance(name, str) else id_problem(name)
    base = Path(folder).resolve()
    target = (base / name).resolve()
    if problem or target.parent != base:
        raise DataError(f"refusing to write {name!r} outside the output folder {folder}"
                        + (f": {problem}" if problem else ""))
    return Path(folder) / name


def config_digest(data: Any) -> str:
    """sha256 of ``data`` as canonical JSON (sorted keys): the identity of a resolved config."""
    text = json.dumps(to_jsonable(data), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Score:
    """One benchmark score.

    Attributes:
        value: the figure (a number, or a dict of numbers such as synaptic operations).
        error: standard error of ``value`` over samples when it is a mean, else None.
        unit: e.g. "bytes", "%", "ops/sample", "" for ratios.
        higher_is_better: direction of improvement.
        raw: the unnormalised figure when a ceiling applies, else equal to ``value``.
        ceiling: optional ceiling; ``ceiled = raw / ceiling`` (as in Brain-Score).
    """

    value: Any
    error: Any = None
    unit: str = ""
    higher_is_better: bool | None = None
    raw: Any = None
    ceiling: float | None = None

    def __post_init__(self) -> None:
        if self.raw is None:
            self.raw = self.value

    @property
    def ceiled(self) -> float | None:
        """``raw / ceiling`` when a ceiling is set and ``raw`` is a number."""
        if self.ceiling is None or not isinstance(self.raw, (int, float)):
            return None
        return float(self.raw) / float(self.ceiling)

    def to_json(self) -> dict[str, Any]:
        return {
            "value": to_jsonable(self.value),
            "error": to_jsonable(self.error),
            "unit": self.unit,
            "higher_is_better": self.higher_is_better,
            "raw": to_jsonable(self.raw),
            "ceiling": self.ceiling,
            "ceiled": self.ceiled,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Score:
        return cls(value=data["value"], error=data.get("error"), unit=data.get("unit", ""),
                   higher_is_better=data.get("higher_is_better"), raw=data.get("raw"),
                   ceiling=data.get("ceiling"))


@dataclass
class BenchmarkInfo:
    """Stable identity of a benchmark: ``<data>-<metric-set>`` id, version, parent, bibtex."""

    id: str
    version: str = "1.0"
    parent: str | None = None
    citation: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "version": self.version, "parent": self.parent,
                "citation": self.citation}


@dataclass
class Results(Mapping[str, Any]):
    """Scores of one benchmark run, with identity, config, seeds and provenance.

    Behaves as a read-only mapping from score name to its plain JSON value.
    """

    scores: dict[str, Score]
    benchmark: BenchmarkInfo = field(default_factory=lambda: BenchmarkInfo("custom"))
    config: dict[str, Any] = field(default_factory=dict)
    seeds: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return to_jsonable(self.scores[key].value)

    def __iter__(self) -> Iterator[str]:
        return iter(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "benchmark": self.benchmark.to_json(),
            "scores": {k: s.to_json() for k, s in self.scores.items()},
            "details": to_jsonable(self.details),
            "config": to_jsonable(self.config),
            "seeds": to_jsonable(self.seeds),
            "provenance": self.provenance or collect_provenance(),
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the results as JSON atomically (temp file + rename); returns the path."""
        return write_json_atomic(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """Read a results file written by :meth:`save`."""
        data = json.loads(Path(path).read_text())
        if data.get("schema_version") != SCHEMA_VERSION:
            raise DataError(f"{path}: schema_version {data.get('schema_version')!r} is not "
                            f"{SCHEMA_VERSION!r}")
        bench = data["benchmark"]
        return cls(
            scores={k: Score.from_json(v) for k, v in data["scores"].items()},
            benchmark=BenchmarkInfo(bench["id"], bench.get("version", "1.0"),
                                    bench.get("parent"), bench.get("citation", "")),
            config=data.get("config", {}), seeds=data.get("seeds", {}),
            details=data.get("details", {}), provenance=data.get("provenance", {}),
        )


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/torch scalars and arrays, tuples, paths to plain JSON values.

    Non-finite floats are kept as the strings "NaN"/"Infinity"/"-Infinity" so that the
    file stays strict JSON and nothing is silently turned into 0.
    """
    if obj is None or isinstance(obj, (bool, str, int)):
        return obj
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if hasattr(obj, "tolist"):  # numpy / torch
        return to_jsonable(obj.tolist())
    if hasattr(obj, "item"):
        return to_jsonable(obj.item())
    if hasattr(obj, "model_dump"):  # pydantic
        return to_jsonable(obj.model_dump())
    raise TypeError(f"cannot convert {type(obj).__name__} to JSON")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Write a file atomically: yields a temp path beside ``path`` to write to; on success
    it gets the usual permissions (0666 less the umask; mkstemp makes 0600 files) and
    replaces ``path`` with ``os.replace``; on failure it is removed and ``path`` is left as
    it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`), fsynced."""
    with atomic_path(path) as tmp, open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return Path(path)


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> Path:
    """Write ``data`` as indented JSON to ``path`` atomically (see :func:`atomic_path`)."""
    text = json.dumps(to_jsonable(data), indent=1, allow_nan=False) + "\n"
    return write_text_atomic(path, text)


def current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def package_versions(names: tuple[str, ...] = TRACKED_PACKAGES) -> dict[str, str]:
    """Installed versions of ``names``; absent packages are left out."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def machine_info() -> dict[str, Any]:
    """Platform, CPU model, logical core count and GPU (if torch sees one)."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info: dict[str, Any] = {"platform": platform.platform(), "machine": platform.machine(),
                            "cpu": cpu, "cores": os.cpu_count(), "gpu": None}
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def git_commit(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The current git commit of ``cwd`` (or of the package's checkout), or None."""
    where = cwd or Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                             text=True, timeout=5, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def collect_provenance() -> dict[str, Any]:
    """Provenance block for a results file."""
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "packages": package_versions(),
        "machine": machine_info(),
        "git_commit": git_commit(),
    }
