"""The system track's submission: what a run of system-track results leaves for
``neuromark check`` to audit, written by the system track itself.

:func:`finish_submission` is the last step of a run's path (:mod:`neuromark.suite`): when
the run folder holds system-track results, it writes their manifest ``submission.json``
and report ``submission/submission.md`` (:func:`write_submission_dir`) and judges their
validity (:func:`invalid_results`), which gives the run's exit status. The results are
read back from the folder's files (not from memory), so the submission describes the
folder as ``neuromark check`` will find it, earlier runs' system results in it included.

``write_submission(results, system, out_dir)`` writes ``submission.md`` with the sections
the system track asks for (NeuroBench, Yik et al. 2025, system track submission rules):
system architecture; algorithm; workflow diagram (data initialisation → host
pre-processing → data loading → on-device pre-processing → inference → post-processing);
timing measurement; power measurement (devices, components, sample rate); results with a
latency histogram (p50/p90/p99 marked) and the power trace with idle/active windows shaded.
The submitter describes the system in a YAML file (:class:`SystemDescription`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from neuromark import __version__
from neuromark.config import ConfigFile, StrictModel, load_config, validate
from neuromark.errors import DataError
from neuromark.identity import results_name
from neuromark.io_atomic import write_json_atomic
from neuromark.plotting import WORKFLOW, latency_histogram, power_trace, workflow_diagram
from neuromark.processors.encoder_cost import markdown_table
from neuromark.results import Results, format_value
from neuromark.results_versions import meant_as_results
from neuromark.system.power.legacy import OLD_KEYS_FLAG, migrate_power
from neuromark.system.quality import describe as describe_accuracy
from neuromark.system.timing import decode_ns


class Hardware(StrictModel):
    processor: str
    memory: str = ""
    accelerator: str = "none"
    board: str = ""


class PowerDescription(StrictModel):
    description: str = ""
    devices: list[str] = Field(default_factory=list)
    components: list[str] = Field(default_factory=list)
    sample_rate_hz: float | None = Field(None, gt=0)


class SystemDescription(StrictModel):
    """``system.yaml``: what the submitter states about the system (free text where needed)."""

    name: str
    architecture: str
    hardware: Hardware
    software: str = ""
    algorithm: str
    workflow: dict[str, str] = Field(default_factory=dict,
                                     description="step -> what happens there, or 'not used'")
    timing: str = ""
    power: PowerDescription = PowerDescription()


def load_description(path: str | Path) -> SystemDescription:
    """Load and validate ``system.yaml``; unknown workflow steps are errors naming the line."""
    config: ConfigFile = load_config(path)
    desc = validate(SystemDescription, config.data, config)
    unknown = [k for k in desc.workflow if k not in WORKFLOW]
    if unknown:
        raise DataError(f"{config.where(('workflow', unknown[0]))}: workflow step {unknown[0]!r} is "
                        f"not one of: {', '.join(WORKFLOW)}")
    return desc


def read_results(file: Path) -> Results:
    """:meth:`Results.load`, with a truncated or malformed file a :class:`DataError` naming
    the file (and the line and column where the JSON breaks off)."""
    try:
        return Results.load(file)
    except json.JSONDecodeError as exc:
        raise DataError(f"{file}:{exc.lineno}:{exc.colno}: not a valid results JSON "
                        f"({exc.msg}); is the file truncated?") from None
    except UnicodeDecodeError:
        raise DataError(f"{file}: not a results JSON (not UTF-8 text)") from None
    except (KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{file}: not a neuromark results file (missing or malformed "
                        f"{exc})") from None


def load_results(path: str | Path) -> list[Results]:
    """System-track results from a JSON file or the results files of a folder (at least one)."""
    files = result_files(target := Path(path))
    if not files or not all(f.is_file() for f in files):
        raise DataError(f"no results JSON found at {target}")
    if not (out := system_results(files)):
        raise DataError(f"{target}: no system-track results (made by 'neuromark system run') in "
                        f"{', '.join(f.name for f in files)}")
    return out


def result_files(target: Path) -> list[Path]:
    """``target``, or the JSON files in folder ``target`` meant as results (a manifest skipped)."""
    return sorted(f for f in target.glob("*.json") if meant_as_results(f)) if target.is_dir() else [target]


def system_results(files: Sequence[Path]) -> list[Results]:
    """The system-track results among ``files``, maybe none (unreadable files raise)."""
    out = [r for r in map(read_results, files) if "loadgen" in r.details]
    for res in out:
        if migrate_power(res.details, res.scores):
            res.flag(OLD_KEYS_FLAG)
    return out


def invalid_results(results: Sequence[Results]) -> list[str]:
    """``"<id>: <reasons>"`` for each result whose PerformanceOnly run LoadGen found
    INVALID, whose scenario search found no passing value (or whose judged figure is
    INVALID for another reason: ``scenario_metric.invalid_reason``), or whose accuracy pass fell
    below its quality target (:mod:`neuromark.system.quality`)."""
    out = []
    for res in results:
        acc = res.details.get("accuracy") or {}
        if acc.get("verdict") == "INVALID":
            out.append(f"{res.benchmark.id}: accuracy below its quality target: "
                       f"{describe_accuracy(acc)}")
        perf = res.details["loadgen"].get("PerformanceOnly") or {}
        search = res.details["loadgen"].get("search") or {}
        if perf.get("validity") == "INVALID":
            out.append(f"{res.benchmark.id}: " + ("; ".join(perf.get("invalid_reasons", []))
                                                   or "LoadGen logged no reason"))
        elif search and search.get("best") is None:
            out.append(f"{res.benchmark.id}: the {search.get('searched')} search found no "
                       f"passing value ({search.get('stopped')})")
        elif (res.details.get("scenario_metric") or {}).get("invalid_reason"):
            out.append(f"{res.benchmark.id}: {res.details['scenario_metric']['invalid_reason']}")
    return out


def _fmt(x: Any, scale: float = 1.0, digits: int = 4) -> str:
    return f"{x * scale:.{digits}g}" if isinstance(x, (int, float)) else "–"


def _timing_table(timing: dict[str, dict[str, float]]) -> list[str]:
    lines = ["| stage | n | mean ± SE (ms) | median | p90 | p99 | min | max |",
             "|---|---|---|---|---|---|---|---|"]
    for stage, s in timing.items():
        err = s.get("stderr_s")  # None for a single sample: no error estimate
        se = f" ± {_fmt(err, 1e3, 2)}" if err is not None else ""
        lines.append(f"| {stage} | {s['n']} | {_fmt(s['mean_s'], 1e3)}{se} | "
                     + " | ".join(_fmt(s[k], 1e3) for k in ("median_s", "p90_s", "p99_s", "min_s", "max_s"))
                     + " |")
    return lines


def _reuse(res: Results, name: str, target: Path) -> Path | None:
    """Copy the run's own plot ``name`` (listed in its ``artefacts``, drawn from the same data)
    to ``target`` instead of drawing it again; None when the run's file is gone."""
    import shutil

    for source in res.artefact_files():  # the run's own folder, wherever it was moved
        if source.name == name and source.is_file():
            return Path(shutil.copyfile(source, target))
    return None


def energy_beside_estimate(res: Results) -> list[str]:
    """The measured energy per inference (each active window's total and dynamic figure, or
    "not measured" with the reason) and, beside it, each profile's ESTIMATE labelled with
    its profile; [] when the run has no estimate."""
    estimate = res.scores.get("energy_estimate")
    if estimate is None or not isinstance(estimate.value, dict):
        return []
    meter = res.details.get("power_meter", {})
    rows = [(f"measured: {name.removesuffix('_energy_per_inference').replace('_', ' ')}",
             _fmt(score.value), f"{meter.get('name', '?')} meter")
            for name, score in res.scores.items()
            if name.endswith(("_total_energy_per_inference", "_dynamic_energy_per_inference"))]
    if not rows:
        rows = [("measured", "not measured", meter.get("reason", "no power meter"))]
    profiles = res.details.get("energy_estimate", {}).get("profiles", {})
    rows += [(f"estimate: {name}", _fmt(value), profiles.get(name, {}).get("label", name))
             for name, value in estimate.value.items()]
    return (["Energy per inference, measured and estimated (an estimate from operation counts, "
             "never a measurement):", "", "| figure | J/inference | source |", "|---|---|---|"]
            + [f"| {a} | {b} | {c} |" for a, b, c in rows] + [""])


def _runs(details: dict) -> list[tuple[str, dict]]:
    """The LoadGen runs of a result (PerformanceOnly, AccuracyOnly), without the
    calibration and search records that share ``details.loadgen``."""
    return [(mode, details["loadgen"][mode]) for mode in ("PerformanceOnly", "AccuracyOnly")
            if mode in details["loadgen"]]


def _calibration_lines(d: dict) -> list[str]:
    """The calibration and search of a result, as the report states them."""
    lines = []
    cal = d["loadgen"].get("calibration") or {}
    if cal.get("figures"):
        f = cal["figures"]
        lines.append(f"Calibration (untimed, {f['queries']} queries of {f['samples_per_query']} "
                     f"sample(s)): mean {_fmt(f['mean_s'], 1e3)} ms, p10 {_fmt(f['p10_s'], 1e3)} ms, "
                     f"p99 {_fmt(f['p99_s'], 1e3)} ms.")
    lines += [f"- {rule}" for rule in cal.get("rules", [])]
    search = d["loadgen"].get("search")
    if search:
        probes = ", ".join(f"{p['value']:g} {'VALID' if p['passed'] else 'no'}" for p in search["probes"])
        lines.append(f"Search of {search['searched']}: probes {probes}; best {search['best']} "
                     f"({search['stopped']}).")
    return lines + [""] if lines else []


def _section_results(res: Results, out_dir: Path, tag: str) -> list[str]:
    d = res.details
    lines = [f"### {res.benchmark.id} (v{res.benchmark.version})", ""]
    system = d.get("system")
    if isinstance(system, dict):  # the system, named apart from the benchmark (issue 57.1)
        sdk, target = system.get("sdk") or {}, system.get("target") or {}
        lines += [f"System `{system.get('label')}`: SUT `{(system.get('sut') or {}).get('entry')}`, "
                  f"SDK {sdk.get('name')} {sdk.get('version') or ''}, target "
                  f"{target.get('name') or target.get('desc') or target.get('kind')}, host "
                  f"{(system.get('host') or {}).get('node')}.", ""]
    load = d.get("load")
    if isinstance(load, dict):
        lines += [f"Machine load: load average {load.get('load_average_before')} before, mean "
                  f"{(load.get('load_average_during') or {}).get('mean_1min')} during, "
                  f"{load.get('load_average_after')} after; this run {load.get('cpu_time_s')} s "
                  f"CPU in {load.get('wall_s')} s wall on {load.get('logical_cores')} logical "
                  f"cores; busy: {load.get('busy')}.", ""]
    lines += ["| metric | value |", "|---|---|"]
    for name, score in res.scores.items():
        lines.append(f"| {name} | {format_value(score)} |")
    lines.append("")
    lines += energy_beside_estimate(res)
    if isinstance(d.get("front_end"), dict):  # the input encoder's cost, beside the model's
        lines += markdown_table(d["front_end"])
    if "timing" in d:
        lines += ["Per-sample timings (batch size 1; pre-processing and inference timed separately):", ""]
        lines += _timing_table(d["timing"]) + [""]
        raw = {k: decode_ns(v) for k, v in d.get("raw_timings_ns", {}).items()}
        if raw:
            png = _reuse(res, "latency.png", out_dir / f"{tag}_latency.png") or latency_histogram(
                raw, out_dir / f"{tag}_latency.png", f"{res.benchmark.id}: latency")
            lines += [f"![latency histogram]({png.name})", ""]
    lines += _calibration_lines(d)
    if d.get("accuracy"):
        text = describe_accuracy(d["accuracy"])
        lines += [f"Accuracy pass (LoadGen AccuracyOnly, quality target): {text}.", ""]
    for mode, lg in _runs(d):
        lat = lg.get("latency_s", {})
        pct = ", ".join(f"p{k} {_fmt(v, 1e3)} ms" for k, v in lat.get("percentiles_s", {}).items())
        lines += [f"LoadGen {lg.get('scenario')} / {mode}: **{lg.get('validity') or 'n/a'}**"
                  + (f" ({'; '.join(lg['invalid_reasons'])})" if lg.get("invalid_reasons") else "")
                  + f"; {lg.get('query_count')} queries; mean {_fmt(lat.get('mean_s'), 1e3)} ms; {pct}; "
                  f"power_begin {lg.get('power_begin')}, power_end {lg.get('power_end')}; "
                  f"logs `{lg.get('log_dir')}`.", ""]
    power = d.get("power")
    if power:
        lines += ["| window | duration (s) | meter samples | total power (W) | floor power (W) | "
                  "dynamic (W) | total J/inference | floor J/inference | dynamic J/inference |",
                  "|---|---|---|---|---|---|---|---|---|"]
        rows = [("floor", power["floor"])] + ([("idle (sleep)", power["idle"])] if "idle" in power
                                              else []) + list(power["active"].items())
        if power.get("loadgen"):
            rows.append(("loadgen", power["loadgen"]))
        for name, w in rows:
            total = w.get("total_energy_per_inference_j", w.get("energy_per_sample_j"))
            lines.append(f"| {name} | {_fmt(w['duration_s'])} | {w['meter_samples']} | "
                         f"{_fmt(w.get('total_power_w', w['mean_power_w']))} | "
                         f"{_fmt(w.get('floor_power_w'))} | {_fmt(w.get('dynamic_power_w'))} | "
                         f"{_fmt(total)} | {_fmt(w.get('floor_energy_per_inference_j'))} | "
                         f"{_fmt(w.get('dynamic_energy_per_inference_j'))} |")
        lines.append("")
        timeline = d.get("power_timeline")
        if timeline and timeline.get("t_s"):
            windows = {name: (w["t0_s"], w["t1_s"]) for name, w in rows}
            png = _reuse(res, "power.png", out_dir / f"{tag}_power.png") or power_trace(
                timeline, windows, out_dir / f"{tag}_power.png", f"{res.benchmark.id}: power")
            lines += [f"![power trace]({png.name})", ""]
    compliance = d.get("compliance")
    if compliance:
        lines += ["| compliance test | verdict | figures |", "|---|---|---|"]
        for test, v in compliance.items():
            figures = "; ".join(f"{k} {_fmt(x) if isinstance(x, float) else x}"
                                for k, x in v.get("figures", {}).items())
            lines.append(f"| {test} | {v['verdict']} | {v.get('reason') or figures} |")
        lines.append("")
    for flag in res.flags:
        lines.append(f"- **flag:** {flag}")
    lines.append("")
    return lines


def write_submission(results: Sequence[Results], system: SystemDescription, out_dir: str | Path) -> Path:
    """Write ``out_dir/submission.md`` and its PNGs; returns the Markdown path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    hw = system.hardware
    flow = workflow_diagram(out / "workflow.png", system.workflow)
    lines = [f"# NeuroBench system-track submission: {system.name}", "",
             "## System architecture", "", system.architecture, "",
             f"- processor: {hw.processor}", f"- memory: {hw.memory or '–'}",
             f"- accelerator: {hw.accelerator}", f"- board: {hw.board or '–'}",
             f"- software: {system.software or '–'}", "",
             "## Algorithm", "", system.algorithm, "",
             "## Workflow", "", f"![workflow]({flow.name})", ""]
    lines += [f"- **{step}**: {system.workflow.get(step, '–')}" for step in WORKFLOW] + [""]
    lines += ["## Timing measurement", "", system.timing or "–", ""]
    for res in results:
        d = res.details
        lg = next(lg for _, lg in _runs(d))
        res_ns = d.get("timer_resolution_ns", {})
        lines.append(f"- {res.benchmark.id}: MLPerf LoadGen {lg.get('loadgen_version') or ''} scenario "
                     f"{lg.get('scenario')}, batch size 1, {d.get('warmup_samples', 0)} warm-up samples; "
                     f"clock `time.perf_counter_ns` (measured step {_fmt(res_ns.get('min_step_ns'))} ns, "
                     f"declared {_fmt(res_ns.get('declared_ns'))} ns); requested settings "
                     f"`{res.config.get('loadgen')}`; effective min queries "
                     f"{lg.get('effective', {}).get('min_query_count')}, min duration "
                     f"{lg.get('effective', {}).get('min_duration_ms')} ms.")
    lines += ["", "## Power measurement", "", system.power.description or "–", "",
              f"- devices: {', '.join(system.power.devices) or '–'}",
              f"- components included: {', '.join(system.power.components) or '–'}",
              f"- sample rate: {_fmt(system.power.sample_rate_hz)} Hz", ""]
    for res in results:
        meter = res.details.get("power_meter", {})
        power = res.details.get("power", {})
        if meter.get("measured"):
            rule = ("energy/inference = power x data time of one sample (real-time rule)"
                    if power.get("latency_rule") == "data_time" else
                    "energy/inference = power x mean latency")
            if power.get("amortised"):
                rule = ("power measured in a separate amortised run over a long stream of "
                        "continuous samples, apart from the accuracy and latency runs; "
                        "energy/inference = stream energy / samples")
            lines.append(f"- {res.benchmark.id}: meter {meter.get('name')}, components included "
                         f"{', '.join(meter.get('components', []))}; time resolution "
                         f"{_fmt(meter.get('sample_rate_hz'))} samples/s; protocol: floor window "
                         "(configured and ready, not asleep) gives floor power, active windows give "
                         "total power, dynamic = total - floor; " + rule
                         + ("; a separate idle (sleep) window" if "idle" in power else "") + ".")
        else:
            lines.append(f"- {res.benchmark.id}: power not measured: {meter.get('reason', 'no meter')}.")
    lines += ["", "## Results", ""]
    for i, res in enumerate(results):
        lines += _section_results(res, out, f"r{i}")
    target = out / "submission.md"
    target.write_text("\n".join(lines))
    return target


#: The manifest ``neuromark system run`` writes beside the results; ``neuromark check`` reads it.
MANIFEST = "submission.json"
#: Where the submission report lies inside a submission folder.
REPORT = Path("submission") / "submission.md"


def describe(results: Sequence[Results]) -> SystemDescription:
    """A system description made from the results alone (machine provenance, SUT details,
    meter metadata), for submissions run without ``--system``; every statement is one the
    results support, and the report says it was generated."""
    first = results[0]
    machine = first.provenance.get("machine", {})
    gpus = ", ".join(machine.get("gpus") or ([machine["gpu"]] if machine.get("gpu") else []))
    suts = sorted({f"{r.details['sut'].get('name')} (entry {r.details['sut'].get('entry')})"
                   for r in results})
    staged = all("preprocess" in r.details.get("timing", {}) for r in results)
    meters = [r.details.get("power_meter", {}) for r in results]
    measured = [m for m in meters if m.get("measured")]
    rates = [m["sample_rate_hz"] for m in measured if m.get("sample_rate_hz")]
    power = PowerDescription(
        description=("Power measured with the meters below (generated from the results)." if measured
                     else "No power instrument: power not measured ("
                     + "; ".join(sorted({m.get("reason", "no meter") for m in meters})) + ")."),
        devices=sorted({m["name"] for m in measured}) or ["none (not measured)"],
        components=sorted({c for m in measured for c in m.get("components", [])})
        or ["none (not measured)"],
        sample_rate_hz=min(rates) if rates else None)
    workflow = {"data initialisation": "samples loaded into host memory by the LoadGen sample "
                                       "library (untimed)",
                "host pre-processing": "not used", "data loading": "not used (samples in memory)",
                "on-device pre-processing": ("timed separately as pre-processing" if staged
                                             else "not used (timed with inference)"),
                "inference": "timed per sample at batch size 1", "post-processing": "not used"}
    return SystemDescription(
        name=f"{', '.join(suts)} on {machine.get('cpu') or 'an unnamed host'}",
        architecture=(f"Generated from the results' provenance: {machine.get('platform', '?')}, "
                      f"CPU {machine.get('cpu') or '?'}, {machine.get('cores', '?')} logical cores, "
                      f"GPUs present: {gpus or 'none'}."),
        hardware=Hardware(processor=machine.get("cpu") or "unknown",
                          accelerator=gpus or "none"),
        software=", ".join(f"{k} {v}" for k, v in sorted(first.provenance.get("packages", {}).items())),
        algorithm="; ".join(f"{r.benchmark.id}: SUT {r.details['sut']}" for r in results),
        workflow=workflow,
        timing=("time.perf_counter_ns around each stage of each sample at batch size 1, after "
                "untimed warm-up samples; MLPerf LoadGen issues the queries and logs its own "
                "end-to-end latencies."),
        power=power)


def _accuracy_entry(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The manifest's view of a result's accuracy pass: metric, value, target, reference,
    threshold and verdict (or the exemption); None when the result has none."""
    if not record:
        return None
    keys = ("metric", "value", "reference", "reference_source", "target", "threshold",
            "higher_is_better", "verdict", "exempt")
    return {k: record[k] for k in keys if record.get(k) is not None} or None


def write_submission_dir(out_dir: str | Path, system: str | Path | None = None) -> tuple[Path, Path]:
    """Write ``out_dir/submission.json`` (the manifest) and ``out_dir/submission/submission.md``
    for the system-track results in ``out_dir``; returns both paths.

    The manifest names the profile the configs declared (all must agree), each benchmark's
    results file, scenario, LoadGen log folders (relative) and whether compliance tests ran.
    """
    out = Path(out_dir)
    results = load_results(out)
    profiles = sorted({str(r.config.get("profile", "test")) for r in results})
    if len(profiles) != 1:
        raise DataError(f"{out}: the configs declare different profiles {profiles}; a submission "
                        "has one (profile: test or submission)")
    description = load_description(system) if system else describe(results)
    report = write_submission(results, description, out / REPORT.parent)
    root = out.resolve()
    benchmarks = []
    for res in results:
        logs = {}
        for mode, lg in _runs(res.details):
            path = Path(lg["log_dir"]).resolve()
            logs[mode] = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        benchmarks.append({"id": res.benchmark.id,
                           "results": results_name(res.benchmark.id, res.model),
                           "scenario": res.config.get("loadgen", {}).get("scenario"),
                           "loadgen_logs": logs, "compliance": bool(res.config.get("compliance")),
                           "accuracy": _accuracy_entry(res.details.get("accuracy"))})
    manifest = write_json_atomic(out / MANIFEST, {
        "format": "neuromark-system-submission", "version": 1, "profile": profiles[0],
        "neuromark": __version__, "report": str(REPORT), "system_description":
            str(system) if system else "generated from the results", "benchmarks": benchmarks})
    return manifest, report


def finish_submission(folder: Path, system: str | Path | None = None, *,
                      allow_invalid: bool = False) -> int:
    """The submission of the system-track results in ``folder`` (``submission.json`` and
    ``submission/submission.md``, :func:`write_submission_dir`; ``system``: a system
    description YAML), written whatever their verdicts; returns 1 when one of them is
    INVALID (LoadGen's verdict, a failed scenario search, or accuracy below its quality
    target: :func:`invalid_results`) unless ``allow_invalid``, else 0. A folder without
    system results returns 0 and writes nothing; a results file that cannot be read raises
    (:class:`DataError`) instead of passing as "no system results"."""
    import sys

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
