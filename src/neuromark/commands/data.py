"""``neuromark data``: data-set tools. ``neuromark data info FILE`` summarises a spike file
(SHD ``.h5``) or a camera event file (``.raw``, ``.dat``, ``.npy``;
:mod:`neuromark.data.event_info`).

Benchmark families add subcommands to the group through the ``data_commands`` entries of
their MANIFEST: each is called as ``register(data_subparsers)``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark import registry
from neuromark.commands import add_command

INFO_DESCRIPTION = """For an HDF5 spike file in the SHD/SSC layout (.h5): the number of samples,
the classes with their counts, the total number of spikes, the time range and the channel range.
For a camera event file (Prophesee .raw EVT 2.0/3.0, Prophesee/ATIS .dat, events .npy): the format,
the sensor and where its size came from, the number of events, the time span and the event rate.
A bad file exits with status 1."""


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
    for name in registry.data_commands.names():
        registry.data_commands.get(name)(data_sub)
    parser.set_defaults(func=lambda args: _no_subcommand(parser))


def _no_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


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
