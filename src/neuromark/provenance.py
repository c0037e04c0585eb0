"""Provenance of a results file: time, Python, package versions, machine and git commit.

Re-exported by :mod:`neuromark.results`.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

#: Packages whose versions are recorded when installed.
TRACKED_PACKAGES = (
    "neuromark", "torch", "numpy", "scipy", "snntorch", "tonic", "h5py", "jitcdde",
    "mlcommons-loadgen", "dimod", "dwave-samplers", "networkx", "numba", "librosa",
)


def package_versions(names: tuple[str, ...] = TRACKED_PACKAGES) -> dict[str, str]:
    """Installed versions of ``names``; absent packages are left out (looked up once per
    process: reading the installed metadata costs ~50 ms, a run's fixed cost otherwise)."""
    return dict(_package_versions(tuple(names)))


@lru_cache(maxsize=8)
def _package_versions(names: tuple[str, ...]) -> dict[str, str]:
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def machine_info() -> dict[str, Any]:
    """Platform, CPU model, logical core count and the GPUs present (``gpus``: the names of
    the CUDA devices torch sees, when torch is loaded; the device a run *used* is
    ``provenance.device``, see :func:`neuromark.devices.device_provenance`)."""
    info: dict[str, Any] = {**_host(), "gpus": []}
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return info


@lru_cache(maxsize=1)
def _host() -> dict[str, Any]:
    """Platform, machine, CPU model and logical cores: read once per process (reading
    ``/proc/cpuinfo`` and ``platform`` costs ~0.3 ms, every run otherwise)."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"platform": platform.platform(), "machine": platform.machine(), "cpu": cpu,
            "cores": os.cpu_count()}


def git_commit(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The current git commit of ``cwd`` (or of the package's checkout), or None.

    ``git rev-parse`` runs once per place and process; later calls reuse its answer while
    the repository's ``HEAD`` (its text), the reflog ``logs/HEAD``, the branch HEAD names
    and ``packed-refs`` stay as they were (every commit, checkout, reset or rebase changes
    one of them). Without a reflog the command runs every time. A subprocess costs ~1 ms
    CPU and ~3 ms of wall time per run, a visible share of a short run."""
    where = str(cwd or Path(__file__).resolve().parent)
    cached = _COMMITS.get(where)
    if cached is not None and _head_stamp(*cached[1]) == cached[2]:
        return cached[0]
    try:
        out = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--git-common-dir", "HEAD"],
                             cwd=where, capture_output=True, text=True, timeout=5, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.splitlines()
    if len(lines) != 3:
        return None
    dirs = (Path(lines[0]), Path(where) / lines[1])  # the common dir may be relative to cwd
    stamp = _head_stamp(*dirs)
    if stamp is not None:
        _COMMITS[where] = (lines[2], dirs, stamp)
    return lines[2]


#: place -> (commit, (git directory, common git directory), :func:`_head_stamp` then)
_COMMITS: dict[str, tuple[str, tuple[Path, Path], tuple]] = {}


def _head_stamp(git_dir: Path, common: Path) -> tuple | None:
    """``HEAD``'s text, and (inode, size, mtime in ns) of ``logs/HEAD``, of the branch
    ``HEAD`` names and of ``packed-refs``; None without a reflog (nothing is cached)."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8")
        (git_dir / "logs" / "HEAD").stat()
    except (OSError, UnicodeDecodeError):
        return None
    files = [git_dir / "logs" / "HEAD", common / "packed-refs"]
    if head.startswith("ref: "):
        files.append(common / head[5:].strip())
    stamp: list = [head]
    for file in files:
        try:
            info = file.stat()
        except OSError:
            stamp.append(None)
            continue
        stamp.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


def collect_provenance() -> dict[str, Any]:
    """Provenance block for a results file."""
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "packages": package_versions(),
        "machine": machine_info(),
        "git_commit": git_commit(),
    }


def stamp_provenance(provenance: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    """The one place provenance is completed: :func:`collect_provenance` (time, versions,
    machine, commit) under what a task already recorded (e.g. ``device``, or the machine of
    a remote unit), then ``extra`` (e.g. ``run``: the run context, ``executor``)."""
    return {**collect_provenance(), **(provenance or {}), **extra}
