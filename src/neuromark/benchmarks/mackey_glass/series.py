"""Mackey-Glass series (tau = 17..30) shipped with neuromark, and the forecasting instances.

The series solve dx/dt = 0.2 x(t-tau) / (1 + x(t-tau)^10) - 0.1 x(t) (Mackey & Glass 1977).
Each is 50 Lyapunov times L long, sampled at dt = L/75 (3750 float64 points, ``.npy``), with
L estimated by ``jitcdde_lyap``; ``lyapunov.csv`` records L, its spread and the initial
conditions, and ``SHA256SUMS`` (``sha256sum -c`` format) the hash of every file. They were
made by ``scripts/generate_mackey_glass.py``; reading them needs neither jitcdde nor a C
compiler.

An *instance* (NeuroBench, Yik et al. 2025, Methods) is a window of ``length`` L starting
``instance * shift`` L into the series (the shift is rounded to the nearest sample; with
``offsets="truncated"`` it is truncated, as NeuroBench's ``MackeyGlass`` dataset does with
``int(start_offset)``: 37.5 -> 37). Its first half trains a model (input f(t), target
f(t+dt)); the second half is forecast.

Example:
    >>> data = MackeyGlass(tau=17, instance=0)
    >>> x_train, y_train = data.train_split()   # (750, 1) each, float64
    >>> x_test, y_test = data.test_split()      # (750, 1) each
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.data.clips import read_utf8
from neuromark.data.download import file_digest
from neuromark.data.entry import Entry
from neuromark.errors import ChecksumError, DataError

#: Folder of the shipped files.
DATA_DIR = Path(__file__).resolve().parent / "files" / "mackey_glass"
POINTS_PER_LYAPUNOV_TIME = 75
SUMS_FILE = "SHA256SUMS"
TABLE_FILE = "lyapunov.csv"
#: Columns ``lyapunov.csv`` must have (``lyapunov_time_source`` is optional).
TABLE_COLUMNS = ("tau", "lyapunov_exponent", "lyapunov_exponent_std", "lyapunov_time",
                 "lyapunov_time_std", "n_initial_conditions", "lyapunov_initial_conditions",
                 "series_initial_condition", "series_transient", "dt", "n_points", "file")
CITATION = """@article{mackey1977oscillation,
  title={Oscillation and chaos in physiological control systems},
  author={Mackey, Michael C. and Glass, Leon},
  journal={Science}, volume={197}, number={4300}, pages={287--289}, year={1977}}"""


@dataclass(frozen=True)
class LyapunovEntry:
    """One row of ``lyapunov.csv``: the Lyapunov-time estimate and the series it sampled.

    Times are in the equation's time units; ``dt = lyapunov_time / 75``.
    ``lyapunov_time_source`` is "estimate" (1 / mean largest exponent) or "interpolated"
    (non-chaotic tau: geometric mean of the nearest chaotic neighbours' L).
    """

    tau: int
    lyapunov_exponent: float
    lyapunov_exponent_std: float
    lyapunov_time: float
    lyapunov_time_std: float
    lyapunov_time_source: str
    n_initial_conditions: int
    lyapunov_initial_conditions: tuple[float, ...]
    series_initial_condition: float
    series_transient: float
    dt: float
    n_points: int
    file: str


def read_sha256sums(path: Path) -> dict[str, str]:
    """Parse a ``sha256sum`` file (``<hex>  <name>`` lines) into ``{name: hex}``."""
    if not path.is_file():
        raise DataError(f"{path}: checksum manifest missing")
    sums = {}
    for number, line in enumerate(read_utf8(path, "checksum manifest").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or len(parts[0]) != 64:
            raise DataError(f"{path}:{number}: expected '<64 hex digits>  <file name>', got {line!r}")
        sums[parts[1].lstrip("*")] = parts[0].lower()
    return sums


def verify_file(path: Path, root: Path | None = None) -> None:
    """Check ``path`` against ``SHA256SUMS`` in its folder; raise :class:`ChecksumError` naming it."""
    root = path.parent if root is None else root
    sums = read_sha256sums(root / SUMS_FILE)
    if path.name not in sums:
        raise ChecksumError(f"{path}: no sha256 listed in {root / SUMS_FILE}")
    if not path.is_file():
        raise DataError(f"{path}: data file missing")
    got = file_digest(path)
    if got != sums[path.name]:
        raise ChecksumError(f"{path}: sha256 mismatch (expected {sums[path.name]}, got {got}); "
                            f"the file is corrupt or modified - restore it or regenerate with "
                            f"scripts/generate_mackey_glass.py")


def _float(row: dict[str, str], key: str, where: str) -> float:
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        raise DataError(f"{where}: column {key!r} must be a number, got {row.get(key)!r}") from None


@lru_cache(maxsize=8)
def _table(root: Path) -> dict[int, LyapunovEntry]:
    path = root / TABLE_FILE
    verify_file(path, root)
    entries = {}
    with io.StringIO(read_utf8(path, "Lyapunov table"), newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in TABLE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{path}:1: the header lacks column(s) {', '.join(missing)} "
                            f"(expected {', '.join(TABLE_COLUMNS)}; got "
                            f"{', '.join(reader.fieldnames or []) or 'no header'})")
        for number, row in enumerate(reader, 2):
            where = f"{path}:{number}"
            tau = int(_float(row, "tau", where))
            try:
                ics = tuple(float(v) for v in (row["lyapunov_initial_conditions"] or "").split(";"))
            except ValueError:
                raise DataError(f"{where}: column 'lyapunov_initial_conditions' must be numbers "
                                f"separated by ';', got {row['lyapunov_initial_conditions']!r}") from None
            entries[tau] = LyapunovEntry(
                tau=tau, lyapunov_exponent=_float(row, "lyapunov_exponent", where),
                lyapunov_exponent_std=_float(row, "lyapunov_exponent_std", where),
                lyapunov_time=_float(row, "lyapunov_time", where),
                lyapunov_time_std=_float(row, "lyapunov_time_std", where),
                lyapunov_time_source=row.get("lyapunov_time_source") or "estimate",
                n_initial_conditions=int(_float(row, "n_initial_conditions", where)),
                lyapunov_initial_conditions=ics,
                series_initial_condition=_float(row, "series_initial_condition", where),
                series_transient=_float(row, "series_transient", where),
                dt=_float(row, "dt", where), n_points=int(_float(row, "n_points", where)),
                file=row["file"])
    return entries


def lyapunov_table(root: Path | None = None) -> dict[int, LyapunovEntry]:
    """The verified ``lyapunov.csv`` as ``{tau: LyapunovEntry}``."""
    return dict(_table((root or DATA_DIR).resolve()))


def available_taus(root: Path | None = None) -> list[int]:
    """The delays tau that have a shipped series."""
    return sorted(lyapunov_table(root))


def entry(tau: int, root: Path | None = None) -> LyapunovEntry:
    """The table row of ``tau``; an unknown tau raises :class:`DataError` listing the known ones."""
    table = lyapunov_table(root)
    if tau not in table:
        raise DataError(f"no Mackey-Glass series for tau={tau!r} in {(root or DATA_DIR) / TABLE_FILE} "
                        f"(available: {', '.join(str(t) for t in sorted(table))})")
    return table[tau]


def load_series(tau: int, root: Path | None = None, *, verify: bool = True) -> np.ndarray:
    """The series of ``tau``: float64, shape (n_points,), checked against ``SHA256SUMS``."""
    root = (root or DATA_DIR).resolve()
    row = entry(tau, root)
    path = root / row.file
    if verify:
        verify_file(path, root)
    try:
        series = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable .npy array ({exc})") from exc
    if series.shape != (row.n_points,) or not np.all(np.isfinite(series)):
        raise DataError(f"{path}: expected {row.n_points} finite values, got shape {series.shape}")
    return series.astype(np.float64, copy=False)


#: How an instance's start ``instance * shift * 75`` becomes a sample index.
OFFSET_RULES = ("rounded", "truncated")


def instance_start(instance: int, shift: float,
                   points_per_lyapunov_time: int = POINTS_PER_LYAPUNOV_TIME,
                   offsets: str = "rounded") -> int:
    """First sample of ``instance``: ``instance * shift * 75`` rounded half up (``offsets=
    "rounded"``) or truncated (``"truncated"``, NeuroBench's ``int(start_offset)``)."""
    if offsets not in OFFSET_RULES:
        raise DataError(f"MackeyGlass: offsets must be one of {', '.join(OFFSET_RULES)}, got {offsets!r}")
    exact = instance * shift * points_per_lyapunov_time
    return int(math.floor(exact + 0.5)) if offsets == "rounded" else int(math.floor(exact))


def instance_stop(instance: int, length: float, shift: float, offsets: str = "rounded") -> int:
    """One past the last sample ``instance`` reads: its start, ``length * 75`` samples,
    and one more point for the last target."""
    return (instance_start(instance, shift, offsets=offsets)
            + int(round(length * POINTS_PER_LYAPUNOV_TIME)) + 1)


try:  # a torch Dataset when torch is importable (it is a core dependency)
    from torch.utils.data import Dataset as _Base
except ImportError:  # pragma: no cover
    _Base = object  # type: ignore[assignment,misc]


class MackeyGlass(_Base):  # type: ignore[misc]
    """One forecasting instance: ``(f(t), f(t+dt))`` pairs over a window of the series.

    Args:
        tau: delay of the series (17..30 shipped).
        instance: index of the window; it starts ``instance * shift`` Lyapunov times in.
        length: window length in Lyapunov times (default 20: 1500 samples).
        shift: shift between consecutive instances in Lyapunov times (default 0.5).
        root: folder with the series, ``lyapunov.csv`` and ``SHA256SUMS`` (default: shipped).
        offsets: ``"rounded"`` (ours) or ``"truncated"`` (NeuroBench's) start of the window.

    Items are ``(input, target)`` float64 tensors of shape (1,); ``len`` is ``length * 75``.
    """

    citation = CITATION

    def __init__(self, tau: int = 17, instance: int = 0, *, length: float = 20.0,
                 shift: float = 0.5, root: Path | None = None, offsets: str = "rounded") -> None:
        if not (isinstance(length, (int, float)) and length > 0):
            raise DataError(f"MackeyGlass: length must be a positive number of Lyapunov times, "
                            f"got {length!r}")
        if not (isinstance(shift, (int, float)) and shift >= 0):
            raise DataError(f"MackeyGlass: shift must be >= 0 Lyapunov times, got {shift!r}")
        if not (isinstance(instance, int) and instance >= 0):
            raise DataError(f"MackeyGlass: instance must be an integer >= 0, got {instance!r}")
        self.root = (root or DATA_DIR).resolve()
        self.tau, self.instance, self.length, self.shift = tau, instance, length, shift
        row = entry(tau, self.root)
        self.lyapunov_time, self.dt = row.lyapunov_time, row.dt
        self.n_samples = int(round(length * POINTS_PER_LYAPUNOV_TIME))
        if self.n_samples < 2:
            raise DataError(f"MackeyGlass: length={length} L gives fewer than 2 samples")
        self.start = instance_start(instance, shift, offsets=offsets)
        stop = instance_stop(instance, length, shift, offsets)
        if stop > row.n_points:
            raise DataError(
                f"Mackey-Glass tau={tau}: instance {instance} needs samples {self.start}..{stop - 1} "
                f"(start {instance} x {shift} L, length {length} L + 1 target) but "
                f"{self.root / row.file} has {row.n_points} samples ({row.n_points // 75} L); "
                f"use fewer instances, a smaller shift or a shorter length")
        self.series = load_series(tau, self.root)
        self.window = self.series[self.start:stop]

    def __len__(self) -> int:
        return self.n_samples

    def __getitem__(self, index: int):
        import torch

        if not -self.n_samples <= index < self.n_samples:
            raise IndexError(f"sample {index} out of range for {self.n_samples} samples")
        index %= self.n_samples
        return (torch.tensor(self.window[index:index + 1]),
                torch.tensor(self.window[index + 1:index + 2]))

    @property
    def n_train(self) -> int:
        """Samples in the training half (the first ``len // 2``)."""
        return self.n_samples // 2

    def _pairs(self, lo: int, hi: int):
        import torch

        x = torch.from_numpy(self.window[lo:hi].copy()).reshape(-1, 1)
        y = torch.from_numpy(self.window[lo + 1:hi + 1].copy()).reshape(-1, 1)
        return x, y

    def train_split(self):
        """``(inputs, targets)``, each float64 of shape (n_train, 1): f(t) and f(t+dt)."""
        return self._pairs(0, self.n_train)

    def test_split(self):
        """The forecast half: ``(inputs, targets)`` of shape (len - n_train, 1)."""
        return self._pairs(self.n_train, self.n_samples)


# ---- data set entry (neuromark.data.entry.DatasetEntry) ----------------------------------------


class MackeyGlassEntry(Entry):
    """Entry ``mackey_glass``: the series shipped with neuromark (``mackey_glass_tau<T>.npy``,
    ``lyapunov.csv``, ``SHA256SUMS``); ``download`` copies them (no network). Calling it
    builds one forecasting instance (:class:`MackeyGlass`)."""

    name = "mackey_glass"
    citation = CITATION
    shipped = DATA_DIR

    def layout(self, root: Path) -> list[Path]:
        listed = sorted(read_sha256sums(root / SUMS_FILE)) if (root / SUMS_FILE).is_file() else []
        return [root / TABLE_FILE] + [root / n for n in listed if n != TABLE_FILE]

    def verify(self, root: str | os.PathLike[str]) -> None:
        folder = Path(root)
        if not (folder / SUMS_FILE).is_file():
            raise DataError(f"{folder / SUMS_FILE}: checksum manifest missing")
        super().verify(folder)

    def check_file(self, path: Path) -> None:
        if path.suffix == ".npy":
            try:
                np.load(path, mmap_mode="r", allow_pickle=False)
            except (ValueError, OSError) as exc:
                raise DataError(f"{path}: not a readable .npy series: {exc}") from None

    def download(self, root: str | os.PathLike[str]) -> Path:
        import shutil

        folder = Path(root)
        folder.mkdir(parents=True, exist_ok=True)
        for name in [SUMS_FILE, *read_sha256sums(self.shipped / SUMS_FILE)]:
            shutil.copyfile(self.shipped / name, folder / name)
        self.verify(folder)
        return folder

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> MackeyGlass:
        return MackeyGlass(root=Path(root), **options)

    def __call__(self, tau: int = 17, instance: int = 0, *, length: float = 20.0, shift: float = 0.5,
                 root: Path | None = None) -> MackeyGlass:
        return MackeyGlass(tau, instance, length=length, shift=shift, root=root)


MACKEY_GLASS = MackeyGlassEntry()
