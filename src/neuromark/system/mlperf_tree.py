"""An MLPerf Inference submission tree of system-track results, for MLPerf's own checker.

MLPerf's submission checker (mlcommons/inference ``tools/submission``, its
``submission_structure.md`` and the v6.1 paths of ``submission_checker/constants.py``) reads::

    <tree>/open/<submitter>/systems/<system>.json           system description
    <tree>/open/<submitter>/src/<benchmark>/README.md        how the code is run (v6.x;
    <tree>/open/<submitter>/code/<benchmark>/README.md        "code" in v5.x and the doc)
    <tree>/open/<submitter>/results/<system>/<benchmark>/<scenario>/
        performance/run_1/mlperf_log_detail.txt, mlperf_log_summary.txt
        performance/{power,ranging}/ and run_1/spl.txt      with MLPerf Power (two_pass)
        accuracy/mlperf_log_detail.txt, mlperf_log_summary.txt, accuracy.txt,
                 mlperf_log_accuracy.json (truncated)
        measurements.json, user.conf, README.md
        TEST01/, TEST04/ (...)                               compliance runs, when run

The division is ``open`` (a neuromorphic workload is none of MLPerf's closed-division
models); ``<benchmark>`` and ``<system>`` are our own names, given by the caller
(:func:`write_tree` takes them as inputs). The accuracy log is truncated as MLPerf's
``truncate_accuracy_log.py`` documents it (the first and the last 4,096 characters, the
SHA-256 of the whole file as ``hash=`` in ``accuracy.txt``); ``user.conf`` states the
LoadGen settings of the run in LoadGen's own configuration syntax (LoadGen's
``TestSettings.FromConfig`` reads it back); seeds are not user settings in LoadGen and are
recorded in the README instead. What MLPerf's checker still refuses, and why, is listed in
``docs/system_track.md`` ("MLPerf's submission checker").
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuromark.errors import ConfigError, DataError
from neuromark.system.loadgen_log import ACCURACY, DETAIL, SUMMARY, parse_detail

DIVISION = "open"
#: The checker version whose paths the tree follows.
CHECKER_VERSION = "v6.1"
#: MLPerf's truncation of mlperf_log_accuracy.json: this many characters from each end.
VIEWABLE_CHARS = 4096
#: Marks a tree this writer made (it never writes into a folder it did not make).
MARKER = ".neuromark-mlperf-tree"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
#: LoadGen configuration keys written to user.conf: conf key -> (detail-log key, scale).
USER_CONF_KEYS = {
    "min_duration": ("requested_min_duration_ms", 1.0),
    "max_duration": ("requested_max_duration_ms", 1.0),
    "min_query_count": ("requested_min_query_count", 1.0),
    "max_query_count": ("requested_max_query_count", 1.0),
    "performance_sample_count_override": ("requested_performance_sample_count_override", 1.0),
}
#: Per scenario: the conf key of the expected latency / QPS and its detail-log key, scale.
SCENARIO_CONF_KEYS = {
    "SingleStream": {"target_latency": ("requested_single_stream_expected_latency_ns", 1e-6)},
    "MultiStream": {"target_latency": ("requested_multi_stream_expected_latency_ns", 1e-6),
                    "samples_per_query": ("requested_multi_stream_samples_per_query", 1.0)},
    "Server": {"target_qps": ("requested_server_target_qps", 1.0),
               "target_latency": ("requested_server_target_latency_ns", 1e-6)},
    "Offline": {"target_qps": ("requested_offline_expected_qps", 1.0)},
}


@dataclass
class TreeResult:
    """One result to lay out: MLPerf's ``<benchmark>/<scenario>`` under ``<system>``.

    Attributes:
        benchmark: the benchmark's name in the tree (ours, e.g. the benchmark id).
        scenario: LoadGen scenario (SingleStream, MultiStream, Server, Offline).
        performance_dir: folder with the performance run's ``mlperf_log_detail.txt`` and
            ``mlperf_log_summary.txt``.
        accuracy_dir: folder with the accuracy run's logs and ``mlperf_log_accuracy.json``.
        accuracy: ``(metric name, value)`` of the accuracy run, written to accuracy.txt.
        power_dir: a power-dev folder (``power/``, ``ranging/``, ``run_1/``) whose ``run_1``
            replaces the performance run, or None.
        compliance: test name -> folder with that audit run's LoadGen logs.
        verdicts: test name -> our verdict line (written beside the logs).
        measurements: the fields of measurements.json.
        readme: the text of the result's README.md.
    """

    benchmark: str
    scenario: str
    performance_dir: Path
    accuracy_dir: Path | None = None
    accuracy: tuple[str, float] | None = None
    power_dir: Path | None = None
    compliance: dict[str, Path] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    measurements: dict[str, Any] = field(default_factory=dict)
    readme: str = ""


#: Every failure MLPerf's checker (v6.1, open division) reports on a tree of ours, with the
#: reason: ``(pattern of its ERROR line, reason)``. docs/system_track.md lists the reasons;
#: tests/test_mlperf_tree.py fails on any other.
KNOWN_FAILURES = (
    (r"Running (performance_sample_count_check|accuracy_result_check|dataset_check|"
     r"min_query_count_check|latency_check|get_performance_metric_check|inferred_check) in ",
     "MLPerf's own model list: the checker looks up the benchmark's performance sample count, "
     "accuracy target and data-set size in its table of MLPerf models and raises for a name "
     "it does not hold (a neuromorphic benchmark is none of them)"),
    (r"(qsl_rng_seed|sample_index_rng_seed|schedule_rng_seed) is wrong, expected=",
     "the test profile's seeds: it allows any LoadGen seeds; the submission profile uses "
     "MLPerf's official ones"),
    (r"Test duration less than 600s in user config",
     "the test profile's short duration: MLPerf asks 600 s per run, the submission profile too"),
    (r"\[ \] Check (client|server) sources checksum|do not exist in 'sources_checksums\.json'",
     "power-dev's source checksums (MLPerf Power results only): the power files are written by "
     "neuromark, not by power-dev's client and server, whose source hashes the check expects"),
    (r"Some (performance|accuracy|base) checks Checks failed for: |Power WG power_checker\.py "
     r"did not pass for: |power_checker\.py:\d+ ERROR\]\s*$",
     "the summary line of the failures above"),
    (r"NoResults .*/performance/run_1/mlperf_log_detail\.txt$",
     "the result was found and, for the failures above, not counted as valid"),
    (r"SUMMARY: submission has errors", "the summary line of the failures above"),
)


def check_name(name: str, what: str) -> str:
    """``name`` when it can be a folder name of the tree, else a :class:`ConfigError`."""
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > 120:
        raise ConfigError(f"{what} {name!r}: MLPerf's tree uses it as a folder name; use letters, "
                          "digits and . _ + - (starting with a letter or digit, at most 120)")
    return name


def truncate_accuracy_log(source: Path, target: Path) -> str:
    """Write ``source`` truncated as MLPerf's ``truncate_accuracy_log.py`` documents it (the
    first and last :data:`VIEWABLE_CHARS` characters around ``\\n\\n...\\n\\n``; a shorter
    file whole) to ``target``; returns the SHA-256 of the whole source."""
    digest = hashlib.sha256()
    with source.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    text = source.read_text(encoding="utf-8", errors="replace")
    if len(text) >= VIEWABLE_CHARS:
        text = text[:VIEWABLE_CHARS] + "\n\n...\n\n" + text[-VIEWABLE_CHARS:]
    target.write_text(text, encoding="utf-8")
    return digest.hexdigest()


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def user_conf(detail: Path, benchmark: str, scenario: str) -> str:
    """The run's LoadGen settings in LoadGen's configuration syntax
    (``<benchmark>.<scenario>.<key> = <value>``), read from the ``requested_*`` records of its
    detail log (what the harness asked LoadGen for)."""
    values = parse_detail(detail).values
    keys = {**USER_CONF_KEYS, **SCENARIO_CONF_KEYS.get(scenario, {})}
    lines = [f"# LoadGen settings of this run (requested_* of {DETAIL}), written by neuromark"]
    for conf_key, (log_key, scale) in keys.items():
        value = values.get(log_key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            lines.append(f"{benchmark}.{scenario}.{conf_key} = {_fmt(value * scale)}")
    return "\n".join(lines) + "\n"


def _copy(files: tuple[str, ...], source: Path, target: Path, required: bool = True) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in files:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
        elif required:
            raise DataError(f"{source / name}: missing; the MLPerf tree needs it ({target})")


def prepare(tree: Path) -> Path:
    """``tree`` ready to be written: a new or empty folder, or one this writer made
    (:data:`MARKER`); a file, or a folder of other content, is refused."""
    tree = Path(tree)
    if tree.exists() and not tree.is_dir():
        raise ConfigError(f"MLPerf submission tree {tree}: is a file; name a folder")
    if tree.is_dir() and any(tree.iterdir()) and not (tree / MARKER).is_file():
        raise ConfigError(f"MLPerf submission tree {tree}: a folder that holds files neuromark did "
                          "not write; name a new or empty folder")
    tree.mkdir(parents=True, exist_ok=True)
    (tree / MARKER).write_text("an MLPerf submission tree written by neuromark\n")
    return tree


def _write_result(scenario_dir: Path, result: TreeResult) -> None:
    if scenario_dir.exists():
        shutil.rmtree(scenario_dir)  # inside a tree this writer made: a result written again
    perf = scenario_dir / "performance"
    if result.power_dir is not None:
        for part in ("power", "ranging", "run_1"):
            shutil.copytree(result.power_dir / part, perf / part)
    else:
        _copy((DETAIL, SUMMARY), result.performance_dir, perf / "run_1")
    if result.accuracy_dir is not None:
        acc = scenario_dir / "accuracy"
        _copy((DETAIL, SUMMARY), result.accuracy_dir, acc)
        digest = truncate_accuracy_log(result.accuracy_dir / ACCURACY, acc / ACCURACY)
        metric = (f"{result.accuracy[0]} = {result.accuracy[1]!r}" if result.accuracy
                  else "no accuracy figure recorded")
        (acc / "accuracy.txt").write_text(f"neuromark accuracy of {result.benchmark} "
                                          f"({result.scenario}): {metric}\nhash={digest}\n")
    for test, folder in result.compliance.items():
        _copy((DETAIL, SUMMARY), folder, scenario_dir / test / "performance" / "run_1", required=False)
        if test in result.verdicts:
            (scenario_dir / test / "verify_performance.txt").write_text(result.verdicts[test] + "\n")
    detail = (perf / "run_1" / DETAIL)
    (scenario_dir / "user.conf").write_text(user_conf(detail, result.benchmark, result.scenario))
    (scenario_dir / "measurements.json").write_text(json.dumps(result.measurements, indent=2) + "\n")
    (scenario_dir / "README.md").write_text(result.readme or f"# {result.benchmark} {result.scenario}\n")


def write_tree(tree: str | Path, submitter: str, system_name: str, system: dict[str, Any],
               results: list[TreeResult]) -> Path:
    """Lay ``results`` of the system ``system_name`` out under
    ``tree/open/<submitter>/`` (module docstring); ``system`` is the system description
    JSON's fields (``division`` and ``submitter`` are set here). Returns the submitter's
    folder."""
    check_name(submitter, "submitter")
    check_name(system_name, "system name")
    for res in results:
        check_name(res.benchmark, "benchmark name")
        if res.scenario not in SCENARIO_CONF_KEYS:
            raise DataError(f"{res.benchmark}: scenario {res.scenario!r} is not one of MLPerf's "
                            f"{', '.join(SCENARIO_CONF_KEYS)}")
    root = prepare(Path(tree)) / DIVISION / submitter
    (root / "systems").mkdir(parents=True, exist_ok=True)
    desc = {**system, "division": DIVISION, "submitter": submitter, "system_name": system_name}
    (root / "systems" / f"{system_name}.json").write_text(json.dumps(desc, indent=2) + "\n")
    for res in results:
        for code in ("src", "code"):  # v6.x reads src/, submission_structure.md names code/
            folder = root / code / res.benchmark
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "README.md").write_text(res.readme or f"# {res.benchmark}\n")
        _write_result(root / "results" / system_name / res.benchmark / res.scenario, res)
    return root
