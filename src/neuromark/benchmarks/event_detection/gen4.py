"""Getting Prophesee's Gen4 (1 Mpx) automotive detection data set, and checking a copy.

Perot et al., "Learning to Detect Objects with a 1 Megapixel Event Camera", NeurIPS 2020
(arXiv 2009.13436): 1280x720 ``.dat`` events in 60-s cuts, ``<stem>_bbox.npy`` labels,
folders ``train/``, ``val/``, ``test/`` (readers: :mod:`neuromark.data.prophesee`).

Two sources, neither of which Prophesee publishes a checksum for:

- **the mini data set** (:data:`MINI`; 4 train, 1 val, 1 test file, about 23 GB zipped):
  one zip at a fixed URL. Its sha256 is the one tonic pins for the same URL (tonic's
  prototype ``Gen4AutomotiveDetectionMini``), not a figure Prophesee publishes; we did not
  download the file to confirm it (no network here). :func:`download_mini` checks it
  after the download and keeps nothing that differs.
- **the full data set** (about 1.2 TB as 7z archives) is distributed through a BitTorrent
  file (:data:`TORRENT_URL`) after accepting Prophesee's terms on its dataset page
  (:data:`DATASET_PAGE`). The torrent protocol checks every piece against the hashes the
  ``.torrent`` carries; the ``.torrent`` itself has no published checksum, so it is not
  fetched here. Get it by hand, unpack with ``7z x``, then run :func:`verify_layout`.

Without published checksums, :func:`verify_layout` checks what can be checked offline: the
split folders, a parseable 1280x720 CD-event header and a whole number of 8-byte records
in every ``.dat``, a readable box file beside each one (or its absence reported, as the
peer skips 4 unlabelled test files). Nothing here runs on import, and tests never touch the
network.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuromark.data.download import fetch, unpack
from neuromark.data.entry import Entry, synthesize_into
from neuromark.data.prophesee import read_boxes, read_dat_header
from neuromark.errors import DataError
from neuromark.registry import generators

DATASET_PAGE = "https://www.prophesee.ai/2020/11/24/automotive-megapixel-event-based-dataset/"
TORRENT_URL = ("https://dataset.prophesee.ai/index.php/s/8HY0Bv4mOU4RzBm/download?path=%2F"
               "&files=Large_Automotive_Detection_Dataset.torrent")
SENSOR = (1280, 720)
SPLITS = ("train", "val", "test")
CITATION = """@inproceedings{perot2020learning,
  title={Learning to Detect Objects with a 1 Megapixel Event Camera},
  author={Perot, Etienne and de Tournemire, Pierre and Nitti, Davide and Masci, Jonathan and Sironi, Amos},
  booktitle={NeurIPS}, year={2020}}"""


@dataclass(frozen=True)
class Archive:
    """One downloadable file: URL, file name, checksums (None: not known) and the folder it
    unpacks to (relative to the download folder)."""

    url: str
    filename: str
    sha256: str | None
    md5: str | None
    folder: str


#: The mini data set (sha256 as tonic pins it; Prophesee publishes none).
MINI = Archive("https://dataset.prophesee.ai/index.php/s/ScqMu02G5pdYKPh/download", "mini_dataset.zip",
               "a13fb1240c19f2e1dbf453cecbb9e0c3ac9a7a5ea3cfc5a4f88760fff4977449", None, "mini_dataset")


def download_mini(dest: str | os.PathLike[str], *, archive: Archive | None = None) -> Path:
    """Fetch the mini data set into ``dest``, check its sha256, unpack it and check the
    layout; returns the data folder (``dest/mini_dataset``, holding train/val/test).

    Never called by neuromark itself or its tests (about 23 GB).

    Raises:
        ChecksumError: the download's sha256 differs (nothing is kept).
        DataError: the URL cannot be opened, or the unpacked folder is not Gen4's layout.
    """
    archive = archive or MINI
    path = fetch(archive.url, dest, sha256=archive.sha256, md5=archive.md5, filename=archive.filename)
    unpack(path, dest)
    root = Path(dest) / archive.folder
    verify_layout(root)
    return root


@dataclass
class LayoutReport:
    """What :func:`verify_layout` found: ``.dat`` files per split, and those without labels."""

    files: dict[str, int] = field(default_factory=dict)
    unlabelled: list[Path] = field(default_factory=list)


def verify_layout(root: str | os.PathLike[str], *, sensor: tuple[int, int] = SENSOR,
                  splits: tuple[str, ...] = SPLITS) -> LayoutReport:
    """Check an unpacked copy at ``root`` (``<split>/<stem>_td.dat`` + ``<stem>_bbox.npy``):
    each split folder present, each ``.dat`` a CD-event file of ``sensor`` (W, H) pixels
    with whole 8-byte records, each box file readable. A ``.dat`` without a box file is
    listed in the report, not an error (the peer skips such test files).

    Raises:
        DataError: naming the first folder or file that is missing or malformed.
    """
    base = Path(root)
    report = LayoutReport()
    for split in splits:
        folder = base / split
        if not folder.is_dir():
            raise DataError(f"{folder}: no such folder (expected {', '.join(splits)} under {base})")
        dats = sorted(folder.glob("*_td.dat"))
        if not dats:
            raise DataError(f"{folder}: no *_td.dat files")
        for dat in dats:
            _check_dat(dat, sensor)
            boxes = dat.with_name(dat.name[:-len("_td.dat")] + "_bbox.npy")
            if boxes.is_file():
                read_boxes(boxes)
            else:
                report.unlabelled.append(dat)
        report.files[split] = len(dats)
    return report


def _check_dat(path: Path, sensor: tuple[int, int]) -> None:
    header = read_dat_header(path)
    if (header.width, header.height) != sensor:
        raise DataError(f"{path}: header says {header.width}x{header.height}, expected "
                        f"{sensor[0]}x{sensor[1]} (Gen4 1 Mpx)")
    size = path.stat().st_size - header.offset
    if size % 8:
        raise DataError(f"{path}: {size} bytes of events is not a whole number of 8-byte records "
                        "(truncated download?)")


# ---- data set entry (neuromark.data.entry.DatasetEntry) ----------------------------------------

_SCENE_FILE = re.compile(r"(train|val|test)/scene_\d+_[a-z]+_\d+_(td\.dat|bbox\.npy)")


class Gen4Entry(Entry):
    """Entry of the detection data: Gen4's layout (``<split>/<stem>_td.dat`` and
    ``<stem>_bbox.npy``) at ``root``, any sensor size the ``.dat`` headers declare; with
    ``synthesize``, the offline driving scenes of :mod:`neuromark.synth.camera_events`."""

    name = "gen4"
    citation = CITATION
    urls = (MINI.url,)
    manifest = {MINI.filename: f"sha256:{MINI.sha256}"}

    def layout(self, root: Path) -> list[Path]:
        files: list[Path] = []
        for split in SPLITS:
            for dat in sorted((root / split).glob("*_td.dat")):
                files.append(dat)
                boxes = dat.with_name(dat.name[:-len("_td.dat")] + "_bbox.npy")
                if boxes.is_file() or split != "test":  # the peer skips unlabelled test files
                    files.append(boxes)
        return files or [root / "test"]

    def check_file(self, path: Path) -> None:
        if path.suffix == ".dat":
            header = read_dat_header(path)
            _check_dat(path, (header.width, header.height))
        else:
            read_boxes(path)

    def download(self, root: str | os.PathLike[str]) -> Path:
        """The mini data set (about 23 GB) into ``root``; returns ``root/mini_dataset``."""
        return self.record(download_mini(root))

    def synthesize(self, root: str | os.PathLike[str], *, files: dict[str, int] | None = None,
                   duration_s: float = 3.0, height: int = 72, width: int = 128, seed: int = 0) -> Path:
        """Write seeded driving scenes (``files``: per split, default train 6, test 2)."""
        counts = dict(files or {"train": 6, "test": 2})
        recipe = {"files": counts, "duration_s": float(duration_s), "height": height, "width": width,
                  "seed": seed}

        def write(tmp: Path) -> None:
            write_detection_files = generators.get("camera_events").write_detection_files

            write_detection_files(tmp, files=counts, duration_s=duration_s, height=height,
                                  width=width, seed=seed)

        return synthesize_into(root, recipe, write, what="driving-scene", legacy=_legacy_scenes)

    def load(self, root: str | os.PathLike[str], split: str = "test", **options: Any) -> Any:
        """``(events, boxes)`` per labelled file of ``split`` (tests; the detection task
        streams the files itself)."""
        from neuromark.data.prophesee import read_dat

        pairs = [p for p in self.layout(Path(root)) if p.parent.name == split and p.suffix == ".dat"]
        return [(read_dat(p), read_boxes(p.with_name(p.name[:-len("_td.dat")] + "_bbox.npy")))
                for p in pairs]


def _legacy_scenes(root: Path) -> set[str]:
    names = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    return {n for n in names if _SCENE_FILE.fullmatch(n)} | {".complete"}


GEN4 = Gen4Entry()
