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

from neuromark.commands import add_command
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.executors import make_executor
from neuromark.report.markdown import format_summary, write_report

DESCRIPTION = """Run benchmark configs or suites (any task: classification, mackey_glass, system,
qubo, or a plugin's). With no CONFIG, runs configs/suite/default.yaml. Writes results/<timestamp>/
with one JSON file per benchmark and a Markdown report; a rerun of the same configs into the same
--out resumes sweeps from their completed entries, other configs are refused unless --overwrite (see
docs/files.md)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "run", "run benchmark configs (default: the default suite)",
                         DESCRIPTION)
    parser.add_argument("configs", nargs="*", metavar="CONFIG", help="YAML config or suite files")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: results/<timestamp>)")
    add_output_flags(parser)
    add_executor_flags(parser)
    add_system_flags(parser)
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


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    """``--overwrite``, ``--cache-dir`` and ``--allow-long``, shared by every command that
    writes results."""
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty --out that holds results of other "
                             "configs (its results of the same ids are replaced)")
    add_cache_flag(parser)
    add_allow_long_flag(parser)


def add_allow_long_flag(parser: argparse.ArgumentParser) -> None:
    """``--allow-long``: run entries whose estimated work exceeds their task's limit."""
    parser.add_argument("--allow-long", action="store_true",
                        help="run entries whose estimated work exceeds their task's stated "
                             "limit (e.g. a closed-loop entry of more than 10^6 agent steps; "
                             "docs/failures.md); without it they are refused before any work")


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
    """``--cache-dir DIR``: the run's cache folder (checkpoints, corpora, ``cache:`` paths)."""
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="cache folder for trained checkpoints (default: "
                             "$NEUROMARK_CACHE_DIR, else $XDG_CACHE_HOME/neuromark)")


def context_from_args(args: argparse.Namespace, *, executor: Any = None) -> RunContext:
    """The run context of a command: its flags (``--device``, ``--cache-dir``,
    ``--coverage``, ``--quiet``; those a command lacks count as not given), then the
    environment defaults (:meth:`RunContext.build`). Nothing is written to the environment."""
    return RunContext.build(device=getattr(args, "device", None),
                            cache_dir=getattr(args, "cache_dir", None),
                            coverage=getattr(args, "coverage", None),
                            quiet=bool(getattr(args, "quiet", False)),
                            executor=executor, executor_address=getattr(args, "address", None),
                            allow_long=bool(getattr(args, "allow_long", False)))


def run_and_report(configs: Sequence[str | Path], out_dir: Path | None, *, quiet: bool = False,
                   only_task: str | None = None, overwrite: bool = False,
                   executor: str = "local", address: str | None = None,
                   ctx: RunContext | None = None, system: Path | None = None,
                   allow_invalid: bool = False) -> int:
    """Plan all ``configs`` (suites expanded), run them into ``out_dir`` (default
    ``results/<timestamp>``) on ``executor`` (``local`` or ``ray``, joining ``address``)
    under ``ctx`` (default: from the environment), print the summary table and write
    ``report.md``; when the folder holds system-track results, write their submission
    (:func:`finish_system`). Returns the exit code: 1 when a system result is INVALID
    (unless ``allow_invalid``), else 0.

    ``only_task`` restricts the configs to one task (the ``system run`` / ``qubo run`` aliases).
    """
    folder = run_to_folder(configs, out_dir, quiet=quiet, only_task=only_task, overwrite=overwrite,
                           executor=executor, address=address, ctx=ctx)
    return finish_system(folder, system, allow_invalid=allow_invalid)


def finish_system(folder: Path, system: Path | None = None, *, allow_invalid: bool = False) -> int:
    """The submission of the system-track results in ``folder`` (``submission.json`` and
    ``submission/submission.md``, :func:`~neuromark.report.system_report.write_submission_dir`;
    ``system``: a system description YAML), written whatever their verdicts; returns 1
    when one of them is INVALID (LoadGen's verdict, or a failed scenario search) unless
    ``allow_invalid``, else 0. A folder without system results returns 0."""
    import sys

    from neuromark.report.system_report import (
        invalid_results,
        result_files,
        system_results,
        write_submission_dir,
    )

    # a results file that cannot be read raises instead of passing as "no system results"
    results = system_results(result_files(folder))
    if not results:
        return 0
    manifest, report = write_submission_dir(folder, system)
    print(f"submission: {manifest} and {report}; audit it with 'neuromark check {folder}'")
    invalid = invalid_results(results)
    for line in invalid:
        print(f"INVALID: {line}", file=sys.stderr)
    if invalid and not allow_invalid:
        print(f"{len(invalid)} system result(s) INVALID: exit status 1 (--allow-invalid keeps 0)",
              file=sys.stderr)
        return 1
    return 0


def run_to_folder(configs: Sequence[str | Path], out_dir: Path | None, *, quiet: bool = False,
                  only_task: str | None = None, overwrite: bool = False,
                  executor: str = "local", address: str | None = None,
                  ctx: RunContext | None = None) -> Path:
    """:func:`run_and_report`, returning the folder written (made only once every config
    is planned, so a config that fails validation leaves no folder)."""
    from neuromark.suite import expand

    ctx = ctx if ctx is not None else RunContext.build(quiet=quiet)
    if only_task is not None:
        for config in expand(configs, cache_root=ctx.cache_dir):
            if config.data.get("task") != only_task:
                raise ConfigError(f"{config.where(('task',))}: this command runs task: {only_task}, "
                                  f"got {config.data.get('task')!r} (use 'neuromark run')")
    if address is not None and executor == "local":
        raise ConfigError("--address: only with --executor ray")
    built = make_executor(executor, address)  # before planning: tasks check against it
    try:
        ctx = ctx.replace(executor=built, executor_address=address, quiet=quiet or ctx.quiet)
        return _run_on(ctx, configs, out_dir, overwrite=overwrite)
    finally:
        built.close()


def _run_on(ctx: RunContext, configs: Sequence[str | Path], out_dir: Path | None, *,
            overwrite: bool) -> Path:
    from neuromark.suite import plan_configs, run_configs, timestamped_dir

    start = time.perf_counter()
    planned = plan_configs(configs, ctx)  # each config once, before any folder is made
    folder = out_dir if out_dir is not None else timestamped_dir()
    reports: list[Path] = []

    def finish(written: list) -> None:  # while the folder is locked
        print(format_summary([r for _, r in written]))
        reports.append(write_report(folder, written, wall_s=time.perf_counter() - start))

    written = run_configs(configs, folder, ctx=ctx, overwrite=overwrite, finish=finish,
                          planned=planned)
    wall = time.perf_counter() - start
    print(f"\n{len(written)} result file(s) in {folder}, every score in the report "
          f"{reports[0]} ({wall:.1f} s)")
    return folder


def _run(args: argparse.Namespace) -> int:
    from neuromark.suite import default_suite_path

    return run_and_report(args.configs or [default_suite_path()], args.out, quiet=args.quiet,
                          overwrite=args.overwrite, executor=args.executor,
                          address=args.address, ctx=context_from_args(args),
                          system=args.system, allow_invalid=args.allow_invalid)


def add_system_flags(parser: argparse.ArgumentParser) -> None:
    """``--system system.yaml`` and ``--allow-invalid``: the submission of system results."""
    parser.add_argument("--system", type=Path, default=None, metavar="system.yaml",
                        help="system description for the submission report of system-track "
                             "results (default: described from the results' provenance, SUT "
                             "and meter)")
    parser.add_argument("--allow-invalid", action="store_true",
                        help="exit 0 even when a system-track result is INVALID (the results "
                             "and the submission are written either way)")
