"""``neuromark run [CONFIG...] [--out DIR]``: run benchmark configs or suites."""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="run benchmark configs (default: the default suite)",
        description="Run benchmark configs or suites. With no CONFIG, runs "
                    "configs/suite/default.yaml. Writes results/<timestamp>/ with one JSON "
                    "file per benchmark and a Markdown report.")
    parser.add_argument("configs", nargs="*", metavar="CONFIG", help="YAML config or suite files")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: results/<timestamp>)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from neuromark.report.markdown import format_summary, write_report
    from neuromark.suite import default_suite_path, run_configs, timestamped_dir

    configs = args.configs or [default_suite_path()]
    out_dir = args.out or timestamped_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    written = run_configs(configs, out_dir, quiet=args.quiet)
    wall = time.perf_counter() - start
    print(format_summary([r for _, r in written]))
    report = write_report(out_dir, written, wall_s=wall)
    print(f"\n{len(written)} result file(s) and the report {report} in {out_dir} "
          f"({wall:.1f} s)")
    return 0
