"""Where N-MNIST's recordings and labels lie: the two folder layouts in use.

- **Published** (the data set's ``Train.zip`` / ``Test.zip``, unpacked as tonic 1.7.0
  expects them): ``<root>/Train/<digit>/<id>.bin`` and ``<root>/Test/<digit>/<id>.bin``; the
  label is the digit folder (0-9).
- **Label lists** (SLAYER-PyTorch's ``NMNISTsmall``, the 1,000 + 100 recordings in
  ``../shared/realdata/nmnist_small``): ``<root>/<N>.bs2`` recordings (N the MNIST index) and
  one list per split, ``train*.txt`` / ``test*.txt``: a ``#`` header line, then
  ``<N> <label>`` per line (tab or spaces).

:func:`list_samples` finds which layout ``root`` holds and returns ``(file, label)`` per
sample of a split, in a fixed order (published: by digit, then file name; lists: the list's
order). Anything else is a :class:`~neuromark.errors.DataError` naming the folder or file
(and line) and what was expected, before any recording is read.
"""

from __future__ import annotations

import os
from pathlib import Path

from neuromark.data.clips import read_utf8
from neuromark.errors import DataError

#: split -> folder of the published layout.
FOLDERS = {"train": "Train", "test": "Test"}
#: split -> glob of its label list in the list layout.
LIST_GLOBS = {"train": "train*.txt", "test": "test*.txt"}
CLASSES = tuple(str(d) for d in range(10))
_EXPECTED = ("Train/<digit>/<id>.bin and Test/<digit>/<id>.bin (the published archives, unpacked), or "
             "<N>.bs2 recordings with train*.txt / test*.txt label lists (SLAYER's NMNISTsmall)")


def check_split(split: str) -> None:
    if split not in FOLDERS:
        raise DataError(f"N-MNIST split must be one of {sorted(FOLDERS)}, got {split!r}")


def layout_of(root: Path) -> str:
    """``"published"`` or ``"lists"``; a DataError naming ``root`` for anything else."""
    if not root.is_dir():
        raise DataError(f"{root}: no such N-MNIST folder; expected {_EXPECTED}")
    if any((root / f).is_dir() for f in FOLDERS.values()):
        return "published"
    if any(next(root.glob(g), None) for g in LIST_GLOBS.values()):
        return "lists"
    raise DataError(f"{root}: not an N-MNIST folder: neither Train/ and Test/ nor train*.txt / test*.txt "
                    f"label lists; expected {_EXPECTED}")


def list_file(root: Path, split: str) -> Path:
    """The one label list of ``split`` in the list layout."""
    found = sorted(root.glob(LIST_GLOBS[split]))
    if len(found) != 1:
        what = "no" if not found else f"{len(found)} ({', '.join(p.name for p in found)})"
        raise DataError(f"{root}: {what} {LIST_GLOBS[split]} label list(s) for the {split} split; "
                        f"expected exactly one (<N> <label> per line)")
    return found[0]


def _published(root: Path, split: str) -> list[tuple[Path, int]]:
    folder = root / FOLDERS[split]
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder; the published layout has "
                        f"{FOLDERS[split]}/<digit>/<id>.bin")
    out: list[tuple[Path, int]] = []
    for sub in sorted(folder.iterdir()):
        if sub.name.startswith("."):
            continue
        if not sub.is_dir() or sub.name not in CLASSES:
            raise DataError(f"{sub}: not a digit folder 0-9; {FOLDERS[split]}/ holds one folder per class")
        for f in sorted(sub.iterdir()):
            if f.name.startswith("."):
                continue
            if f.suffix != ".bin" or not f.is_file():
                raise DataError(f"{f}: not a .bin recording; {FOLDERS[split]}/{sub.name}/ holds "
                                "<id>.bin files")
            out.append((f, int(sub.name)))
    if not out:
        raise DataError(f"{folder}: no .bin recordings in its digit folders")
    return out


def _listed(root: Path, split: str) -> list[tuple[Path, int]]:
    listing = list_file(root, split)
    out: list[tuple[Path, int]] = []
    lines: list[int] = []
    for number, line in enumerate(read_utf8(listing, "N-MNIST label list").splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise DataError(f"{listing}:{number}: expected '<sample number> <label>', got {line!r}")
        if int(parts[1]) >= len(CLASSES):
            raise DataError(f"{listing}:{number}: label {parts[1]} is not a digit 0-9")
        out.append((root / f"{int(parts[0])}.bs2", int(parts[1])))
        lines.append(number)
    if not out:
        raise DataError(f"{listing}: lists no samples")
    for (f, _), number in zip(out, lines, strict=True):  # every line parsed first
        if not f.is_file():
            raise DataError(f"{f}: missing (listed in {listing.name}, line {number})")
    return out


def list_samples(root: str | os.PathLike[str], split: str) -> list[tuple[Path, int]]:
    """``(recording, label)`` per sample of ``split`` (see the module docstring)."""
    check_split(split)
    folder = Path(root)
    return _published(folder, split) if layout_of(folder) == "published" else _listed(folder, split)


def layout_files(root: str | os.PathLike[str]) -> list[Path]:
    """Every file a complete copy at ``root`` holds (both splits; the lists included)."""
    folder = Path(root)
    files: list[Path] = []
    lists = layout_of(folder) == "lists"
    for split in FOLDERS:
        if lists:
            files.append(list_file(folder, split))
        files += [f for f, _ in list_samples(folder, split)]
    return files
