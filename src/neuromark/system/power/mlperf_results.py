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
import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from neuromark.errors import DataError
from neuromark.system.loadgen_log import DETAIL, SUMMARY, parse_detail, summarize
from neuromark.system.power.spl import parse_time, read_spl, window_watts

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


#: The widest timezone offsets on Earth: UTC-12 to UTC+14, in seconds west of UTC.
TIMEZONE_RANGE_S = (-14 * 3600.0, 12 * 3600.0)
#: Result files larger than this are not hashed (power-dev's result files are logs of a
#: few MB); the finding says so instead of reading gigabytes.
MAX_HASHED_BYTES = 1 << 30


class _Unusable(Exception):
    """A value the audit cannot use; its finding is already recorded."""


def _timezone(root: Path, name: str, findings: list[dict[str, str]]) -> float | None:
    """``timezone`` of ``power/<name>`` in seconds west of UTC; None when the file is
    missing or holds none (a finding says so); :class:`_Unusable` when it holds one that is
    not a finite number of seconds within UTC-12..UTC+14."""
    file = root / "power" / name
    if not file.is_file():
        return None
    try:
        value = json.loads(file.read_text())["timezone"]
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError, RecursionError) as exc:
        findings.append({"file": f"power/{name}", "rule": "mlperf/timezone",
                         "message": f"no readable 'timezone' ({type(exc).__name__}: {exc})"})
        return None
    low, high = TIMEZONE_RANGE_S
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not low <= value <= high):
        findings.append({"file": f"power/{name}", "rule": "mlperf/timezone", "message":
                         f"'timezone' {value!r} is not a number of seconds west of UTC within "
                         f"{low:g}..{high:g} (UTC+14..UTC-12): the power times cannot be placed; "
                         "no figure computed"})
        raise _Unusable(name)
    return float(value)


def _count(values: dict[str, Any], key: str, where: str, *, integer: bool = True,
           default: Any = None) -> float:
    """``values[key]`` as a positive finite count (an int when ``integer``), or a
    :class:`DataError` naming the log and the field."""
    value = values.get(key, default)
    ok = (not isinstance(value, bool) and isinstance(value, (int, float))
          and math.isfinite(value) and value > 0 and (not integer or float(value).is_integer()))
    if not ok:
        kind = "a whole number >= 1" if integer else "a finite number > 0"
        raise DataError(f"{where}: field {key!r} is {value!r}, expected {kind}; no energy per "
                        "query or sample can be computed from it")
    return int(value) if integer else float(value)


def _energy(values: dict[str, Any], scenario: str, avg_w: float,
            duration_s: float, where: str) -> dict[str, Any]:
    """Energy per query (or per sample, from the keys v1.0 logs) and the key its count
    came from: the count is read from what the log holds, whatever the clock rules; every
    number is checked (finite, positive, whole where a count) naming ``where`` and the field."""
    if scenario in ("Offline", "Server"):
        return {}
    if "result_query_count" in values:
        count = _count(values, "result_query_count", where)
        return {"energy": avg_w * duration_s * 1000.0 / count, "energy_unit": "mJ/query",
                "query_count": count, "query_count_from": "result_query_count"}
    if scenario == "SingleStream" and "result_qps_with_loadgen_overhead" in values:
        samples = _count(values, "result_qps_with_loadgen_overhead", where, integer=False) * duration_s
        return {"energy": avg_w * duration_s / samples, "energy_unit": "J/sample",
                "query_count": samples,
                "query_count_from": "result_qps_with_loadgen_overhead x window (v1.0 rule)"}
    if scenario == "MultiStream" and "generated_query_count" in values:
        samples = (_count(values, "generated_query_count", where)
                   * _count(values, "generated_samples_per_query", where, default=1))
        return {"energy": avg_w * duration_s / samples, "energy_unit": "J/sample",
                "query_count": samples,
                "query_count_from": "generated_query_count x generated_samples_per_query (v1.0 rule)"}
    raise DataError(f"{where}: {scenario}: the detail log has no key to count queries by "
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
    try:
        window_s = parse_time(str(end)) - parse_time(str(begin))
    except ValueError:
        raise DataError(f"{folder / DETAIL}: field 'power_begin' {begin!r} or 'power_end' "
                        f"{end!r} is not LoadGen's MM-DD-YYYY HH:MM:SS.mmm") from None
    if not window_s > 0:
        raise DataError(f"{folder / DETAIL}: field 'power_end' {end} is not after 'power_begin' "
                        f"{begin}: the power window is empty or negative")
    trace = read_spl(folder / "spl.txt", timezone_s=server_tz)
    watts, duration = window_watts(trace, str(begin), str(end), client_tz)
    avg = sum(watts) / len(watts)
    scenario = str(summary.get("scenario"))
    if scenario not in ("Offline", "Server", "SingleStream", "MultiStream"):
        raise DataError(f"{folder / DETAIL}: unknown LoadGen scenario {scenario!r}")
    out: dict[str, Any] = {"scenario": scenario, "validity": summary.get("validity"),
                           "avg_power_w": avg, "samples": len(watts), "duration_s": duration,
                           "power_begin": begin, "power_end": end}
    out.update(_energy(values, scenario, avg, duration, str(folder / DETAIL)))
    if scenario in ("Offline", "Server"):
        out.update(metric=avg, unit="W")
    else:
        out.update(metric=out["energy"], unit=out["energy_unit"])
    return out


def _sha1(file: Path) -> str:
    """SHA-1 of ``file``, read in 1-MiB blocks (never the whole file at once)."""
    digest = hashlib.sha1()
    with file.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _recorded_hashes(root: Path, findings: list[dict[str, str]]) -> None:
    """Present files whose SHA-1 differs from the one power-dev recorded. A recorded path
    outside the folder, or a file over :data:`MAX_HASHED_BYTES`, is a finding, not read."""
    inside = root.resolve()
    for name in ("server.json", "client.json"):
        file = root / "power" / name
        if not file.is_file():
            continue
        try:
            recorded = json.loads(file.read_text()).get("results", {})
        except (json.JSONDecodeError, AttributeError, UnicodeDecodeError, RecursionError):
            continue
        for rel, digest in (recorded.items() if isinstance(recorded, dict) else ()):
            present = root / rel
            where = f"power/{name}: results[{rel!r}]"
            if not present.resolve().is_relative_to(inside):
                findings.append({"file": f"power/{name}", "rule": "mlperf/sha1", "message":
                                 f"{where} names a file outside the folder; not read"})
                continue
            if not present.is_file():
                continue
            size = present.stat().st_size
            if size > MAX_HASHED_BYTES:
                findings.append({"file": rel, "rule": "mlperf/sha1", "message":
                                 f"{size:,} bytes, more than the {MAX_HASHED_BYTES:,} this check "
                                 f"hashes (power-dev's result files are logs of a few MB); "
                                 f"not hashed, so not checked against {where}"})
                continue
            if _sha1(present) != digest:
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
        try:
            found = {n: _timezone(root, n, findings) for n in ("server.json", "client.json")}
        except _Unusable:
            out["timezones_s"] = None
            _recorded_hashes(root, findings)
            return out
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
        zones = audit.get("timezones_s")
        if not rules["local_times"]:
            clock = "UTC"
        elif zones is None:
            clock = "local times, with a timezone that cannot be used (below)"
        else:
            clock = (f"local times, server timezone {zones.get('server', 0):g} s, client "
                     f"{zones.get('client', 0):g} s")
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
