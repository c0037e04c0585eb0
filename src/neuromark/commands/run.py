"""``neuromark run [CONFIG...] [--out DIR]``: run benchmark configs or suites.

The one run path: ``system run`` and ``qubo run`` are thin aliases over
:func:`run_and_report`, which is :func:`neuromark.suite.run_suite` (plan every config
once, the executor runs, the run folder writes, the report reads, the system track writes
its submission) with this command's report: the summary table and ``report.md``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuromark.commands import add_command
from neuromark.context import RunContext
from neuromark.report.markdown import format_summary, write_report
from neuromark.results import Results
from neuromark.said import forget

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
    """Run ``configs`` (suites expanded) into ``out_dir`` (default ``results/<timestamp>``)
    on ``executor`` (``local`` or ``ray``, joining ``address``) under ``ctx`` (default: from
    the environment): :func:`neuromark.suite.run_suite` with this command's report
    (:func:`print_and_write_report`). Returns the exit code: 1 when a system result is
    INVALID (unless ``allow_invalid``), else 0; ``system``: the system description of the
    system track's submission.

    ``only_task`` restricts the configs to one task (the ``system run`` / ``qubo run`` aliases).
    """
    from neuromark.suite import run_suite

    forget()  # the summary says each flag this run did not say while it went
    ctx = ctx if ctx is not None else RunContext.build(quiet=quiet)
    return run_suite(configs, out_dir, ctx=ctx.replace(quiet=quiet or ctx.quiet),
                     report=print_and_write_report, only_task=only_task, overwrite=overwrite,
                     executor=executor, address=address, system=system,
                     allow_invalid=allow_invalid)


def print_and_write_report(folder: Path, written: list[tuple[Path, Results]], wall_s: float
                           ) -> Path:
    """The report of a run (the suite's ``report`` step): print the summary table of the
    results just written and write ``folder/report.md`` (this run's, then earlier results
    files in the folder); returns its path."""
    print(format_summary([r for _, r in written]))
    return write_report(folder, written, wall_s=wall_s)


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
