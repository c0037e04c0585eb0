"""Audit an MLPerf Inference power results folder, with the rules of the LoadGen that wrote it.

An MLPerf Inference submission with power keeps, per benchmark and scenario, a
``performance/`` folder laid out by ``mlcommons/power-dev``::

    power/client.json, client.log, ptd_logs.txt, server.json, server.log
    ranging/mlperf_log_detail.txt, mlperf_log_summary.txt, spl.txt
    run_1/mlperf_log_detail.txt, mlperf_log_summary.txt, spl.txt

:func:`audit_mlperf_results` computes MLPerf's power figure of ``run_1`` (and of
``ranging`` when it is there), names every file that is missing without refusing to
compute what the present files allow, and checks the SHA-1 each present file had when
power-dev's client and server recorded it (``results`` in ``client.json`` / ``server.json``).

What changed between LoadGen versions (our reading of MLPerf's submission checker,
``mlcommons/inference``, ``tools/submission/submission_checker.py``; its ``Config`` has
``has_power_utc_timestamps`` false for rounds v0.5-v1.0 and ``has_query_count_in_log``
false for v0.5-v1.1; the code here is our own):

- **Clocks.** LoadGen of v1.0 and older logs ``power_begin`` / ``power_end`` in the SUT's
  local time and PTDaemon logs the director's local time; the checker shifts each by its
  side's ``timezone`` (seconds west of UTC: ``client.json`` for LoadGen's times,
  ``server.json`` for spl.txt). Later LoadGen logs UTC, and both shifts are 0.
- **Query count.** v1.0 and older logs have no ``result_query_count``. Their checker counted
  SingleStream samples as ``result_qps_with_loadgen_overhead`` × the window, MultiStream
  samples as ``generated_query_count`` × ``generated_samples_per_query``, and gave the energy
  in J per sample. Later logs carry ``result_query_count``; the energy is in mJ per query
  (:func:`~neuromark.system.power.spl.mlperf_power_metric`).
- Offline and Server report the mean power in W in every version.

Which rules apply is read from the detail log: ``loadgen_version`` when it names a
``major.minor`` (1.1 and later: current rules), else ``loadgen_git_commit_date`` (LoadGen
committed before :data:`UTC_SINCE`, after the v1.0 submission's LoadGen of 2021-02-25:
v1.0 rules); ``round_override`` forces one.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from neuromark.errors import DataError
from neuromark.system.loadgen_log import DETAIL, SUMMARY, parse_detail, summarize
from neuromark.system.power.spl import read_spl, window_watts

#: The files of each part of the folder (power-dev's layout; MLPerf's REQUIRED_POWER_FILES).
LAYOUT = {"power": ("client.json", "client.log", "ptd_logs.txt", "server.json", "server.log"),
          "ranging": (DETAIL, SUMMARY, "spl.txt"), "run_1": (DETAIL, SUMMARY, "spl.txt")}
#: LoadGen committed on or after this date logs power times in UTC (our cut-off between
#: the v1.0 LoadGen, 2021-02-25, and v1.1's; see the module docstring).
UTC_SINCE = date(2021, 4, 1)
ROUNDS = ("v1.0", "current")


@dataclass(frozen=True)
class LoadgenRules:
    """The clock rule of one LoadGen generation: ``local_times`` (power times and spl.txt
    in each side's local time) and why it applies."""

    name: str
    local_times: bool
    why: str


def loadgen_rules(values: dict[str, Any], round_override: str | None = None) -> LoadgenRules:
    """The rules for a detail log's ``values`` (module docstring); ``round_override``:
    ``"v1.0"`` or ``"current"``."""
    if round_override is not None:
        if round_override not in ROUNDS:
            raise DataError(f"MLPerf round {round_override!r}: choose one of {', '.join(ROUNDS)}")
        return LoadgenRules(round_override, round_override == "v1.0", "given")
    version = str(values.get("loadgen_version", ""))
    match = re.match(r"\s*(\d+)\.(\d+)", version)
    if match and (int(match.group(1)), int(match.group(2))) >= (1, 1):
        return LoadgenRules("current", False, f"loadgen_version {version!r}")
    committed = str(values.get("loadgen_git_commit_date", ""))
    try:
        day = datetime.fromisoformat(committed).date()
    except ValueError:
        return LoadgenRules("current", False, f"loadgen_version {version!r} and no "
                            "readable loadgen_git_commit_date: current rules assumed")
    if day < UTC_SINCE:
        return LoadgenRules("v1.0", True, f"LoadGen committed {day} (before "
                            f"{UTC_SINCE}; loadgen_version {version!r})")
    return LoadgenRules("current", False, f"LoadGen committed {day}")


def _timezone(root: Path, name: str, findings: list[dict[str, str]]) -> float | None:
    file = root / "power" / name
    if not file.is_file():
        return None
    try:
        value = json.loads(file.read_text())["timezone"]
        return float(value)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        findings.append({"file": f"power/{name}", "rule": "mlperf/timezone",
                         "message": f"no readable 'timezone' ({type(exc).__name__}: {exc})"})
        return None


def _energy(values: dict[str, Any], scenario: str, avg_w: float,
            duration_s: float) -> dict[str, Any]:
    """Energy per query (or per sample, from the keys v1.0 logs) and the key its count
    came from: the count is read from what the log holds, whatever the clock rules."""
    if scenario in ("Offline", "Server"):
        return {}
    if "result_query_count" in values:
        count = int(values["result_query_count"])
        if count < 1:
            raise DataError(f"{scenario}: result_query_count must be >= 1, got {count}")
        return {"energy": avg_w * duration_s * 1000.0 / count, "energy_unit": "mJ/query",
                "query_count": count, "query_count_from": "result_query_count"}
    if scenario == "SingleStream" and "result_qps_with_loadgen_overhead" in values:
        samples = float(values["result_qps_with_loadgen_overhead"]) * duration_s
        return {"energy": avg_w * duration_s / samples, "energy_unit": "J/sample",
                "query_count": samples,
                "query_count_from": "result_qps_with_loadgen_overhead x window (v1.0 rule)"}
    if scenario == "MultiStream" and "generated_query_count" in values:
        samples = int(values["generated_query_count"]) * int(values.get("generated_samples_per_query", 1))
        return {"energy": avg_w * duration_s / samples, "energy_unit": "J/sample",
                "query_count": samples,
                "query_count_from": "generated_query_count x generated_samples_per_query (v1.0 rule)"}
    raise DataError(f"{scenario}: the detail log has no key to count queries by "
                    "(result_query_count, or result_qps_with_loadgen_overhead / "
                    "generated_query_count for v1.0 logs)")


def pass_figure(folder: Path, server_tz: float, client_tz: float
                ) -> dict[str, Any]:
    """MLPerf's power figure of one pass folder (``run_1`` or ``ranging``)."""
    summary = summarize(folder)
    values = parse_detail(folder / DETAIL).values
    begin, end = summary.get("power_begin"), summary.get("power_end")
    if not begin or not end:
        raise DataError(f"{folder / DETAIL}: no power_begin / power_end records")
    trace = read_spl(folder / "spl.txt", timezone_s=server_tz)
    watts, duration = window_watts(trace, str(begin), str(end), client_tz)
    avg = sum(watts) / len(watts)
    scenario = str(summary.get("scenario"))
    if scenario not in ("Offline", "Server", "SingleStream", "MultiStream"):
        raise DataError(f"{folder / DETAIL}: unknown LoadGen scenario {scenario!r}")
    out: dict[str, Any] = {"scenario": scenario, "validity": summary.get("validity"),
                           "avg_power_w": avg, "samples": len(watts), "duration_s": duration,
                           "power_begin": begin, "power_end": end}
    out.update(_energy(values, scenario, avg, duration))
    if scenario in ("Offline", "Server"):
        out.update(metric=avg, unit="W")
    else:
        out.update(metric=out["energy"], unit=out["energy_unit"])
    return out


def _recorded_hashes(root: Path, findings: list[dict[str, str]]) -> None:
    """Present files whose SHA-1 differs from the one power-dev recorded."""
    for name in ("server.json", "client.json"):
        file = root / "power" / name
        if not file.is_file():
            continue
        try:
            recorded = json.loads(file.read_text()).get("results", {})
        except (json.JSONDecodeError, AttributeError):
            continue
        for rel, digest in (recorded.items() if isinstance(recorded, dict) else ()):
            present = root / rel
            if present.is_file() and hashlib.sha1(present.read_bytes()).hexdigest() != digest:
                findings.append({"file": rel, "rule": "mlperf/sha1", "message":
                                 f"SHA-1 differs from the one power/{name} recorded"})


def is_mlperf_results_folder(root: str | Path) -> bool:
    """Whether ``root`` looks like an MLPerf power results folder (``run_1/``, ``ranging/``
    or ``power/server.json``) rather than a neuromark submission."""
    root = Path(root)
    return ((root / "run_1").is_dir() or (root / "ranging").is_dir()
            or (root / "power" / "server.json").is_file())


def audit_mlperf_results(root: str | Path, round_override: str | None = None) -> dict[str, Any]:
    """Audit an MLPerf power results folder (module docstring). Returns ``folder``,
    ``rules``, ``timezones_s``, ``testing`` (run_1's figure, or None), ``ranging``,
    ``missing`` (relative paths) and ``findings`` (``file``, ``rule``, ``message``)."""
    root = Path(root)
    findings: list[dict[str, str]] = []
    missing: list[str] = []
    for part, files in LAYOUT.items():
        if not (root / part).is_dir():
            missing.append(f"{part}/")
            findings.append({"file": f"{part}/", "rule": "mlperf/layout",
                             "message": f"folder missing ({', '.join(files)} expected)"})
            continue
        for name in files:
            if not (root / part / name).is_file():
                missing.append(f"{part}/{name}")
                findings.append({"file": f"{part}/{name}", "rule": "mlperf/layout",
                                 "message": "required file is missing (power-dev layout)"})
    out: dict[str, Any] = {"folder": str(root), "missing": missing, "findings": findings,
                           "testing": None, "ranging": None}
    detail = next((root / p / DETAIL for p in ("run_1", "ranging") if (root / p / DETAIL).is_file()),
                  None)
    if detail is None:
        out["rules"] = None
        return out
    rules = loadgen_rules(parse_detail(detail).values, round_override)
    out["rules"] = {"name": rules.name, "local_times": rules.local_times, "why": rules.why}
    server_tz = client_tz = 0.0
    if rules.local_times:
        found = {n: _timezone(root, n, findings) for n in ("server.json", "client.json")}
        for name, value in found.items():
            if value is None:
                findings.append({"file": f"power/{name}", "rule": "mlperf/timezone", "message":
                                 "this LoadGen logs local times, and the timezone to shift "
                                 "them by is unknown: UTC assumed"})
        server_tz, client_tz = found["server.json"] or 0.0, found["client.json"] or 0.0
    out["timezones_s"] = {"server": server_tz, "client": client_tz}
    for mode, part in (("testing", "run_1"), ("ranging", "ranging")):
        folder = root / part
        if not all((folder / n).is_file() for n in (DETAIL, "spl.txt")):
            continue
        try:
            out[mode] = pass_figure(folder, server_tz, client_tz)
        except DataError as exc:
            findings.append({"file": f"{part}/", "rule": "mlperf/power-metric", "message": str(exc)})
    _recorded_hashes(root, findings)
    if out["testing"] is not None:
        out.update(metric=out["testing"]["metric"], unit=out["testing"]["unit"])
    return out


def format_audit(audit: dict[str, Any]) -> str:
    """The text ``neuromark check`` prints for :func:`audit_mlperf_results`."""
    lines = [f"MLPerf power results folder: {audit['folder']}"]
    rules = audit.get("rules")
    if rules:
        zones = audit.get("timezones_s", {})
        clock = (f"local times, server timezone {zones.get('server', 0):g} s, client "
                 f"{zones.get('client', 0):g} s" if rules["local_times"] else "UTC")
        lines.append(f"rules: LoadGen {rules['name']} ({rules['why']}); clocks: {clock}")
    for mode in ("testing", "ranging"):
        fig = audit.get(mode)
        if fig is None:
            continue
        text = (f"{mode}: {fig['scenario']} {fig['validity']}: average power "
                f"{fig['avg_power_w']:.6f} W over {fig['samples']} samples "
                f"({fig['duration_s']:.3f} s)")
        if "energy" in fig:
            text += (f"; {fig['energy']:.6g} {fig['energy_unit']} (count from "
                     f"{fig['query_count_from']})")
        lines.append(text)
    for f in audit["findings"]:
        lines.append(f"{f['file']}: {f['rule']}: {f['message']}")
    return "\n".join(lines)
