"""``neuromark run [CONFIG...] [--out DIR]``: run benchmark configs or suites.

The one run path: ``system run`` and ``qubo run`` are thin aliases over
:func:`run_and_report` (validate every config first, unique ids, results written by the
driver, the summary table and ``report.md``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuromark.devices import DEVICE_ENV, device_problem
from neuromark.errors import ConfigError
from neuromark.executors import make_executor, use_executor
from neuromark.report.markdown import format_summary, write_report


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="run benchmark configs (default: the default suite)",
        description="Run benchmark configs or suites (any task: classification, mackey_glass, "
                    "system, qubo, or a plugin's). With no CONFIG, runs "
                    "configs/suite/default.yaml. Writes results/<timestamp>/ with one JSON "
                    "file per benchmark and a Markdown report; a rerun of the same configs into "
                    "the same --out resumes sweeps from their completed entries, other "
                    "configs are refused unless --overwrite (see docs/files.md).")
    parser.add_argument("configs", nargs="*", metavar="CONFIG", help="YAML config or suite files")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: results/<timestamp>)")
    add_output_flags(parser)
    add_executor_flags(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--coverage", choices=("error", "warn"), default=None,
                        help="synaptic_operations: fail on parameters no counted operation "
                             "consumed (error, the default) or report them (warn, for "
                             "migration); a config's eval.coverage takes precedence")
    add_device_flag(parser)
    parser.set_defaults(func=_run)


def add_device_flag(parser: argparse.ArgumentParser) -> None:
    """``--device NAME``: the device of every algorithm-track config (overrides ``device:``)."""
    parser.add_argument("--device", default=None, metavar="NAME",
                        help="cpu, cuda, cuda:N or auto (CUDA when available, else CPU): the "
                             "device models run and train on; overrides the configs' device: "
                             "key (default: each config's, else cpu; see docs/devices.md)")


def apply_device_flag(args: argparse.Namespace) -> None:
    """Make ``--device`` (when given) the device of this process's runs
    (``$NEUROMARK_DEVICE``); an unknown name is a :class:`ConfigError`."""
    import os

    device = getattr(args, "device", None)
    if device is None:
        return
    problem = device_problem(device)
    if problem:
        raise ConfigError(f"--device: {problem}")
    os.environ[DEVICE_ENV] = device


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    """``--overwrite`` and ``--cache-dir``, shared by every command that writes results."""
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty --out that holds results of other "
                             "configs (its results of the same ids are replaced)")
    add_cache_flag(parser)


def add_executor_flags(parser: argparse.ArgumentParser) -> None:
    """``--executor NAME`` and ``--address ADDR``: where the run's units execute."""
    parser.add_argument("--executor", default="local", metavar="NAME",
                        help="where the independent units of the run execute (suite entries, "
                             "Mackey-Glass instances, QUBO sweep entries): local (default, in "
                             "this process; a QUBO config's jobs: N uses N processes) or ray "
                             "(one Ray task per unit reserving whole CPUs; replaces jobs; "
                             "needs neuromark[ray]; see docs/distributed.md)")
    parser.add_argument("--address", default=None, metavar="ADDR",
                        help="with --executor ray: the Ray cluster to join ('auto', HOST:PORT "
                             "or ray://HOST:10001); default: a local Ray instance sized to "
                             "this machine")


def add_cache_flag(parser: argparse.ArgumentParser) -> None:
    """``--cache-dir DIR``: where trained checkpoints are cached (sets NEUROMARK_CACHE_DIR)."""
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="cache folder for trained checkpoints (default: "
                             "$NEUROMARK_CACHE_DIR, else $XDG_CACHE_HOME/neuromark)")


def apply_cache_flag(args: argparse.Namespace) -> None:
    """Make ``--cache-dir`` (when given) the cache folder of this process."""
    import os

    if getattr(args, "cache_dir", None) is not None:
        os.environ["NEUROMARK_CACHE_DIR"] = str(Path(args.cache_dir).expanduser().absolute())


def run_and_report(configs: Sequence[str | Path], out_dir: Path | None, *, quiet: bool = False,
                   only_task: str | None = None, overwrite: bool = False,
                   executor: str = "local", address: str | None = None) -> int:
    """Validate all ``configs`` (suites expanded), run them into ``out_dir`` (default
    ``results/<timestamp>``) on ``executor`` (``local`` or ``ray``, joining ``address``),
    print the summary table and write ``report.md``.

    ``only_task`` restricts the configs to one task (the ``system run`` / ``qubo run`` aliases).
    """
    from neuromark.suite import expand

    if only_task is not None:
        for config in expand(configs):
            if config.data.get("task") != only_task:
                raise ConfigError(f"{config.where(('task',))}: this command runs task: {only_task}, "
                                  f"got {config.data.get('task')!r} (use 'neuromark run')")
    if address is not None and executor == "local":
        raise ConfigError("--address: only with --executor ray")
    built = make_executor(executor, address)  # before validation: tasks check against it
    try:
        return _run_on(built, configs, out_dir, quiet=quiet, overwrite=overwrite)
    finally:
        built.close()


def _run_on(built: Any, configs: Sequence[str | Path], out_dir: Path | None, *, quiet: bool,
            overwrite: bool) -> int:
    from neuromark.suite import run_configs, timestamped_dir

    out_dir = out_dir or timestamped_dir()
    start = time.perf_counter()
    reports: list[Path] = []

    def finish(written: list) -> None:  # while the folder is locked
        print(format_summary([r for _, r in written]))
        reports.append(write_report(out_dir, written, wall_s=time.perf_counter() - start))

    with use_executor(built):
        written = run_configs(configs, out_dir, quiet=quiet, overwrite=overwrite, finish=finish)
    wall = time.perf_counter() - start
    print(f"\n{len(written)} result file(s) and the report {reports[0]} in {out_dir} "
          f"({wall:.1f} s)")
    return 0


def _run(args: argparse.Namespace) -> int:
    from neuromark.suite import default_suite_path

    apply_cache_flag(args)
    apply_device_flag(args)
    if args.coverage is not None:
        import os

        os.environ["NEUROMARK_COVERAGE"] = args.coverage
    return run_and_report(args.configs or [default_suite_path()], args.out, quiet=args.quiet,
                          overwrite=args.overwrite, executor=args.executor,
                          address=args.address)
