"""Every N-MNIST recording of a folder, read by neuromark's reader and by tonic's decoder:
equal event for event, or the first file and field that differ.

Usage::

    .venv/bin/python scripts/nmnist_tonic_check.py FOLDER    # e.g. a copy of NMNISTsmall

Prints the files and events compared; exit 1 at the first difference. The tests run the same
comparison on the 40 recordings the repository ships (tests/test_nmnist_reader.py); this script
re-derives the full-set figure of docs/nmnist.md from a folder the user names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from neuromark.benchmarks.nmnist.reader import read_recording  # noqa: E402

FIELDS = ("t", "x", "y", "p")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of N-MNIST .bin/.bs2 recordings")
    args = parser.parse_args(argv)
    import tonic
    from tonic.io import read_mnist_file

    files = sorted([*args.folder.rglob("*.bs2"), *args.folder.rglob("*.bin")])
    if not files:
        parser.error(f"{args.folder}: no .bs2 or .bin recordings")
    events = 0
    for path in files:
        ours = read_recording(path)
        theirs = read_mnist_file(str(path), dtype=tonic.datasets.NMNIST.dtype)
        if len(ours) != len(theirs):
            print(f"{path}: {len(ours)} events here, {len(theirs)} by tonic")
            return 1
        for field in FIELDS:
            if not np.array_equal(ours[field].astype(np.int64), theirs[field].astype(np.int64)):
                print(f"{path}: field {field} differs from tonic's")
                return 1
        events += len(ours)
    print(f"{len(files)} recordings, {events:,} events: equal to tonic {tonic.__version__} "
          "event for event")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
