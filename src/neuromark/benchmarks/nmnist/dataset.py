"""N-MNIST (Orchard et al. 2015): recorded saccades of MNIST digits on a 34 x 34 ATIS sensor,
as event frames for classification.

A split is read from either layout of :mod:`~neuromark.benchmarks.nmnist.layout` (the
published ``Train/``/``Test/`` folders or SLAYER's label lists); without ``root`` it is the
small real subset shipped with neuromark (:data:`SHIPPED_DIR`: 10 training and 30 test
recordings of SLAYER's ``NMNISTsmall``; licence and provenance in its ``PROVENANCE.md``).

:class:`NMNIST` yields ``(frames, label)``: frames float32 ``(T, 2, 34, 34)`` (time bin,
polarity OFF/ON, y, x) of event counts, binned by the kernel's
:func:`~neuromark.data.binning.bin_flat` (bin ``k`` holds ``k * dt_us <= t < (k + 1) *
dt_us``; ``T = ceil(t_max_us / dt_us)``; an event at exactly ``t_max_us`` goes in the last
bin). An event after ``t_max_us`` is an error naming the file, unless ``late: drop`` drops
and counts it (:attr:`NMNIST.dropped_late`). Every recording of the split is decoded and
checked (:mod:`~neuromark.benchmarks.nmnist.reader`) when the split is first used, before
any sample is returned.

Nothing downloads in ``__init__``: :meth:`NMNISTEntry.download` fetches the published
archives (Mendeley Data, doi:10.17632/468j46mzdv.1; URLs and md5 as tonic 1.7.0's
``tonic.datasets.NMNIST`` pins them; no sha256 is published) and unpacks them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuromark.benchmarks.nmnist.layout import CLASSES, FOLDERS, check_split, layout_files, list_samples
from neuromark.benchmarks.nmnist.reader import SENSOR_SIZE, read_recording
from neuromark.data.binning import bin_flat, n_bins
from neuromark.data.download import fetch, unpack
from neuromark.data.entry import Entry
from neuromark.errors import ConfigError, DataError

#: The real subset shipped in the repository (SLAYER's list layout).
SHIPPED_DIR = Path(__file__).resolve().parent / "files" / "nmnist_subset"
_BASE = "https://data.mendeley.com/public-files/datasets/468j46mzdv/files/"
#: split -> (URL, archive name, md5): as tonic 1.7.0 (``tonic/datasets/nmnist.py``) publishes them.
ARCHIVES: dict[str, tuple[str, str, str]] = {
    "train": (_BASE + "39c25547-014b-4137-a934-9d29fa53c7a0/file_downloaded", "train.zip",
              "20959b8e626244a1b502305a9e6e2031"),
    "test": (_BASE + "05a4d654-7e03-4c15-bdfa-9bb2bcbea494/file_downloaded", "test.zip",
             "69ca8762b2fe404d9b9bad1103e97832"),
}
CITATION = """@article{orchard2015converting,
  title={Converting Static Image Datasets to Spiking Neuromorphic Datasets Using Saccades},
  author={Orchard, Garrick and Jayawant, Ajinkya and Cohen, Gregory K. and Thakor, Nitish},
  journal={Frontiers in Neuroscience}, volume={9}, pages={437}, year={2015},
  doi={10.3389/fnins.2015.00437}}"""
#: Channels of the flattened frame: polarity x y x x.
CHANNELS = SENSOR_SIZE[0] * SENSOR_SIZE[1] * SENSOR_SIZE[2]


def frames_of(events: np.ndarray, *, dt_us: int, t_max_us: int, name: str = "<memory>") -> np.ndarray:
    """Event counts ``(T, 2, 34, 34)`` float32 of one recording's events (binned by
    :func:`~neuromark.data.binning.bin_flat`; an event after ``t_max_us`` is a DataError)."""
    width, height, _ = SENSOR_SIZE
    unit = (events["p"].astype(np.int64) * height + events["y"]) * width + events["x"]
    offsets = np.array([0, len(events)], np.int64)
    flat = bin_flat(events["t"], unit, offsets, dt_us=dt_us, t_max_us=t_max_us, channels=CHANNELS, name=name)
    return flat.reshape(-1, SENSOR_SIZE[2], height, width)


class NMNIST:
    """One split: ``(frames (T, 2, 34, 34) float32, label)`` per recording (see module)."""

    citation = CITATION
    classes = CLASSES

    def __init__(self, root: str | os.PathLike[str] | None = None, split: str = "test", *,
                 dt_us: int = 10_000, t_max_us: int = 340_000,
                 late: Literal["error", "drop"] = "error") -> None:
        check_split(split)
        for arg, value in (("dt_us", dt_us), ("t_max_us", t_max_us)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ConfigError(f"N-MNIST {arg} must be a positive integer (microseconds), got {value!r}")
        if t_max_us < dt_us:
            raise ConfigError(f"N-MNIST t_max_us={t_max_us} must be >= dt_us={dt_us} (at least one bin)")
        if late not in ("error", "drop"):
            raise ConfigError(f"N-MNIST late must be 'error' or 'drop', got {late!r}")
        self.root = Path(root) if root is not None else SHIPPED_DIR
        self.split, self.dt_us, self.t_max_us, self.late = split, int(dt_us), int(t_max_us), late
        self.input_shape = (n_bins(self.dt_us, self.t_max_us), SENSOR_SIZE[2], SENSOR_SIZE[1], SENSOR_SIZE[0])
        self._samples: list[tuple[Path, int]] | None = None
        self._events: list[np.ndarray] = []
        #: events after ``t_max_us`` dropped (``late: drop``), per file
        self.dropped_late: dict[str, int] = {}

    @property
    def path(self) -> Path:
        """The data folder (``root``)."""
        return self.root

    @property
    def samples(self) -> list[tuple[Path, int]]:
        """``(recording, label)`` per sample; every recording is decoded and checked on
        first use (a missing folder or a malformed file is a DataError then)."""
        if self._samples is None:
            samples = list_samples(self.root, self.split)
            events = []
            for f, _ in samples:
                ev = read_recording(f)
                late = ev["t"] > self.t_max_us
                if late.any():
                    if self.late == "error":
                        first = int(np.flatnonzero(late)[0])
                        raise DataError(f"{f}: event {first} at {int(ev['t'][first])} us is after t_max_us="
                                        f"{self.t_max_us} ({int(late.sum())} such event(s)); raise "
                                        "t_max_us, or drop and count them with late: drop")
                    self.dropped_late[f.name] = int(late.sum())
                    ev = ev[~late]
                events.append(ev)
            self._samples, self._events = samples, events
        return self._samples

    @property
    def num_classes(self) -> int:
        return len(CLASSES)

    @property
    def targets(self) -> list[int]:
        return [label for _, label in self.samples]

    def __len__(self) -> int:
        return len(self.samples)

    def events(self, index: int) -> np.ndarray:
        """The decoded events of sample ``index`` (t µs; late ones dropped with ``late: drop``)."""
        self.samples  # noqa: B018 (decodes every file once)
        return self._events[index]

    def __getitem__(self, index: int) -> tuple[Any, int]:
        import torch

        path, label = self.samples[index]
        frames = frames_of(self.events(index), dt_us=self.dt_us, t_max_us=self.t_max_us, name=str(path))
        return torch.from_numpy(frames), label


class NMNISTEntry(Entry):
    """Entry ``nmnist``: either layout at ``root`` (default: the shipped subset)."""

    name = "nmnist"
    citation = CITATION
    urls = tuple(url for url, _, _ in ARCHIVES.values())
    manifest = {name: f"md5:{md5}" for _, name, md5 in ARCHIVES.values()}

    def layout(self, root: Path) -> list[Path]:
        return layout_files(root)

    def check_file(self, path: Path) -> None:
        if path.suffix in (".bin", ".bs2"):
            read_recording(path)

    def download(self, root: str | os.PathLike[str]) -> Path:
        """Fetch both published archives into ``root`` (md5-checked), unpack them into the
        published layout and record the files' sha256 (network; never called by tests)."""
        folder = Path(root)
        for split, (url, name, md5) in ARCHIVES.items():
            archive = fetch(url, folder, md5=md5, filename=name)
            unpack(archive, folder)
            if not (folder / FOLDERS[split]).is_dir():
                raise DataError(f"{archive}: did not unpack into {folder / FOLDERS[split]}")
        return self.record(folder)

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> NMNIST:
        return self(split, root=Path(root), **options)

    def __call__(self, split: str = "test", *, root: str | os.PathLike[str] | None = None,
                 dt_us: int = 10_000, t_max_us: int = 340_000,
                 late: Literal["error", "drop"] = "error") -> NMNIST:
        """One split (``root``: a folder in either layout; default: the shipped subset)."""
        return NMNIST(root, split, dt_us=dt_us, t_max_us=t_max_us, late=late)


NMNIST_ENTRY = NMNISTEntry()
