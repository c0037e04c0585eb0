"""Parse MLPerf LoadGen's logs: ``mlperf_log_detail.txt``, ``mlperf_log_summary.txt`` and
``mlperf_log_accuracy.json``.

The detail log has one ``:::MLLOG {json}`` record per line (key, value, time_ms, metadata
with ``is_error`` / ``is_warning``); see the LoadGen docs,
https://github.com/mlcommons/inference/tree/master/loadgen (``logging.cc``). Durations are
in ns there and converted to seconds here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.errors import DataError

DETAIL = "mlperf_log_detail.txt"
SUMMARY = "mlperf_log_summary.txt"
ACCURACY = "mlperf_log_accuracy.json"

_PERCENTILE = re.compile(r"^result_(\d+\.\d+)_percentile_(?:per_query_)?latency_ns$")


@dataclass
class DetailLog:
    """Records of a detail log: last value per key, plus errors and warnings in order."""

    values: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse_detail(path: str | Path) -> DetailLog:
    """Read ``mlperf_log_detail.txt``; a malformed line raises :class:`DataError` with its line."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"LoadGen detail log not found: {file}")
    log = DetailLog()
    for lineno, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
        if not line.startswith(":::MLLOG "):
            continue
        try:
            record = json.loads(line[len(":::MLLOG "):])
        except json.JSONDecodeError as exc:
            raise DataError(f"{file}:{lineno}: malformed MLLOG record: {exc}") from None
        except RecursionError:
            raise DataError(f"{file}:{lineno}: malformed MLLOG record: nested too deep") from None
        if not isinstance(record, dict) or not isinstance(record.get("metadata") or {}, dict):
            raise DataError(f"{file}:{lineno}: malformed MLLOG record: not an object with a "
                            "key, a value and metadata")
        key, value = record.get("key"), record.get("value")
        meta = record.get("metadata") or {}
        if meta.get("is_error"):
            log.errors.append(f"{key}: {value}")
        elif meta.get("is_warning"):
            log.warnings.append(f"{key}: {value}")
        log.values[key] = value
    return log


def parse_summary(path: str | Path) -> dict[str, str]:
    """``key : value`` lines of ``mlperf_log_summary.txt`` (keys stripped); {} if absent
    (AccuracyOnly runs write no summary)."""
    file = Path(path)
    if not file.is_file():
        return {}
    out: dict[str, str] = {}
    for line in file.read_text(errors="replace").splitlines():
        if ":" in line and not line.lstrip().startswith("*"):
            key, _, value = line.partition(":")
            out.setdefault(key.strip(), value.strip())
    return out


def _invalid_reasons(v: dict[str, Any]) -> list[str]:
    reasons = []
    if v.get("result_min_duration_met") is False:
        reasons.append(f"min duration not met ({v.get('effective_min_duration_ms')} ms requested)")
    if v.get("result_min_queries_met") is False:
        reasons.append(f"min query count not met ({v.get('effective_min_query_count')} requested, "
                       f"{v.get('result_query_count')} run)")
    if v.get("result_perf_constraints_met") is False:
        reasons.append("performance constraints not met (latency bound exceeded at the "
                       f"target percentile; {v.get('result_overlatency_query_count')} queries "
                       "over latency)")
    if v.get("early_stopping_met") is False:
        text = " ".join(str(v.get("early_stopping_result", "")).replace("*", "").split())
        reasons.append(f"early stopping not met: {text}")
    if v.get("result_invalid_reason"):
        reasons.append(str(v["result_invalid_reason"]).strip())
    return reasons


def _early_stopping_estimate(v: dict[str, Any]) -> float | None:
    """LoadGen's early-stopping estimate of the scenario's target-percentile latency (s):
    ``early_stopping_latency_ss`` (p90) for SingleStream, ``_ms`` (p99) for MultiStream;
    None for other scenarios and for logs without it."""
    key = {"SingleStream": "early_stopping_latency_ss",
           "MultiStream": "early_stopping_latency_ms"}.get(str(v.get("effective_scenario")))
    value = v.get(key) if key else None
    return value * 1e-9 if isinstance(value, (int, float)) and value > 0 else None


def summarize(log_dir: str | Path) -> dict[str, Any]:
    """The figures of one LoadGen run as plain JSON (seconds, not ns).

    Keys: ``scenario``, ``mode``, ``validity`` ("VALID"/"INVALID"/None in accuracy mode),
    ``invalid_reasons``, ``query_count``, ``samples_per_query``, ``sample_count``,
    ``latency_s`` (min/max/mean/percentiles),
    ``qps`` (with/without LoadGen overhead, SingleStream/MultiStream),
    ``samples_per_second`` (Offline; Server: completed), ``early_stopping`` and
    ``early_stopping_latency_s`` (the early-stopping percentile estimate, stream scenarios),
    ``power_begin`` / ``power_end`` (LoadGen's wall-clock strings), ``requested`` and
    ``effective`` settings, ``errors`` and ``warnings``. The summary file's verdict must
    agree with the detail log's (a mixed-up log folder raises :class:`DataError`).
    """
    log_dir = Path(log_dir)
    log = parse_detail(log_dir / DETAIL)
    v = log.values
    latency: dict[str, Any] = {}
    percentiles: dict[str, float] = {}
    for key, value in v.items():
        match = _PERCENTILE.match(key)
        if match:
            percentiles[match.group(1).rstrip("0").rstrip(".")] = value * 1e-9
    for name in ("min", "max", "mean"):
        for key in (f"result_{name}_latency_ns", f"result_{name}_query_latency_ns"):
            if key in v:
                latency[f"{name}_s"] = v[key] * 1e-9
                break
    if percentiles:
        latency["percentiles_s"] = percentiles
    validity = v.get("result_validity")
    out: dict[str, Any] = {
        "scenario": v.get("effective_scenario"),
        "mode": v.get("effective_test_mode"),
        "validity": validity,
        "invalid_reasons": _invalid_reasons(v) if validity == "INVALID" else [],
        "query_count": v.get("result_query_count"),
        "samples_per_query": v.get("generated_samples_per_query"),
        "sample_count": (v["result_query_count"] * v["generated_samples_per_query"]
                         if "result_query_count" in v and "generated_samples_per_query" in v else None),
        "latency_s": latency,
        "early_stopping": v.get("early_stopping_result"),
        "early_stopping_latency_s": _early_stopping_estimate(v),
        "power_begin": v.get("power_begin"),
        "power_end": v.get("power_end"),
        "requested": {k[len("requested_"):]: val for k, val in v.items() if k.startswith("requested_")},
        "effective": {k[len("effective_"):]: val for k, val in v.items() if k.startswith("effective_")},
        "errors": log.errors,
        "warnings": log.warnings,
        "loadgen_version": v.get("loadgen_version"),
    }
    summary = parse_summary(log_dir / SUMMARY)
    if summary and summary.get("Result is") not in (None, validity):
        raise DataError(f"{log_dir}: {SUMMARY} says {summary.get('Result is')!r} but {DETAIL} says "
                        f"{validity!r}; the logs come from different runs")
    if "result_qps_with_loadgen_overhead" in v:
        out["qps"] = {"with_loadgen_overhead": v["result_qps_with_loadgen_overhead"],
                      "without_loadgen_overhead": v.get("result_qps_without_loadgen_overhead")}
    for key in ("result_samples_per_second", "result_completed_samples_per_sec"):
        if key in v:
            out["samples_per_second"] = v[key]
    if "result_scheduled_samples_per_sec" in v:
        out["scheduled_samples_per_second"] = v["result_scheduled_samples_per_sec"]
    return out


def read_accuracy_log(path: str | Path, dtype: str) -> dict[int, np.ndarray]:
    """Decode ``mlperf_log_accuracy.json``: sample index -> response array.

    ``dtype`` is the numpy dtype the SUT declared and the run recorded (e.g. ``"<f4"``); it is
    never guessed. A payload whose byte length is not a multiple of the item size raises
    :class:`DataError` naming the sample. Repeated samples keep their last response.
    """
    file = Path(path)
    if not file.is_file():
        raise DataError(f"LoadGen accuracy log not found: {file}")
    try:
        entries = json.loads(file.read_text())
    except json.JSONDecodeError as exc:
        raise DataError(f"{file}: not valid JSON: {exc}") from None
    dt = np.dtype(dtype)
    out: dict[int, np.ndarray] = {}
    for entry in entries:
        raw = bytes.fromhex(entry["data"])
        if len(raw) % dt.itemsize:
            raise DataError(f"{file}: sample {entry['qsl_idx']}: {len(raw)} bytes is not a "
                            f"multiple of the recorded dtype {dt.str} ({dt.itemsize} bytes)")
        out[int(entry["qsl_idx"])] = np.frombuffer(raw, dtype=dt).copy()
    return out
