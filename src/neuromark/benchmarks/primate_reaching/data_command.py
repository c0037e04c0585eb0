"""``neuromark data primate-surrogate OUT_DIR``: the offline primate-reaching sessions.

The family's ``data_commands`` entry: ``neuromark data`` calls :func:`register` with its
subparsers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.commands import add_command
from neuromark.errors import ConfigError

DESCRIPTION = """Write the six sessions of the primate-reaching benchmark (Zenodo 583331 names,
MATLAB v7.3 layout) from a seeded model: minimum-jerk reaches at 250 Hz, cosine-tuned Poisson units
(96 or 192 channels, 1-5 units each), plus surrogate.json with every unit's parameters. An
up-to-date OUT_DIR is left as it is unless --force."""


def register(data_subparsers: argparse._SubParsersAction) -> None:
    """Add ``primate-surrogate`` to the ``neuromark data`` group."""
    parser = add_command(data_subparsers, "primate-surrogate",
                         "write the six primate-reaching surrogate sessions (v7.3 .mat)", DESCRIPTION)
    parser.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    parser.add_argument("--duration", type=float, default=480.0,
                        help="seconds per session (default 480)")
    parser.add_argument("--seed", type=int, default=0, help="session i uses seed + i (default 0)")
    parser.add_argument("--force", action="store_true", help="rewrite even if up to date")
    parser.set_defaults(func=_surrogate)


def _surrogate(args: argparse.Namespace) -> int:
    from neuromark.benchmarks.primate_reaching.generator import SurrogateSettings, write_surrogate

    if not args.duration > 0:
        raise ConfigError(f"--duration {args.duration}: must be positive")
    out = write_surrogate(args.out_dir, SurrogateSettings(duration_s=args.duration, seed=args.seed),
                          force=args.force)
    print(f"wrote the primate-reaching surrogate to {out}")
    return 0
