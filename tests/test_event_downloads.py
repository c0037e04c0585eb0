"""Download code of the event-vision data sets, checked offline: each fetch goes to a tiny
local archive (the URL table monkeypatched to ``file://``), verified by its checksum, and a
wrong checksum keeps nothing. Gen4's layout check on tiny files in the real layout."""

from __future__ import annotations

import hashlib
import tarfile
import zipfile

import numpy as np
import pytest

from neuromark.benchmarks.dvs_gesture import reader as dvs_gesture
from neuromark.benchmarks.event_detection import gen4
from neuromark.data.event_dtypes import make_camera_events
from neuromark.data.prophesee import make_boxes, write_boxes, write_dat
from neuromark.errors import ChecksumError, DataError


def _gen4_files(folder, *, width=1280, height=720, labelled=True):
    folder.mkdir(parents=True)
    ev = make_camera_events([0, 10, 20], [1, 2, width - 1], [3, 4, height - 1], [0, 1, 1])
    write_dat(folder / "moorea_000_td.dat", ev, width=width, height=height)
    if labelled:
        write_boxes(folder / "moorea_000_bbox.npy", make_boxes([10], 5, 6, 30, 40, 2))


def _mini_zip(tmp_path):
    src = tmp_path / "src"
    for split in gen4.SPLITS:
        _gen4_files(src / "mini_dataset" / split, labelled=split != "test")
    archive = tmp_path / "served" / "mini_dataset.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as z:
        for f in sorted(src.rglob("*.*")):
            z.write(f, f.relative_to(src).as_posix())
    return archive


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_gen4_mini_download_verified(tmp_path):
    archive = _mini_zip(tmp_path)
    good = gen4.Archive(archive.as_uri(), "mini_dataset.zip", _sha256(archive), None, "mini_dataset")
    root = gen4.download_mini(tmp_path / "dl", archive=good)
    assert root == tmp_path / "dl" / "mini_dataset" and (root / "train" / "moorea_000_td.dat").is_file()
    report = gen4.verify_layout(root)
    assert report.files == {"train": 1, "val": 1, "test": 1}
    assert [p.name for p in report.unlabelled] == ["moorea_000_td.dat"]  # the test file has no boxes
    bad = gen4.Archive(archive.as_uri(), "mini_dataset.zip", "0" * 64, None, "mini_dataset")
    with pytest.raises(ChecksumError, match="sha256 is"):
        gen4.download_mini(tmp_path / "dl2", archive=bad)
    assert not (tmp_path / "dl2" / "mini_dataset.zip").exists()  # nothing kept
    assert gen4.MINI.sha256 is not None and len(gen4.MINI.sha256) == 64


def test_gen4_layout_errors(tmp_path):
    _gen4_files(tmp_path / "a" / "test", width=640, height=360)
    with pytest.raises(DataError, match="640x360, expected 1280x720"):
        gen4.verify_layout(tmp_path / "a", splits=("test",))
    _gen4_files(tmp_path / "b" / "test")
    with pytest.raises(DataError, match="b/train: no such folder"):
        gen4.verify_layout(tmp_path / "b")
    dat = tmp_path / "b" / "test" / "moorea_000_td.dat"
    dat.write_bytes(dat.read_bytes()[:-3])
    with pytest.raises(DataError, match="whole number of 8-byte records"):
        gen4.verify_layout(tmp_path / "b", splits=("test",))


def _gesture_tar(tmp_path):
    raw = np.array([[1, 2, 1, 0], [3, 4, 0, 5], [5, 6, 1, 9]], dtype=np.int64)
    folder = tmp_path / "src" / "ibmGestureTest" / "user24_led"
    folder.mkdir(parents=True)
    for label in (0, 3):
        np.save(folder / f"{label}.npy", raw)
    archive = tmp_path / "served" / "ibmGestureTest.tar.gz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "src" / "ibmGestureTest", "ibmGestureTest")
    return archive


def test_dvs_gesture_download_verified(tmp_path, monkeypatch):
    archive = _gesture_tar(tmp_path)
    md5 = hashlib.md5(archive.read_bytes()).hexdigest()
    monkeypatch.setitem(dvs_gesture.ARCHIVES, "test", (archive.as_uri(), "ibmGestureTest.tar.gz", md5, None))
    data = dvs_gesture.DVSGesture(tmp_path / "root", "test")
    assert data.download() == tmp_path / "root" / "ibmGestureTest"
    assert data.targets == [0, 3] and len(data.events(1)) == 3
    wrong = (archive.as_uri(), "ibmGestureTest.tar.gz", "0" * 32, None)
    monkeypatch.setitem(dvs_gesture.ARCHIVES, "test", wrong)
    other = dvs_gesture.DVSGesture(tmp_path / "root2", "test")
    with pytest.raises(ChecksumError, match="md5 is"):
        other.download()
    assert not (tmp_path / "root2" / "ibmGestureTest").exists()
    assert not (tmp_path / "root2" / "ibmGestureTest.tar.gz").exists()
    # the published md5s, as tonic 1.7.0 pins them
    assert dvs_gesture.ARCHIVES["train"][2] == "3a8f0d4120a166bac7591f77409cb105"
