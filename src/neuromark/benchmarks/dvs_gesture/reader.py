"""IBM DVS128 Gesture (Amir et al. 2017) in tonic's preprocessed layout, and the frames
NeuroBench's example feeds its network.

Layout (tonic 1.7.0 ``datasets/dvsgesture.py``): ``<root>/ibmGesture{Train,Test}/
user<NN>_<lighting>/<label>.npy``; each file an unstructured ``(N, 4)`` array of columns
``x, y, p, t`` with ``t`` in **milliseconds** (tonic multiplies by 1000 on load). The label is
the file stem (0-10). Samples are in sorted order (folder, then label), unlike tonic, whose
file order within a folder is ``os.walk``'s. Events come as
:data:`~neuromark.data.event_dtypes.CAMERA_EVENT_DTYPE` (t µs).

:class:`DVSGesture` yields ``(frames, label)``: ``Denoise(10 ms)``, ``Downsample(0.25)``,
``ToFrame((32, 32, 2), n_time_bins)`` as float32 ``(n_time_bins, 2, 32, 32)`` (kernels in
:mod:`neuromark.benchmarks.dvs_gesture.transforms`). Nothing downloads in ``__init__``: call
:meth:`DVSGesture.download` (figshare archives, md5-checked as tonic 1.7.0 pins them;
no sha256 is published, so :data:`ARCHIVES` holds None there). figshare's firewall may refuse
scripted downloads of ``figshare.com/ndownloader``; ``api.figshare.com/v2/file/download/<id>``
(the same file ids) is the alternative (:data:`API_URL`), verified by the same md5.
"""

from __future__ import annotations

import os
import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from neuromark.benchmarks.dvs_gesture.encoder_cost import dvs_frames_cost
from neuromark.benchmarks.dvs_gesture.transforms import denoise, downsample, to_frame_time_bins
from neuromark.config import Seed, StrictModel
from neuromark.data.download import fetch
from neuromark.data.entry import Entry, synthesize_into
from neuromark.data.event_contract import check_events
from neuromark.data.event_dtypes import CAMERA_EVENT_DTYPE
from neuromark.errors import DataError
from neuromark.registry import generators

CLASSES = ("hand clap", "right hand wave", "left hand wave", "right arm cw", "right arm ccw", "left arm cw",
           "left arm ccw", "arm roll", "air drums", "air guitar", "other")
SENSOR_SIZE = (128, 128, 2)
FOLDERS = {"train": "ibmGestureTrain", "test": "ibmGestureTest"}
#: split -> (URL, archive name, md5 as tonic 1.7.0 pins it, sha256: none published).
ARCHIVES: dict[str, tuple[str, str, str, str | None]] = {
    "train": ("https://figshare.com/ndownloader/files/38022171", "ibmGestureTrain.tar.gz",
              "3a8f0d4120a166bac7591f77409cb105", None),
    "test": ("https://figshare.com/ndownloader/files/38020584", "ibmGestureTest.tar.gz",
             "56070e45dadaa85fff82e0fbfbc06de5", None)}
#: The same files through figshare's API (``{id}`` = the number ending the URL above).
API_URL = "https://api.figshare.com/v2/file/download/{id}"
CITATION = """@inproceedings{amir2017low,
  title={A Low Power, Fully Event-Based Gesture Recognition System},
  author={Amir, Arnon and Taba, Brian and Berg, David and others},
  booktitle={CVPR}, pages={7243--7252}, year={2017}}"""


def read_sample(path: str | os.PathLike[str], on_invalid: str = "error") -> np.ndarray:
    """One preprocessed ``.npy`` (columns x, y, p, t ms) -> events with t in µs, checked
    against the input contract (:mod:`~neuromark.data.event_contract`: finite, in-range,
    whole-pixel, polarity 0/1, time-ordered; ``on_invalid="drop"`` drops the invalid records)."""
    return read_checked(path, on_invalid)[0]


def read_checked(path: str | os.PathLike[str],
                 on_invalid: str = "error") -> tuple[np.ndarray, dict[str, int]]:
    """(events, records dropped per rule) of one preprocessed ``.npy``; see :func:`read_sample`."""
    try:
        raw = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"{path}: not a readable .npy event file: {exc}") from None
    if raw.ndim != 2 or raw.shape[1] != 4 or raw.dtype.names is not None:
        raise DataError(f"{path}: expected an unstructured (N, 4) array of x, y, p, t[ms], got "
                        f"shape {raw.shape} dtype {raw.dtype}")
    keep, counts = check_events(path, raw[:, 3].astype(np.float64) * 1000, raw[:, 0], raw[:, 1],
                                width=SENSOR_SIZE[0], height=SENSOR_SIZE[1], on_invalid=on_invalid,
                                p=raw[:, 2])
    raw = raw if keep is None else raw[keep]
    t = raw[:, 3] * 1000  # in the file's dtype, as tonic does, then cast
    events = np.empty(len(raw), CAMERA_EVENT_DTYPE)
    events["t"], events["x"], events["y"] = t.astype(np.int64), raw[:, 0], raw[:, 1]
    events["p"] = raw[:, 2].astype(bool)
    return events, counts


def write_sample(path: str | os.PathLike[str], events: np.ndarray) -> Path:
    """Write events (t µs, multiples of 1000) in the preprocessed layout (int64 columns)."""
    if np.any(np.asarray(events["t"]) % 1000):
        raise ValueError("the preprocessed layout stores t in whole milliseconds")
    cols = [events["x"], events["y"], events["p"], np.asarray(events["t"]) // 1000]
    raw = np.stack(cols, 1).astype(np.int64)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, raw)
    return path


def list_samples(root: str | os.PathLike[str], split: str) -> list[tuple[Path, int, int, str]]:
    """(file, label, user, lighting) of a split, sorted by folder then label."""
    if split not in FOLDERS:
        raise DataError(f"DVS Gesture split must be one of {sorted(FOLDERS)}, got {split!r}")
    folder = Path(root) / FOLDERS[split]
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder; call DVSGesture.download() or write the "
                        "offline surrogate (neuromark.benchmarks.dvs_gesture.generator)")
    out = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        user, _, lighting = sub.name.partition("_")
        if not user.startswith("user") or not user[4:].isdigit():
            raise DataError(f"{sub}: folder name is not user<NN>_<lighting>")
        for f in sorted(sub.glob("*.npy"), key=lambda p: (len(p.stem), p.stem)):
            if not f.stem.isdigit() or int(f.stem) >= len(CLASSES):
                raise DataError(f"{f}: file stem must be a class index 0..{len(CLASSES) - 1}")
            out.append((f, int(f.stem), int(user[4:]), lighting))
    if not out:
        raise DataError(f"{folder}: no samples")
    return out


class DVSGesture:
    """Frames ``(n_time_bins, 2, 32, 32)`` float32 and labels of one split (see module);
    the files are listed on first use."""

    citation = CITATION
    classes = CLASSES

    def __init__(self, root: str | os.PathLike[str], split: str = "test", *, n_time_bins: int = 150,
                 denoise_us: float = 10_000, spatial_factor: float = 0.25,
                 prepare: Callable[[], object] | None = None, on_invalid: str = "error") -> None:
        if split not in FOLDERS:
            raise DataError(f"DVS Gesture split must be one of {sorted(FOLDERS)}, got {split!r}")
        self.root, self.split = Path(root), split
        self._prepare = prepare  # called once before the files are first listed (e.g. synthesis)
        self._samples: list[tuple[Path, int, int, str]] | None = None
        self.on_invalid = on_invalid
        self.invalid_records: dict[str, dict[str, int]] = {}  # dropped per file and rule
        self.n_time_bins, self.denoise_us, self.spatial_factor = n_time_bins, denoise_us, spatial_factor
        self.frame_size = (int(SENSOR_SIZE[0] * spatial_factor), int(SENSOR_SIZE[1] * spatial_factor), 2)
        self.input_shape = (n_time_bins, 2, self.frame_size[1], self.frame_size[0])
        #: events read, events kept by the denoise filter, samples read (for the front-end cost)
        self.seen = [0, 0, 0]

    @property
    def samples(self) -> list[tuple[Path, int, int, str]]:
        """(file, label, user, lighting) per sample, listed on first use (so a config
        validates before the data exist; a missing folder is a :class:`DataError` then)."""
        if self._samples is None:
            if self._prepare is not None:
                self._prepare()
            samples = list_samples(self.root, self.split)
            for f, *_ in samples:  # the input contract, before any work
                counts = read_checked(f, self.on_invalid)[1]
                if counts:
                    self.invalid_records[f.relative_to(self.path).as_posix()] = counts
            self._samples = samples
        return self._samples

    @property
    def path(self) -> Path:
        """The split's folder (``root/ibmGesture{Train,Test}``)."""
        return self.root / FOLDERS[self.split]

    @property
    def num_classes(self) -> int:
        return len(CLASSES)

    @property
    def targets(self) -> list[int]:
        return [s[1] for s in self.samples]

    def __len__(self) -> int:
        return len(self.samples)

    def events(self, index: int) -> np.ndarray:
        """The raw events of sample ``index`` (t µs)."""
        return read_sample(self.samples[index][0], self.on_invalid)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        import torch

        raw = self.events(index)
        clean = denoise(raw, self.denoise_us)
        self.seen = [self.seen[0] + len(raw), self.seen[1] + len(clean), self.seen[2] + 1]
        ev = downsample(clean, self.spatial_factor)
        frames = to_frame_time_bins(ev, self.frame_size, self.n_time_bins)
        return torch.from_numpy(frames.astype(np.float32)), self.samples[index][1]

    def front_end_cost(self) -> Any:
        """The frames' cost (issue 47.4;
        :func:`~neuromark.benchmarks.dvs_gesture.encoder_cost.dvs_frames_cost`) with the mean
        events per sample and the denoise filter's kept fraction over the samples read so far
        (unmeasured before any)."""
        events, kept, samples = self.seen
        return dvs_frames_cost(self.frame_size, self.n_time_bins, self.denoise_us, self.spatial_factor,
                               events / samples if samples else None,
                               kept / events if events else None)

    def download(self, *, api: bool = False) -> Path:
        """Fetch the split's archive into ``root``, check its md5, unpack it and list its
        samples; returns the split folder. ``api``: through figshare's API URL. Nothing is
        downloaded in ``__init__``; tests use a local archive.

        Raises:
            ChecksumError: the archive's md5 differs (nothing is kept).
            DataError: the URL cannot be opened, or the archive is corrupt or not the layout.
        """
        url, name, md5, sha256 = ARCHIVES[self.split]
        if api:
            url = API_URL.format(id=url.rstrip("/").rsplit("/", 1)[-1])
        archive = fetch(url, self.root, md5=md5, sha256=sha256, filename=name)
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(self.root, filter="data")
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise DataError(f"{archive}: corrupt or truncated archive: {exc}") from None
        self._samples = list_samples(self.root, self.split)  # the unpacked layout, checked
        return self.path


def dvs_gesture(split: str = "test", *, root: str, n_time_bins: int = 150, train_time_bins: int = 25,
                denoise_us: float = 10_000, spatial_factor: float = 0.25,
                prepare: Callable[[], object] | None = None, on_invalid: str = "error") -> DVSGesture:
    """The test split with ``n_time_bins`` (NeuroBench: 150), the training split with
    ``train_time_bins`` (NeuroBench: 25); ``prepare`` runs before the files are first listed."""
    bins = n_time_bins if split == "test" else train_time_bins
    return DVSGesture(root, split, n_time_bins=bins, denoise_us=denoise_us, spatial_factor=spatial_factor,
                      prepare=prepare, on_invalid=on_invalid)


# ---- data set entry (neuromark.data.entry.DatasetEntry) ----------------------------------------


class GestureSurrogate(StrictModel):
    """The surrogate a ``synthesize:`` option writes (11 samples per user;
    :mod:`neuromark.benchmarks.dvs_gesture.generator`)."""

    train_users: int = Field(8, ge=1)
    test_users: int = Field(3, ge=1)
    duration_s: float = Field(1.2, gt=0.05, description="seconds per sample")
    seed: Seed = 0


_SURROGATE_FILE = re.compile(r"ibmGesture(Train|Test)/user\d+_[a-z]+/\d+\.npy")


class DVSGestureEntry(Entry):
    """Entry ``dvs_gesture``: tonic's preprocessed layout at ``root`` (both splits); with
    ``synthesize``, the offline surrogate written there first (on first use)."""

    name = "dvs_gesture"
    citation = CITATION
    urls = tuple(url for url, *_ in ARCHIVES.values())
    manifest = {name: f"md5:{md5}" for _, name, md5, _ in ARCHIVES.values()}

    def layout(self, root: Path) -> list[Path]:
        files: list[Path] = []
        for folder in FOLDERS.values():
            found = sorted((root / folder).glob("user*/*.npy"))
            files += found or [root / folder]  # a missing or empty split folder is named
        return files

    def check_file(self, path: Path) -> None:
        read_sample(path)

    def download(self, root: str | os.PathLike[str]) -> Path:
        for split in FOLDERS:
            DVSGesture(root, split).download()
        return self.record(root)

    def synthesize(self, root: str | os.PathLike[str], **options: Any) -> Path:
        """Write the surrogate (options of :class:`GestureSurrogate`) into ``root``."""
        settings = GestureSurrogate(**options)

        def write(tmp: Path) -> None:
            write_gesture_corpus = generators.get("gestures").write_gesture_corpus

            write_gesture_corpus(tmp, train_users=settings.train_users, test_users=settings.test_users,
                                 duration_s=settings.duration_s, seed=settings.seed)

        return synthesize_into(root, settings.model_dump(), write, what="DVS-Gesture surrogate",
                               legacy=_legacy_surrogate)

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> DVSGesture:
        return self(split, root=Path(root), **options)

    def __call__(self, split: str = "test", *, root: Path, n_time_bins: int = 150,
                 train_time_bins: int = 25, denoise_us: float = 10_000, spatial_factor: float = 0.25,
                 synthesize: GestureSurrogate | None = None,
                 on_invalid: Literal["error", "drop"] = "error") -> DVSGesture:
        """The test split with ``n_time_bins`` (NeuroBench: 150), the training split with
        ``train_time_bins`` (NeuroBench: 25); with ``synthesize``, the surrogate is written
        into ``root`` when the files are first listed (never at validation). ``on_invalid``:
        records that break the input contract are an error, or dropped and counted."""
        options = None if synthesize is None else GestureSurrogate.model_validate(synthesize).model_dump()
        prepare = None if options is None else (lambda: self.synthesize(root, **options))
        return dvs_gesture(split, root=str(root), n_time_bins=n_time_bins,
                           train_time_bins=train_time_bins, denoise_us=denoise_us,
                           spatial_factor=spatial_factor, prepare=prepare, on_invalid=on_invalid)


def _legacy_surrogate(root: Path) -> set[str]:
    """Files of a surrogate folder written before marks listed their files."""
    names = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    return {n for n in names if _SURROGATE_FILE.fullmatch(n)} | {".complete"}


DVS_GESTURE = DVSGestureEntry()
