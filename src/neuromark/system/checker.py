"""The submission checker behind ``neuromark check SUBMISSION_DIR``.

Audits a system-track submission the way MLPerf's submission checker audited its first
round (Reddi et al., "MLPerf Inference Benchmark", ISCA 2020, §7.3), with the NeuroBench
system-track report rules (Yik et al. 2025). A submission is the folder
``neuromark system run --out DIR`` writes:

```
DIR/submission.json                 manifest: profile, benchmarks, report
DIR/<id>--<sut>.json                results of each benchmark (its model: the SUT)
DIR/<stem>/loadgen/performanceonly/ mlperf_log_summary.txt, mlperf_log_detail.txt
DIR/<stem>/loadgen/accuracyonly/    mlperf_log_detail.txt, mlperf_log_accuracy.json
DIR/<stem>/compliance/TEST0x/       audit runs (configs with compliance: true)
DIR/submission/submission.md        the report (+ workflow.png and plots)
```

Results of a task that declares rules of its own (an entry of
:data:`neuromark.registry.checker_rules` under the task's name, added by its family's
``MANIFEST``) are checked by them too, with :func:`check_submission`'s profile. Every finding
names the file and the rule; :func:`check_submission` returns them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from neuromark.errors import DataError
from neuromark.registry import checker_rules
from neuromark.results import effective_config
from neuromark.results_versions import READABLE_SCHEMAS
from neuromark.system.checker_input import (
    confined,
    load_json,
    log_figures,
    manifest_entries,
    result_figures,
    schema,
)
from neuromark.system.checker_power import check_power
from neuromark.system.compliance import TESTS as COMPLIANCE_TESTS
from neuromark.system.loadgen_log import ACCURACY, DETAIL, SUMMARY, parse_detail, summarize
from neuromark.system.power.legacy import migrate_power
from neuromark.system.quality import judge
from neuromark.system.rules import OFFICIAL_SEEDS, PERCENTILE, PROFILES, Profile

MANIFEST = "submission.json"
#: The report sections the NeuroBench system track requires, and what each must hold.
SECTIONS = {"System architecture": (), "Algorithm": (), "Workflow": ("![",),
            "Timing measurement": (),
            "Power measurement": ("devices:", "components included:", "sample rate:"),
            "Results": ()}


@dataclass(frozen=True)
class Finding:
    """One violation: the file it concerns, the rule's id, and what is wrong."""

    file: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.rule}: {self.message}"


class _Audit:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.findings: list[Finding] = []

    def add(self, file: Path | str, rule: str, message: str) -> None:
        path = Path(file)
        inside = path.is_absolute() and path.is_relative_to(self.root) and path != self.root
        shown = path.relative_to(self.root) if inside else path
        self.findings.append(Finding(str(shown), rule, message))


def check_submission(root: str | Path) -> tuple[Profile | None, list[Finding]]:
    """Audit the submission folder ``root``; returns its profile (None when it cannot be
    read) and every finding (empty: the submission is clean)."""
    root = Path(root).resolve()
    audit = _Audit(root)
    if not root.is_dir():
        audit.add(root, "layout/folder", "not a folder")
        return None, audit.findings
    results = {}
    for file in sorted(root.glob("*.json")):
        if file.name == MANIFEST:
            continue
        data = load_json(audit, file, "layout/results")
        if data is not None and data.get("schema_version", "1.3") not in READABLE_SCHEMAS:
            audit.add(file, "layout/schema", f"schema_version {data.get('schema_version')!r} is not "
                      f"a results schema this checker reads ({', '.join(READABLE_SCHEMAS)})")
        elif data is not None and schema(audit, file, "details", data.get("details"), dict):
            results[file.name] = data
    system = {k: v for k, v in results.items() if "loadgen" in v["details"]}
    ruled = {k: v for k, v in results.items() if _task(v) in checker_rules}
    profile = None
    if system or (root / MANIFEST).exists() or not ruled:
        profile = _check_system(audit, root, system)
    for name, data in ruled.items():  # the submission's profile decides the seeds rule too
        with _malformed(audit, root / name):
            checker_rules.get(_task(data))(audit, root / name, data, profile.official_seeds
                                           if profile is not None else True)
    return profile, audit.findings


def _task(data: dict) -> str | None:
    """The task a results file ran (its config's ``task:``), or None when it names none."""
    task = effective_config(data).get("task")
    return task if isinstance(task, str) else None


@contextmanager
def _malformed(audit: _Audit, file: Path) -> Iterator[None]:
    """A value of a type no rule expected ends that file's audit with one finding, never a
    traceback."""
    try:
        yield
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError) as exc:
        audit.add(file, "layout/schema", f"malformed value ({type(exc).__name__}: {exc})")


def _check_system(audit: _Audit, root: Path, system: dict[str, dict]) -> Profile | None:
    manifest = load_json(audit, root / MANIFEST, "layout/manifest")
    if manifest is None:
        return None
    profile = PROFILES.get(str(manifest.get("profile")))
    if profile is None:
        audit.add(root / MANIFEST, "rules/profile", f"profile {manifest.get('profile')!r} is not "
                  f"one of {', '.join(PROFILES)}")
        return None
    if not manifest.get("benchmarks"):
        audit.add(root / MANIFEST, "layout/manifest", "lists no benchmarks")
    listed = set()
    for entry in manifest_entries(audit, root / MANIFEST, manifest):
        name = entry["results"]
        listed.add(name)
        if confined(audit, root, name, "layout/results", "results file") is None:
            continue
        data = system.get(name)
        if data is None:
            audit.add(root / name, "layout/results", "required results file is missing (listed "
                      "in submission.json)")
            continue
        with _malformed(audit, root / name):
            _check_benchmark(audit, root, root / name, data, entry, profile)
    for name in sorted(set(system) - listed):
        audit.add(root / name, "layout/manifest", "system-track results not listed in submission.json")
    report = confined(audit, root, manifest.get("report", "submission/submission.md"),
                      "layout/report", "report")
    if report is not None:
        with _malformed(audit, report):
            _check_report(audit, report, [system[n] for n in listed if n in system])
    return profile


def _check_benchmark(audit: _Audit, root: Path, file: Path, data: dict, entry: dict,
                     profile: Profile) -> None:
    details, config = data["details"], effective_config(data)
    declared = config.get("profile", "test")
    if declared != profile.name:
        audit.add(file, "rules/profile", f"config declares profile {declared!r}, the submission "
                  f"{profile.name!r}")
    logs = entry.get("loadgen_logs", {})
    perf = _logs(audit, root, logs, "PerformanceOnly", (SUMMARY, DETAIL), file)
    acc = _logs(audit, root, logs, "AccuracyOnly", (DETAIL, ACCURACY), file)
    if perf is not None:
        _check_performance(audit, perf, profile, config.get("loadgen", {}))
    result_figures(audit, file, data)
    _check_search(audit, file, details)
    if acc is not None and not (acc / ACCURACY).stat().st_size > 2:
        audit.add(acc / ACCURACY, "runs/accuracy-mode", "the accuracy log holds no responses")
    _check_accuracy(audit, file, details.get("accuracy"), config.get("accuracy"), acc, profile,
                    data.get("scores", {}))
    timing = details.get("timing", {})
    declared = (details.get("sut") or {}).get("stages")  # a SUT without pre-processing says so
    stages = tuple(declared) if isinstance(declared, list) else ("preprocess", "inference")
    for stage in stages:
        if stage not in timing:
            audit.add(file, "latency/split", f"no {stage} latency: pre-processing and inference "
                      "must be timed separately (details.timing)")
        elif timing[stage].get("stderr_s") is None:
            audit.add(file, "latency/standard-error", f"{stage} latency has no standard error "
                      f"({timing[stage].get('n')} timed samples)")
    scores = data.get("scores", {})
    migrate_power(details, scores)
    perf_rel = logs.get("PerformanceOnly")
    base = root / Path(perf_rel if isinstance(perf_rel, str) else "loadgen/performanceonly").parents[1]
    check_power(audit, file, details, profile.name, base)
    if config.get("compliance"):
        _check_compliance(audit, base / "compliance", file, details, config)


def _check_search(audit: _Audit, file: Path, details: dict) -> None:
    """``loadgen/search``: a Server or MultiStream search that found no passing value makes
    the result INVALID, whatever LoadGen said of the final run, and the judged figure must
    say so; a judged figure INVALID for a reason of its own (a MultiStream final run over
    the bound) is a finding too."""
    loadgen = details.get("loadgen")
    search = loadgen.get("search") if isinstance(loadgen, dict) else None
    metric = details.get("scenario_metric")
    metric = metric if isinstance(metric, dict) else {}
    if not isinstance(search, dict):
        return
    if search.get("best") is not None:
        if metric.get("validity") == "INVALID" and metric.get("invalid_reason"):
            audit.add(file, "loadgen/search", f"the judged figure is INVALID: {metric['invalid_reason']}")
        return
    audit.add(file, "loadgen/search", f"the {search.get('searched')} search found no passing "
              f"value ({search.get('stopped')}): the result is INVALID")
    if metric.get("validity") != "INVALID":
        audit.add(file, "loadgen/search", f"the judged figure says {metric.get('validity')!r} "
                  "although the search found no passing value")


def _check_accuracy(audit: _Audit, file: Path, record: object, declared: object,
                    acc: Path | None, profile: Profile, scores: dict) -> None:
    """The accuracy pass met its quality target (:mod:`neuromark.system.quality`): the
    verdict is recomputed from the figure, the reference and the target; the figure is the
    scores', the target the config's, the scored samples the accuracy log's. A result
    without a target needs an exemption with its reason (``submission`` profile; the
    ``test`` profile lets quick runs skip the target, as it skips the minimums)."""
    rule = "accuracy/target"
    if record is not None and not schema(audit, file, "details.accuracy", record, dict):
        return
    record = record or {}
    if record.get("exempt"):
        return
    if record.get("threshold") is None or not isinstance(record.get("value"), (int, float)):
        if record.get("verdict") == "INVALID":
            audit.add(file, rule, f"accuracy INVALID: {record.get('reason')}")
        elif profile.name == "submission":
            audit.add(file, rule, "no quality target declared: a submission judges its accuracy "
                      "pass (accuracy: {metric, reference, target}) or says why none applies "
                      "(accuracy: {exempt: reason})")
        return
    verdict = judge(float(record["value"]), float(record["reference"]), float(record["target"]),
                    bool(record.get("higher_is_better", True)))
    if verdict["verdict"] != "VALID":
        audit.add(file, rule, f"accuracy INVALID: {record.get('metric')} {verdict['reason']} "
                  f"(reference from {record.get('reference_source', 'config')})")
    if verdict["verdict"] != record.get("verdict"):
        audit.add(file, "accuracy/verdict", f"the results say {record.get('verdict')!r}, the "
                  f"figure, reference and target give {verdict['verdict']!r}")
    score = scores.get(str(record.get("metric")))
    if isinstance(score, dict) and score.get("value") != record["value"]:
        audit.add(file, "accuracy/verdict", f"details.accuracy judged {record['metric']} "
                  f"{record['value']}, the scores say {score.get('value')}")
    target = declared.get("target") if isinstance(declared, dict) else None
    if target is not None and float(target) != float(record["target"]):
        audit.add(file, "accuracy/verdict", f"judged against target {record['target']}, the "
                  f"config declares {target}")
    if acc is not None and isinstance(record.get("samples"), int):
        try:
            logged = len({int(e["qsl_idx"]) for e in load_json(audit, acc / ACCURACY, "accuracy/log", list)
                          or []})
        except (TypeError, KeyError, ValueError):
            audit.add(acc / ACCURACY, "accuracy/log", "entries without a qsl_idx")
            return
        if logged != record["samples"]:
            audit.add(acc / ACCURACY, "accuracy/log", f"the log holds {logged} samples, the "
                      f"results scored {record['samples']}")


def _logs(audit: _Audit, root: Path, logs: dict, mode: str, names: tuple[str, ...],
          file: Path) -> Path | None:
    rule = "runs/performance-mode" if mode == "PerformanceOnly" else "runs/accuracy-mode"
    if mode not in logs:
        audit.add(file, rule, f"no {mode} LoadGen run in the submission")
        return None
    folder = confined(audit, root, logs[mode], "layout/loadgen-logs", f"{mode} LoadGen log folder")
    if folder is None:
        return None
    for n in names:
        if (folder / n).is_symlink():
            audit.add(folder / n, "layout/outside", f"{mode} LoadGen log is a symlink; a "
                      "submission holds its own files")
            return None
    missing = [n for n in names if not (folder / n).is_file()]
    for n in missing:
        audit.add(folder / n, "layout/loadgen-logs", f"required {mode} LoadGen log is missing")
    return None if missing else folder


def _check_performance(audit: _Audit, folder: Path, profile: Profile, requested: dict) -> None:
    summary_file = folder / SUMMARY
    try:
        values = parse_detail(folder / DETAIL).values
        if not log_figures(audit, folder / DETAIL, values):
            return
        summary = summarize(folder)
    except DataError as exc:
        audit.add(summary_file, "loadgen/logs", str(exc))
        return
    if summary["validity"] != "VALID":
        reasons = "; ".join(summary["invalid_reasons"]) or "LoadGen logged no reason"
        audit.add(summary_file, "loadgen/valid", f"result is {summary['validity']}: {reasons}")
    scenario = summary.get("scenario")
    if scenario not in PERCENTILE:
        audit.add(folder / DETAIL, "loadgen/scenario", f"unknown scenario {scenario!r}")
        return
    rule = profile.rule(scenario)
    eff = summary["effective"]
    min_count = rule.min_query_count
    if scenario == "Offline":
        total = values.get("qsl_reported_total_count") or min_count
        min_count = min(min_count, int(total))
        run_count = summary.get("sample_count") or 0
        eff_count, what = eff.get("min_sample_count", eff.get("min_query_count", 0)), "samples"
    else:
        run_count, eff_count, what = summary.get("query_count") or 0, eff.get("min_query_count", 0), "queries"
    where = f"{scenario}, {profile.name} profile"
    if eff_count < min_count or run_count < min_count:
        audit.add(summary_file, "settings/min-query-count",
                  f"run holds {run_count} {what} (LoadGen minimum set to {eff_count}); the rule "
                  f"is at least {min_count} ({where})")
    min_ms = eff.get("min_duration_ms", 0)
    if min_ms < rule.min_duration_s * 1e3:
        audit.add(folder / DETAIL, "settings/min-duration",
                  f"effective minimum duration {min_ms / 1e3:g} s < {rule.min_duration_s:g} s ({where})")
    want = PERCENTILE[scenario]
    got = eff.get("target_latency_percentile")
    if want is not None and (got is None or abs(float(got) - want) > 1e-9):
        audit.add(folder / DETAIL, "settings/latency-percentile",
                  f"target latency percentile {got} != {want} ({scenario})")
    if scenario == "Server" and not requested.get("latency_bound_s"):
        audit.add(folder / DETAIL, "settings/server-latency-bound",
                  "the Server scenario needs a stated latency bound (loadgen.latency_bound_s); "
                  f"LoadGen used its default {eff.get('target_latency_ns')} ns")
    if profile.official_seeds:
        for name, value in OFFICIAL_SEEDS.items():
            if eff.get(name) != value:
                audit.add(folder / DETAIL, "settings/seeds",
                          f"{name} {eff.get(name)} is not the official seed {value} (mlperf.conf)")


def _check_compliance(audit: _Audit, folder: Path, file: Path, details: dict, config: dict) -> None:
    """The tests ``compliance:`` asks for ran and passed (TEST01 may be not applicable with
    its reason); their LoadGen summaries lie in ``folder/<TEST>``."""
    wanted = COMPLIANCE_TESTS if config["compliance"] is True else tuple(config["compliance"])
    verdicts = details.get("compliance", {})
    if not schema(audit, file, "details.compliance", verdicts, dict):
        return
    for test in wanted:
        v = verdicts.get(test)
        if v is not None and not (schema(audit, file, f"details.compliance.{test}", v, dict)
                                  and schema(audit, file, f"details.compliance.{test}.verdict",
                                             v.get("verdict"), str)):
            continue
        if v is None:
            audit.add(file, f"compliance/{test}", "required by compliance: true, but not run")
        elif v["verdict"] == "NOT APPLICABLE" and test == "TEST01" and v.get("reason"):
            continue
        elif v["verdict"] != "PASS":
            audit.add(file, f"compliance/{test}", f"{v['verdict']}: {v.get('reason') or 'no reason'}")
        elif not (folder / test / SUMMARY).is_file():
            audit.add(folder / test / SUMMARY, "layout/compliance-logs",
                      f"{test} LoadGen summary is missing")


def _sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _check_report(audit: _Audit, report: Path, results: list[dict]) -> None:
    if not report.is_file():
        audit.add(report, "layout/report", "required submission report is missing "
                  "(neuromark system run writes it; or neuromark report)")
        return
    sections = _sections(report.read_text(encoding="utf-8", errors="replace"))
    for name, needs in SECTIONS.items():
        body = sections.get(name)
        if body is None:
            audit.add(report, "report/section", f"section '## {name}' is missing")
            continue
        if not body.strip().strip("–-").strip():
            audit.add(report, "report/section", f"section '## {name}' is empty")
        for needle in needs:
            if needle not in body:
                audit.add(report, "report/section", f"section '## {name}' does not state "
                          f"'{needle.rstrip(':')}'")
    if "Workflow" in sections:
        for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", sections["Workflow"]):
            if not (report.parent / image).is_file():
                audit.add(report.parent / image, "report/workflow-diagram", "diagram file is missing")
    power = sections.get("Power measurement", "")
    for data in results:
        meter = data["details"].get("power_meter", {})
        bench = data.get("benchmark", {}).get("id", "?")
        if not meter.get("measured") and f"{bench}: power not measured" not in power:
            audit.add(report, "report/power-not-measured", f"{bench}: power was not measured but "
                      "the report does not say so")
