"""``neuromark system run CONFIG [--out DIR]``: run system-track benchmarks.

Runs a scenario over a SUT, sample library and power meter; writes the results JSON, the
LoadGen logs (``<out>/<config stem>/loadgen/``), the plots and ``report.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("system", help="system-track benchmarks (MLPerf LoadGen scenarios)")
    verbs = parser.add_subparsers(dest="system_command", metavar="VERB")
    run = verbs.add_parser("run", help="run system benchmark configs (task: system)")
    run.add_argument("configs", nargs="+", metavar="CONFIG")
    run.add_argument("--out", type=Path, default=None, help="output folder (default: results/<timestamp>)")
    run.add_argument("--quiet", action="store_true")
    run.set_defaults(func=_run)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def _run(args: argparse.Namespace) -> int:
    from neuromark.errors import ConfigError
    from neuromark.report.markdown import format_summary, write_report
    from neuromark.suite import expand, run_configs, timestamped_dir

    for config in expand(args.configs):
        if config.data.get("task") != "system":
            raise ConfigError(f"{config.where(('task',))}: 'neuromark system run' needs task: system, "
                              f"got {config.data.get('task')!r} (use 'neuromark run')")
    out_dir = args.out or timestamped_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    written = run_configs(args.configs, out_dir, quiet=args.quiet)
    wall = time.perf_counter() - start
    print(format_summary([r for _, r in written]))
    report = write_report(out_dir, written, wall_s=wall)
    print(f"\n{len(written)} result file(s), LoadGen logs and {report} in {out_dir} ({wall:.1f} s)")
    return 0
