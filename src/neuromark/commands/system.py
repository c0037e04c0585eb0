"""``neuromark system run CONFIG [--out DIR] [--system system.yaml] [--submission-tree TREE]``:
run system-track benchmarks and write a submission (and MLPerf's submission tree);
``neuromark system tree RUN_DIR --out TREE``: the MLPerf submission tree of a run folder
(:mod:`neuromark.system.mlperf_tree`); ``neuromark system compliance CONFIG``: the MLPerf
compliance tests on a config's SUT.

``run`` is a thin alias of ``neuromark run`` restricted to ``task: system`` configs
(:func:`neuromark.commands.run.run_and_report`): the results JSON, the LoadGen logs
(``<out>/<config stem>/loadgen/``), the plots and ``report.md``; then the submission
manifest ``submission.json`` and the report ``submission/submission.md``
(:mod:`neuromark.system.track.submission`), so that ``neuromark check <out>`` can audit it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.commands.run import (
    add_output_flags,
    add_system_flags,
    context_from_args,
    run_and_report,
)
from neuromark.errors import ConfigError
from neuromark.identity import results_name


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("system", help="system-track benchmarks (MLPerf LoadGen scenarios)")
    verbs = parser.add_subparsers(dest="system_command", metavar="VERB")
    run = verbs.add_parser("run", help="run system benchmark configs (task: system) into a submission")
    run.add_argument("configs", nargs="+", metavar="CONFIG")
    run.add_argument("--out", type=Path, default=None, help="output folder (default: results/<timestamp>)")
    add_system_flags(run)
    add_output_flags(run)
    run.add_argument("--quiet", action="store_true")
    run.add_argument("--submission-tree", type=Path, default=None, metavar="DIR",
                     help="also lay the results out as an MLPerf Inference submission tree in DIR "
                     "(open division, for MLPerf's own submission checker; see 'system tree')")
    _tree_flags(run)
    run.set_defaults(func=_run)
    tree = verbs.add_parser("tree", help="lay a 'system run' folder out as an MLPerf Inference "
                                         "submission tree (open/<submitter>/{results,systems,src,code})")
    tree.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a 'neuromark system run' folder")
    tree.add_argument("--out", type=Path, required=True, metavar="DIR",
                      help="the tree's folder (new, empty, or one this command wrote)")
    _tree_flags(tree)
    tree.set_defaults(func=_tree)
    comp = verbs.add_parser("compliance", help="MLPerf compliance tests (TEST01, TEST04; the retired "
                                               "TEST05 on request) on the SUT of system configs")
    comp.add_argument("configs", nargs="+", metavar="CONFIG")
    comp.add_argument("--out", type=Path, default=None, help="output folder (default: results/<timestamp>)")
    comp.add_argument("--tests", default="TEST01,TEST04",
                      help="comma-separated tests (default: TEST01,TEST04, the ones MLPerf requires; "
                      "TEST05 was retired by MLPerf in November 2024 and runs only when named)")
    comp.set_defaults(func=_compliance)
    parser.set_defaults(func=lambda args: parser.print_help() or 2)


def _tree_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--submitter", default="unnamed",
                        help="the submitter's name in the tree (default: unnamed)")
    parser.add_argument("--system-name", default=None,
                        help="the system's name in the tree (default: the results' system, "
                        "else the SUT's label)")
    parser.add_argument("--benchmark-name", default=None,
                        help="the benchmark's name in the tree (default: the benchmark id)")
    parser.add_argument("--system-type", choices=("edge", "datacenter"), default="edge",
                        help="MLPerf's system category (default: edge)")


def _write_tree(args: argparse.Namespace, run_dir: Path, tree: Path) -> int:
    from neuromark.system.mlperf_tree import CHECKER_VERSION
    from neuromark.system.mlperf_tree_results import write_run_tree

    root = write_run_tree(run_dir, tree, args.submitter, args.system_name, args.benchmark_name,
                          system_type=args.system_type)
    print(f"MLPerf submission tree: {root} (open division); check it with MLPerf's checker: "
          f"python -m submission_checker.main --input {tree} --version {CHECKER_VERSION}")
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.submission_tree is not None:
        from neuromark.run_folder import timestamped_dir
        from neuromark.system.mlperf_tree import check_name, prepare

        check_name(args.submitter, "--submitter")  # before any work
        for name in (args.system_name, args.benchmark_name):
            if name is not None:
                check_name(name, "--system-name / --benchmark-name")
        prepare(args.submission_tree)
        args.out = args.out or timestamped_dir()
    code = run_and_report(args.configs, args.out, quiet=args.quiet, only_task="system",
                          overwrite=args.overwrite, ctx=context_from_args(args),
                          system=args.system, allow_invalid=args.allow_invalid)
    if args.submission_tree is not None and (args.out / "submission.json").is_file():
        _write_tree(args, args.out, args.submission_tree)
    return code


def _tree(args: argparse.Namespace) -> int:
    return _write_tree(args, args.run_dir, args.out)


def _compliance(args: argparse.Namespace) -> int:
    from neuromark.run_folder import timestamped_dir
    from neuromark.suite import expand
    from neuromark.system.compliance import FAIL, KNOWN_TESTS, format_verdicts
    from neuromark.system.track.task import TASK
    from neuromark.tasks.base import plan_and_run

    tests = [t.strip().upper() for t in args.tests.split(",") if t.strip()]
    unknown = [t for t in tests if t not in KNOWN_TESTS]
    if unknown or not tests:
        raise ConfigError(f"--tests: unknown test {unknown[0] if unknown else '(none)'!r}; "
                          f"known: {', '.join(KNOWN_TESTS)}")
    out = args.out or timestamped_dir()
    failed = False
    for config in expand(args.configs):
        if config.data.get("task") != "system":
            raise ConfigError(f"{config.where(('task',))}: compliance runs task: system configs, "
                              f"got {config.data.get('task')!r}")
        config.data["compliance"] = tests
        stem = Path(config.path).stem if config.path else "config"
        res = plan_and_run(TASK, config, out / stem)[0]

        res.save(out / results_name(res.benchmark.id, res.model))
        print(f"{res.benchmark.id}:")
        for line in format_verdicts(res.details["compliance"]):
            print(f"  {line}")
        failed |= any(v["verdict"] == FAIL for v in res.details["compliance"].values())
    return 1 if failed else 0
