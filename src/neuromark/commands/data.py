"""``neuromark data``: data-set tools. ``neuromark data info FILE`` summarises a spike file
(SHD ``.h5``) or a camera event file (``.raw``, ``.dat``, ``.npy``;
:mod:`neuromark.data.event_info`); ``neuromark data cochlea IN_DIR OUT.h5`` converts a folder
of audio files to spikes in the SHD layout with the cochlea (:mod:`neuromark.processors.cochlea`).

Benchmark families add subcommands to the group through the ``data_commands`` entries of
their MANIFEST: each is called as ``register(data_subparsers)``, and may use
:func:`progress_reporter` and :func:`add_cochlea_constants_option`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from neuromark import registry
from neuromark.commands import add_command
from neuromark.config import jobs_within
from neuromark.io_atomic import claim_output_file

INFO_DESCRIPTION = """For an HDF5 spike file in the SHD/SSC layout (.h5): the number of samples,
the classes with their counts, the total number of spikes, the time range and the channel range.
For a camera event file (Prophesee .raw EVT 2.0/3.0, Prophesee/ATIS .dat, events .npy): the format,
the sensor and where its size came from, the number of events, the time span and the event rate.
A bad file exits with status 1."""

COCHLEA_DESCRIPTION = """Run every WAV/FLAC/OGG file of IN_DIR through the cochlea model of the
Heidelberg spiking data sets (700 channels) and write OUT.h5 in the SHD layout. Labels come from
--labels CSV (columns file,label[,speaker]) or, without it, from the sub-folder names of IN_DIR (one
class per folder). An existing OUT.h5 is refused unless --overwrite (never the --labels file)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("data", help="inspect and make data sets",
                                   description="Data-set tools.")
    data_sub = parser.add_subparsers(dest="data_command", metavar="DATA_COMMAND")
    info = add_command(data_sub, "info", "summarise a spike file (SHD .h5) or an event file "
                       "(.raw, .dat, .npy)", INFO_DESCRIPTION)
    info.add_argument("file", type=Path, metavar="FILE")
    info.add_argument("--channels", type=int, default=700,
                      help="number of channels of an SHD file (default 700)")
    info.add_argument("--width", type=int, default=None,
                      help="sensor width in pixels, for a .raw file whose header states none")
    info.add_argument("--height", type=int, default=None,
                      help="sensor height in pixels, for a .raw file whose header states none")
    info.add_argument("--json", action="store_true", help="print an event file's description as JSON")
    info.set_defaults(func=_info)
    _register_cochlea(data_sub)
    for name in registry.data_commands.names():
        registry.data_commands.get(name)(data_sub)
    parser.set_defaults(func=lambda args: _no_subcommand(parser))


def _no_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _register_cochlea(data_subparsers: argparse._SubParsersAction) -> None:
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
    add_cochlea_constants_option(cochlea)
    cochlea.set_defaults(func=_cochlea)


def add_cochlea_constants_option(parser: argparse.ArgumentParser) -> None:
    """``--constants {lauscher,paper}``: the cochlea's constants, for a verb that runs it."""
    # the names of neuromark.processors.cochlea.params.CONSTANTS (not imported: numpy), checked
    # against them by tests/test_cochlea_constants.py
    parser.add_argument("--constants", choices=("lauscher", "paper"), default="lauscher",
                        help="the cochlea's constants: lauscher 1.0.1's (default; the shipped "
                        "corpus) or the paper's Table II (docs/shd.md)")


def progress_reporter(label: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback printing ``label: done/total (seconds)`` to stderr:
    rewritten in place on a terminal; in a log, every 50th item and the last."""
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
                            progress=progress_reporter("cochlea"), cochlea_constants=args.constants)
    print(f"wrote {out} ({time.perf_counter() - start:.1f} s)")
    return 0


def format_info(path: Path, channels: int = 700) -> str:
    """The ``data info`` text for a spike file (raises DataError for a bad file)."""
    import numpy as np

    from neuromark.data.hdf5_spikes import read_shd_file

    samples = read_shd_file(path, channels=channels)
    counts = samples.counts()
    lines = [f"file: {path}", f"samples: {len(samples)}"]
    labels, per_class = np.unique(samples.labels, return_counts=True)
    lines.append(f"classes: {labels.size}")
    for label, count in zip(labels.tolist(), per_class.tolist()):
        name = samples.keys[label] if label < len(samples.keys) else "?"
        lines.append(f"  {label:4d} {name:<24s} {count}")
    low, mean, high = ((int(counts.min()), float(counts.mean()), int(counts.max()))
                       if counts.size else (0, 0.0, 0))
    lines.append(f"spikes: {int(counts.sum())} (per sample: min {low}, mean {mean:.1f}, max {high})")
    if samples.times.size:
        lines.append(f"time range: {samples.times.min():.6f} .. {samples.times.max():.6f} s")
        lines.append(f"channel range: {int(samples.units.min())} .. {int(samples.units.max())} "
                     f"(of {channels})")
    else:
        lines.append("time range: (no spikes)")
        lines.append("channel range: (no spikes)")
    if samples.speakers is not None and samples.speakers.size:
        lines.append(f"speakers: {np.unique(samples.speakers).size}")
    return "\n".join(lines)


def _info(args: argparse.Namespace) -> int:
    from neuromark.data.event_info import EVENT_SUFFIXES

    if args.file.suffix.lower() in EVENT_SUFFIXES:
        import json

        from neuromark.data.event_info import describe_event_file, format_event_info

        info = describe_event_file(args.file, width=args.width, height=args.height)
        print(json.dumps(info, indent=2) if args.json else format_event_info(info))
        return 0
    print(format_info(args.file, args.channels))
    return 0
