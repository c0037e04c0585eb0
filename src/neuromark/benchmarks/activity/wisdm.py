"""WISDM smartwatch activity windows (NeHAR): the raw UCI 507 release, or NeuroBench's arrays.

Data set entry ``wisdm`` (:data:`WISDM`); each split yields ``(x, label)`` with ``x`` float32
``(window, 6)``: watch accelerometer x, y, z then gyroscope x, y, z, per 50-ms step (20 Hz),
and ``label`` the index in ``classes`` (NeuroBench's order P, O, F, Q, R, G, S: dribbling,
catch, typing, writing, clapping, brushing teeth, folding clothes).

Sources (``source`` option):

- ``raw`` (default): ``wisdm-dataset/raw/...`` parsed, checked, resampled and joined as
  :mod:`neuromark.benchmarks.activity.wisdm_raw` documents; every dropped row counted per rule
  (:meth:`WisdmWindows.data_report`, in the results' ``details.data_report``);
- ``npz``: a released array file in ``root`` (``file``: ``watch_subset2_40.npz`` of
  neurobench 2.3.0, or ``subset_watch_2s_gho.npz`` of its unmerged dataset branch), keys
  ``arr_0..arr_5`` = x_train, x_val, x_test, y_train, y_val, y_test, ``y`` one-hot or
  integer; the file's own split (results on neurobench's exact data).

Splits of the raw source (``split_by``): ``subject`` (recommended: no subject in two
splits, :mod:`neuromark.data.splits`) or ``window`` (NeuroBench's seeded 60/20/20,
:func:`window_split`).

Nothing is read before first use; windows of one folder and recipe are read once per
process (both splits share them). The whole set is ~35 MB in memory for the real release.
No checksum is published for the UCI archive or the arrays: :meth:`WisdmEntry.download`
takes the sha256 you trust and records the unpacked files' digests in ``SHA256SUMS``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuromark.benchmarks.activity import wisdm_raw as raw
from neuromark.data.download import fetch, unpack
from neuromark.data.entry import SUMS, Entry, synthesize_into
from neuromark.data.splits import SPLITS, subject_split
from neuromark.errors import DataError
from neuromark.registry import generators

CITATION = ("Weiss, G. M., Yoneda, K., Hayajneh, T. (2019). Smartphone and Smartwatch-Based "
            "Biometrics Using Activities of Daily Living. IEEE Access 7:133190-133202, "
            "doi:10.1109/ACCESS.2019.2940729 (UCI ML Repository 507). NeHAR task: Fra et al. (2022), "
            "Neuromorph. Comput. Eng. 2(1):014006, doi:10.1088/2634-4386/ac4c38")
UCI_URL = ("https://archive.ics.uci.edu/static/public/507/"
           "wisdm+smartphone+and+smartwatch+activity+and+biometrics+dataset.zip")
SIDDHA_URL = "https://huggingface.co/datasets/neuromorphic-polito/siddha/resolve/main/subset_watch_2s_gho.npz"
#: The released arrays and their published shapes (train / val / test windows).
ARRAYS = {"watch_subset2_40.npz": (21720, 7240, 7241), "subset_watch_2s_gho.npz": (18907, 6302, 6303)}
_CACHE: dict[tuple[Any, ...], dict[str, Any]] = {}


def _shuffle_split(n: int, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) indices as scikit-learn's ShuffleSplit draws its first split."""
    n_test = math.ceil(test_size * n)
    n_train = math.floor((1.0 - test_size) * n)
    perm = np.random.RandomState(seed).permutation(n)
    return perm[n_test:n_test + n_train], perm[:n_test]


def window_split(n: int, seed: int = 42) -> dict[str, np.ndarray]:
    """NeuroBench's 60/20/20 window-level split of ``n`` windows (indices per split):
    scikit-learn's ``train_test_split(test_size=0.4, random_state=seed)`` then
    ``(test_size=0.5, random_state=seed)`` on the rest, as NeuroBench's WISDM generator does
    (seed 42), re-implemented: a ``RandomState(seed)`` permutation, the first
    ``ceil(0.4 n)`` windows held out, ``floor(0.6 n)`` kept for training (then the same on
    the held-out part: ``ceil(0.5 m)`` test, ``floor(0.5 m)`` validation)."""
    train, rest = _shuffle_split(n, 0.4, seed)
    valid, test = _shuffle_split(len(rest), 0.5, seed)
    return {"train": train, "valid": rest[valid], "test": rest[test]}


class WisdmWindows:
    """One split of WISDM windows (see the module docstring)."""

    citation = CITATION

    def __init__(self, root: str | os.PathLike[str], split: str = "test", *,
                 source: Literal["raw", "npz"] = "raw", file: str = "watch_subset2_40.npz",
                 device: Literal["watch", "phone"] = "watch",
                 classes: Sequence[str] = raw.NEUROBENCH_CLASSES, window: int = 40,
                 period_ms: int = 50, timestamp_unit: Literal["ns", "us", "ms"] = "ns",
                 split_by: Literal["subject", "window"] = "subject", seed: int | None = None,
                 subjects: Mapping[str, Sequence[int]] | None = None,
                 on_invalid: Literal["error", "drop"] = "error", prepare: Any = None) -> None:
        if split not in SPLITS:
            raise DataError(f"WISDM split must be one of {list(SPLITS)}, got {split!r}")
        unknown = [c for c in classes if c not in raw.ACTIVITIES]
        if unknown or len(set(classes)) != len(classes) or not classes:
            raise DataError(f"WISDM classes {list(classes)}: unknown or repeated activity codes "
                            f"{unknown} (codes: {''.join(raw.ACTIVITIES)})")
        if window < 1 or period_ms < 1:
            raise DataError(f"WISDM window {window} and period_ms {period_ms} must be >= 1")
        self.root, self.split, self.source, self.file = Path(root), split, source, file
        self.device, self.class_codes, self.window = device, tuple(classes), int(window)
        self.period_ms, self.timestamp_unit, self.split_by = int(period_ms), timestamp_unit, split_by
        self.seed = (42 if split_by == "window" else 0) if seed is None else int(seed)
        self.subjects, self.on_invalid, self._prepare = subjects, on_invalid, prepare
        self.input_shape = (self.window, 6)

    # -- what the classification task and the training recipes read --------------------------
    @property
    def classes(self) -> list[str]:
        return [raw.ACTIVITIES[c] for c in self.class_codes]

    @property
    def num_classes(self) -> int:
        return len(self.class_codes)

    @property
    def path(self) -> Path:
        return self.root / self.file if self.source == "npz" else raw.raw_folder(self.root)

    @property
    def recipe_file(self) -> Path:
        """What a training recipe hashes: the folder's ``SHA256SUMS`` when it has one."""
        return self.root / SUMS if (self.root / SUMS).is_file() else self.path

    @property
    def targets(self) -> np.ndarray:
        return self._split()["y"]

    @property
    def subject_ids(self) -> np.ndarray | None:
        return self._split().get("subject")

    @property
    def invalid_records(self) -> dict[str, dict[str, int]]:
        return self._data().get("invalid", {})

    def data_report(self) -> dict[str, Any]:
        """Rows dropped per rule, invalid lines per file, windows per split (raw source)."""
        data = self._data()
        out: dict[str, Any] = {"source": self.source, "windows": len(self)}
        if self.source == "raw":
            out.update(dropped_rows=dict(data["dropped"]), split_by=self.split_by, seed=self.seed,
                       invalid_lines=data["invalid"], windows_total=int(len(data["y"])),
                       subjects={s: sorted(set(data["subject"][i].tolist()))
                                 for s, i in data["splits"].items()})
        return out

    def sibling(self, split: str) -> WisdmWindows:
        """The same data with another split (a training recipe's validation split)."""
        twin = object.__new__(WisdmWindows)
        twin.__dict__.update(self.__dict__, split=split)
        return twin

    def __len__(self) -> int:
        return len(self._split()["y"])

    def __getitem__(self, index: int) -> tuple[Any, int]:
        import torch

        part = self._split()
        return torch.from_numpy(part["x"][index]), int(part["y"][index])

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(x (n, window, 6) float32, y (n,) int64) of the split."""
        part = self._split()
        return part["x"], part["y"]

    # -- reading ----------------------------------------------------------------------------
    def _split(self) -> dict[str, np.ndarray]:
        data = self._data()
        if self.source == "npz":
            return data[self.split]
        index = data["splits"][self.split]
        return {"x": data["x"][index], "y": data["y"][index], "subject": data["subject"][index]}

    def _key(self) -> tuple[Any, ...]:
        sums = self.root / SUMS
        stamp = sums.stat().st_mtime_ns if sums.is_file() else None
        subjects = None if self.subjects is None else \
            tuple((k, tuple(v)) for k, v in sorted(self.subjects.items()))
        return (str(self.root.resolve()), stamp, self.source, self.file, self.device, self.class_codes,
                self.window, self.period_ms, self.timestamp_unit, self.split_by, self.seed, subjects,
                self.on_invalid)

    def _data(self) -> dict[str, Any]:
        if self._prepare is not None:
            self._prepare()
            self._prepare = None
        key = self._key()
        if key not in _CACHE:
            _CACHE.clear()  # one corpus at a time: memory O(one data set)
            _CACHE[key] = read_npz(self.root / self.file, len(self.class_codes)) if self.source == "npz" \
                else self._read_raw()
        return _CACHE[key]

    def _read_raw(self) -> dict[str, Any]:
        folder = raw.raw_folder(self.root)
        subjects = raw.subjects_present(folder, self.device)
        if not subjects:
            raise DataError(f"{folder / self.device}: no data_<subject>_<sensor>_{self.device}.txt "
                            "files (the WISDM raw layout wisdm-dataset/raw/{phone,watch}/{accel,gyro}/)")
        counts, invalid = raw.JoinCounts(), {}
        xs, ys, ss = [], [], []
        for subject in subjects:
            rows = {}
            for sensor in raw.SENSORS:
                path = raw.raw_file(folder, subject, sensor, self.device)
                rows[sensor] = raw.read_sensor_file(path, subject, on_invalid=self.on_invalid,
                                                    timestamp_unit=self.timestamp_unit)
                if rows[sensor].dropped:
                    invalid[path.relative_to(self.root).as_posix()] = rows[sensor].dropped
            for label, code in enumerate(self.class_codes):
                joined = raw.join_activity(rows["accel"], rows["gyro"], code,
                                           self.period_ms * 1_000_000, counts)
                win = raw.windows_of(joined, self.window, counts)
                xs.append(win)
                ys.append(np.full(len(win), label, np.int64))
                ss.append(np.full(len(win), subject, np.int64))
        x = np.concatenate(xs).astype(np.float32)
        y, subject_ids = np.concatenate(ys), np.concatenate(ss)
        if len(y) == 0:
            raise DataError(f"{folder}: no complete {self.window}-step window of classes "
                            f"{''.join(self.class_codes)}")
        splits = window_split(len(y), self.seed) if self.split_by == "window" else \
            subject_split(subject_ids, self.seed, self.subjects, source=str(folder))
        return {"x": x, "y": y, "subject": subject_ids, "splits": splits, "dropped": counts.counts,
                "invalid": invalid}


def read_npz(path: Path, classes: int) -> dict[str, Any]:
    """NeuroBench's released arrays: ``{split: {"x", "y"}}``, checked (keys, shapes, finite,
    labels one-hot or integer in ``0..classes-1``)."""
    if not path.is_file():
        raise DataError(f"{path}: missing (NeuroBench's released WISDM arrays: {', '.join(ARRAYS)})")
    try:
        with np.load(path, allow_pickle=False) as handle:
            arrays = {k: handle[k] for k in (f"arr_{i}" for i in range(6)) if k in handle.files}
    except (OSError, ValueError, EOFError) as exc:
        raise DataError(f"{path}: not a readable .npz file: {exc}") from None
    if len(arrays) != 6:
        raise DataError(f"{path}: expected keys arr_0..arr_5 (x_train, x_val, x_test, y_train, y_val, "
                        f"y_test), found {sorted(arrays)}")
    out = {}
    for i, split in enumerate(SPLITS):
        x, y = arrays[f"arr_{i}"], arrays[f"arr_{i + 3}"]
        where = f"{path}: arr_{i} ({split} x)"
        if x.ndim != 3 or x.shape[2] != 6 or not np.issubdtype(x.dtype, np.number):
            raise DataError(f"{where}: expected (windows, steps, 6) numbers, got {x.shape} {x.dtype}")
        if not np.isfinite(x).all():
            raise DataError(f"{where}: window {int(np.flatnonzero(~np.isfinite(x).all((1, 2)))[0])} "
                            "holds NaN or infinity")
        if y.ndim == 2:
            if y.shape[1] != classes or not (np.isin(y, (0, 1)).all() and (y.sum(1) == 1).all()):
                raise DataError(f"{path}: arr_{i + 3} ({split} y): expected one-hot rows of "
                                f"{classes} classes, got shape {y.shape}")
            y = y.argmax(1)
        if y.shape != (len(x),) or not np.issubdtype(y.dtype, np.integer) or \
                (len(y) and (y.min() < 0 or y.max() >= classes)):
            raise DataError(f"{path}: arr_{i + 3} ({split} y): expected {len(x)} labels in "
                            f"0..{classes - 1}, got shape {y.shape} {y.dtype}")
        out[split] = {"x": x.astype(np.float32), "y": y.astype(np.int64)}
    return out


class WisdmEntry(Entry):
    """Entry ``wisdm``: the raw layout (or released arrays) at ``root``; with
    ``synthesize``, the offline generator writes the raw layout there first."""

    name = "wisdm"
    citation = CITATION
    urls = (UCI_URL, SIDDHA_URL)
    manifest: Mapping[str, str] = {}  # neither UCI nor the arrays' hosts publish a checksum

    def layout(self, root: Path) -> list[Path]:
        folder = raw.raw_folder(root)
        files: list[Path] = []
        for device in raw.DEVICES:
            for subject in raw.subjects_present(folder, device):
                files += [raw.raw_file(folder, subject, s, device) for s in raw.SENSORS]
        files += [root / name for name in ARRAYS if (root / name).is_file()]
        return files or [raw.raw_file(folder, raw.SUBJECTS[0], "accel", "watch")]

    def check_file(self, path: Path) -> None:
        if path.suffix == ".npz":
            read_npz(path, len(raw.NEUROBENCH_CLASSES))
            return
        with open(path, "rb") as handle:
            head = handle.readline()
        subject = int(path.name.split("_")[1])
        try:
            fields = head.decode("utf-8").strip().rstrip(";").split(",")
            ok = len(fields) == 6 and int(fields[0]) == subject and fields[1] in raw.ACTIVITIES
            [float(v) for v in fields[2:]]  # noqa: B018 - numbers or ValueError
        except (UnicodeDecodeError, ValueError):
            ok = False
        if not ok:
            raise DataError(f"{path}:1: {head[:80]!r} is not a WISDM line "
                            f"'{subject},<activity>,<timestamp>,x,y,z;'")

    def download(self, root: str | os.PathLike[str], *, sha256: str | None = None) -> Path:
        """Fetch the UCI archive, check it against ``sha256`` (none is published: give the
        digest you trust), unpack both zip levels, record the files' sha256."""
        if sha256 is None:
            raise DataError(f"{self.name}: UCI publishes no checksum for {UCI_URL}; pass "
                            "download(root, sha256=...) with the digest of a copy you trust")
        folder = Path(root)
        archive = fetch(UCI_URL, folder, sha256=sha256, filename="wisdm.zip")
        for inner in unpack(archive, folder):
            if inner.suffix == ".zip":
                unpack(inner, folder)
        return self.record(folder)

    def synthesize(self, root: str | os.PathLike[str], **options: Any) -> Path:
        """Write the offline surrogate (:mod:`neuromark.benchmarks.activity.generator`, options of its
        ``WisdmSurrogate``) into ``root``."""
        gen = generators.get("wisdm")
        settings = gen.WisdmSurrogate(**options)
        return synthesize_into(root, {"version": gen.VERSION, **settings.model_dump()},
                               lambda tmp: gen.write_wisdm(tmp, settings), what="WISDM surrogate")

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> WisdmWindows:
        return self(split, root=str(root), **options)

    def __call__(self, split: str = "test", *, root: Path = Path("data/wisdm"),
                 source: Literal["raw", "npz"] = "raw", file: str = "watch_subset2_40.npz",
                 device: Literal["watch", "phone"] = "watch",
                 classes: list[str] = list(raw.NEUROBENCH_CLASSES), window: int = 40,  # noqa: B006
                 period_ms: int = 50, timestamp_unit: Literal["ns", "us", "ms"] = "ns",
                 split_by: Literal["subject", "window"] = "subject", seed: int | None = None,
                 subjects: dict[Literal["train", "valid", "test"], list[int]] | None = None,
                 on_invalid: Literal["error", "drop"] = "error",
                 synthesize: dict[str, Any] | None = None) -> WisdmWindows:
        """One split (see :class:`WisdmWindows`; ``seed``: the split's, default 42 for
        ``window`` as NeuroBench, 0 for ``subject``); with ``synthesize`` (options of
        :mod:`neuromark.benchmarks.activity.generator`'s ``WisdmSurrogate``), the surrogate is written into
        ``root`` when the data are first read (never at validation)."""
        prepare = None if synthesize is None else (lambda: self.synthesize(root, **dict(synthesize)))
        return WisdmWindows(root, split, source=source, file=file, device=device, classes=classes,
                            window=window, period_ms=period_ms, timestamp_unit=timestamp_unit,
                            split_by=split_by, seed=seed, subjects=subjects, on_invalid=on_invalid,
                            prepare=prepare)


WISDM = WisdmEntry()
