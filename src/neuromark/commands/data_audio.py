"""``neuromark data cochlea`` and ``neuromark data spoken-digits``: audio to SHD-layout spikes.

Registered by ``neuromark.commands.data`` through :func:`register_data`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from neuromark.commands import add_command
from neuromark.config import jobs_within
from neuromark.io_atomic import claim_output_file

COCHLEA_DESCRIPTION = """Run every WAV/FLAC/OGG file of IN_DIR through the cochlea model of the
Heidelberg spiking data sets (700 channels) and write OUT.h5 in the SHD layout. Labels come from
--labels CSV (columns file,label[,speaker]) or, without it, from the sub-folder names of IN_DIR (one
class per folder). An existing OUT.h5 is refused unless --overwrite (never the --labels file)."""

SPOKEN_DIGITS_DESCRIPTION = """Synthesise digits 0-9 in English and German with espeak-ng for 24
synthetic speakers, convert them with the cochlea and write train.h5 and test.h5 (held-out speakers)
in the SHD layout plus SHA256SUMS to OUT_DIR. Cached: an up-to-date OUT_DIR is left as it is unless
--force."""


def register_data(data_subparsers: argparse._SubParsersAction) -> None:
    cochlea = add_command(data_subparsers, "cochlea",
                          "convert a folder of audio files to spikes (SHD layout)", COCHLEA_DESCRIPTION)
    cochlea.add_argument("in_dir", type=Path, metavar="IN_DIR")
    cochlea.add_argument("out", type=Path, metavar="OUT.h5")
    cochlea.add_argument("--labels", type=Path, default=None, metavar="CSV",
                         help="CSV with a header: file (relative to IN_DIR), label, optional speaker")
    # The default (None) means SHD's rate, SHD_SAMPLE_RATE; importing it here would load numpy
    # whenever the CLI starts.
    cochlea.add_argument("--sample-rate", type=int, default=None,
                         help="resample the audio to this rate first (default: SHD's 48000 Hz; 0 keeps it)")
    cochlea.add_argument("--seed", type=int, default=0, help="seed of file 0; file i uses seed+i")
    cochlea.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    cochlea.add_argument("--overwrite", action="store_true",
                         help="replace an existing OUT.h5 (never the --labels file)")
    _constants_option(cochlea)
    cochlea.set_defaults(func=_cochlea)

    digits = add_command(data_subparsers, "spoken-digits",
                         "synthesise the English/German spoken-digit corpus (espeak-ng)",
                         SPOKEN_DIGITS_DESCRIPTION)
    digits.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    digits.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    digits.add_argument("--force", action="store_true", help="rebuild even if OUT_DIR is up to date")
    _constants_option(digits)
    digits.set_defaults(func=_spoken_digits)


def _constants_option(parser: argparse.ArgumentParser) -> None:
    # the names of neuromark.processors.cochlea.params.CONSTANTS (not imported: numpy), checked
    # against them by tests/test_cochlea_constants.py
    parser.add_argument("--constants", choices=("lauscher", "paper"), default="lauscher",
                        help="the cochlea's constants: lauscher 1.0.1's (default; the shipped "
                        "corpus) or the paper's Table II (docs/shd.md)")


def _progress(label: str):
    start = time.perf_counter()
    tty = sys.stderr.isatty()

    def report(done: int, total: int) -> None:
        if tty or done == total or done % 50 == 0:
            text = f"{label}: {done}/{total} ({time.perf_counter() - start:.0f} s)"
            print(f"\r{text}" if tty else text, end="" if tty and done < total else "\n",
                  file=sys.stderr, flush=True)

    return report


def _cochlea(args: argparse.Namespace) -> int:
    from neuromark.processors.cochlea.convert import convert_directory
    from neuromark.processors.cochlea.model import SHD_SAMPLE_RATE

    rate = SHD_SAMPLE_RATE if args.sample_rate is None else args.sample_rate or None  # 0: keep
    jobs_within(args.jobs, "--jobs")  # before any file is read
    inside = args.out.exists() and args.out.resolve().is_relative_to(args.in_dir.resolve())
    claim_output_file(args.out, overwrite=args.overwrite, flag="OUT.h5",
                      protected={"the --labels file": args.labels,
                                 "a file of IN_DIR (an input)": args.out if inside else None})
    start = time.perf_counter()
    out = convert_directory(args.in_dir, args.out, labels_csv=args.labels,
                            sample_rate=rate, seed=args.seed, jobs=args.jobs,
                            progress=_progress("cochlea"), cochlea_constants=args.constants)
    print(f"wrote {out} ({time.perf_counter() - start:.1f} s)")
    return 0


def _spoken_digits(args: argparse.Namespace) -> int:
    from neuromark.benchmarks.shd.generator import build_corpus

    jobs_within(args.jobs, "--jobs")
    start = time.perf_counter()
    paths = build_corpus(args.out_dir, jobs=args.jobs, force=args.force,
                         progress=_progress("spoken digits"), cochlea_constants=args.constants)
    for split, path in paths.items():
        print(f"{split}: {path}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """No top-level verb: the subcommands live under ``neuromark data`` (see :func:`register_data`)."""
