"""``neuromark data spoken-digits OUT_DIR``: the spoken-digit corpus synthesised (espeak-ng
through the cochlea, SHD layout; :mod:`neuromark.benchmarks.shd.generator`).

The family's ``data_commands`` entry: ``neuromark data`` calls :func:`register` with its
subparsers.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from neuromark.commands import add_command
from neuromark.commands.data import add_cochlea_constants_option, progress_reporter
from neuromark.config import jobs_within

SPOKEN_DIGITS_DESCRIPTION = """Synthesise digits 0-9 in English and German with espeak-ng for 24
synthetic speakers, convert them with the cochlea and write train.h5 and test.h5 (held-out speakers)
in the SHD layout plus SHA256SUMS to OUT_DIR. Cached: an up-to-date OUT_DIR is left as it is unless
--force."""


def register(data_subparsers: argparse._SubParsersAction) -> None:
    """Add ``spoken-digits`` to the ``neuromark data`` group."""
    digits = add_command(data_subparsers, "spoken-digits",
                         "synthesise the English/German spoken-digit corpus (espeak-ng)",
                         SPOKEN_DIGITS_DESCRIPTION)
    digits.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    digits.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    digits.add_argument("--force", action="store_true", help="rebuild even if OUT_DIR is up to date")
    add_cochlea_constants_option(digits)
    digits.set_defaults(func=_spoken_digits)


def _spoken_digits(args: argparse.Namespace) -> int:
    from neuromark.benchmarks.shd.generator import build_corpus

    jobs_within(args.jobs, "--jobs")
    start = time.perf_counter()
    paths = build_corpus(args.out_dir, jobs=args.jobs, force=args.force,
                         progress=progress_reporter("spoken digits"), cochlea_constants=args.constants)
    for split, path in paths.items():
        print(f"{split}: {path}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0
