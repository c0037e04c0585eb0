"""What ``neuromark check`` distrusts in a submission before auditing it
(:mod:`neuromark.system.checker`): every finding names the file, the key and the rule.

- ``layout/outside``: a file or folder the submission names (the manifest, results, report,
  LoadGen logs) is a symlink, an absolute path or a ``..`` path out of the folder.
- ``layout/json``: a JSON file that is not valid, nests deeper than Python's parser allows
  (RecursionError) or is not an object; ``layout/schema``: a key of the wrong type (a
  manifest entry that is a string, string timeouts, a string compliance verdict).
- ``loadgen/figures``: a LoadGen detail log's figures are numbers, finite and not
  negative; min <= mean <= max, min <= every percentile <= max, percentiles ascending; the
  QPS a run claims (with and without LoadGen's overhead, samples per second) fits its query
  count and its longest query: a run lasts at least its longest query,
  ``count / qps >= max latency``.
- ``results/figures``: a system result's scores and timing figures are finite and not
  negative, with min <= median, p90 <= max.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

#: Floating-point slack of the consistency checks (LoadGen rounds QPS to 2 decimals).
_REL = 1e-3


def confined(audit: Any, root: Path, given: Any, rule: str, what: str) -> Path | None:
    """``root / given`` when ``given`` is a relative path inside ``root`` with no symlink on
    the way; else None and a ``layout/outside`` (or ``layout/schema``) finding."""
    if not isinstance(given, str) or not given:
        audit.add(root / "submission.json", "layout/schema", f"{what}: {given!r} is not a path")
        return None
    rel = Path(given)
    if rel.is_absolute() or ".." in rel.parts:
        audit.add(rel if rel.is_absolute() else root / rel, "layout/outside",
                  f"{what} {given!r} lies outside the submission folder; a submission holds "
                  "its own files (relative paths, no '..')")
        return None
    path = root
    for part in rel.parts:
        path = path / part
        if path.is_symlink():
            audit.add(path, "layout/outside", f"{what} is a symlink (to {path.readlink()}); a "
                      "submission holds its own files, not links")
            return None
    return path


def load_json(audit: Any, file: Path, rule: str, kind: type = dict) -> Any:
    """The JSON of ``file`` when it is a ``kind``; None and one finding otherwise."""
    if file.is_symlink():
        audit.add(file, "layout/outside", "is a symlink; a submission holds its own files")
        return None
    if not file.is_file():
        audit.add(file, rule, "required file is missing")
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        audit.add(file, "layout/json", f"not valid JSON ({exc})")
        return None
    except RecursionError:
        audit.add(file, "layout/json", "JSON nested too deep to read")
        return None
    if not isinstance(data, kind):
        audit.add(file, "layout/json", f"holds a JSON {type(data).__name__}, not an "
                  f"{'object' if kind is dict else kind.__name__}")
        return None
    return data


def schema(audit: Any, file: Path, key: str, value: Any, kind: type | tuple[type, ...]) -> bool:
    """True when ``value`` is a ``kind``; else a ``layout/schema`` finding naming ``key``."""
    if isinstance(value, kind) and not isinstance(value, bool) or (kind is bool and
                                                                    isinstance(value, bool)):
        return True
    names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
    audit.add(file, "layout/schema", f"{key} is {type(value).__name__} {_short(value)}, "
              f"expected {names}")
    return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def numbers(audit: Any, file: Path, key: str, values: Any) -> bool:
    """``values`` is a list of finite numbers; else a ``layout/schema`` finding."""
    if isinstance(values, list) and all(_number(v) and math.isfinite(v) for v in values):
        return True
    audit.add(file, "layout/schema", f"{key} is {_short(values)}, expected a list of finite "
              "numbers")
    return False


def manifest_entries(audit: Any, file: Path, manifest: dict) -> list[dict]:
    """The manifest's benchmark entries that are objects with a results name and a
    mapping of LoadGen log folders (the others: one finding each)."""
    benchmarks = manifest.get("benchmarks") or []
    if not schema(audit, file, "benchmarks", benchmarks, list):
        return []
    out = []
    for i, entry in enumerate(benchmarks):
        key = f"benchmarks[{i}]"
        if not schema(audit, file, key, entry, dict) or \
                not schema(audit, file, f"{key}.results", entry.get("results"), str) or \
                not schema(audit, file, f"{key}.loadgen_logs", entry.get("loadgen_logs", {}), dict):
            continue
        out.append(entry)
    return out


_COUNTS = ("result_query_count", "generated_samples_per_query", "qsl_reported_total_count")


def log_figures(audit: Any, file: Path, v: dict[str, Any]) -> bool:
    """The ``loadgen/figures`` rules on a detail log's values; False when a figure is not a
    number at all (the log cannot be summarised)."""
    figures = {k: x for k, x in v.items() if isinstance(k, str) and k.startswith("result_") and (
        k.endswith("_ns") or "_qps_" in k or k.endswith(("_per_sec", "_per_second"))
        or k in _COUNTS)}
    figures.update({k: v[k] for k in _COUNTS if k in v})
    bad = [k for k, x in figures.items() if not _number(x)]
    for k in bad:
        audit.add(file, "layout/schema", f"{k} is {type(figures[k]).__name__} "
                  f"{_short(figures[k])}, expected a number")
    if bad:
        return False
    for k, x in figures.items():
        if not math.isfinite(x) or x < 0:
            audit.add(file, "loadgen/figures", f"{k} = {x!r}: a LoadGen figure is finite and "
                      "not negative")
    if any(not math.isfinite(x) or x < 0 for x in figures.values()):
        return True
    lat = {k[len("result_"):-len("_ns")].replace("_per_query", "").replace("_query", ""): x
           for k, x in figures.items() if k.endswith("latency_ns")}
    lo, hi = lat.get("min_latency"), lat.get("max_latency")
    if lo is not None and hi is not None and lo > hi:
        audit.add(file, "loadgen/figures", f"min latency {lo} ns > max latency {hi} ns")
    elif lo is not None and hi is not None:
        inner = {k: x for k, x in lat.items() if k.endswith("percentile_latency") or k == "mean_latency"}
        for k, x in inner.items():
            if not lo <= x <= hi:
                audit.add(file, "loadgen/figures", f"{k.replace('_', ' ')} {x} ns is outside "
                          f"[min {lo}, max {hi}] ns")
    pcts = sorted((float(k.split("_")[0]), x) for k, x in lat.items() if k.endswith("percentile_latency"))
    for (p, x), (q, y) in zip(pcts, pcts[1:]):
        if y < x:
            audit.add(file, "loadgen/figures", f"{q:g}th percentile latency {y} ns < {p:g}th "
                      f"percentile {x} ns")
    _qps(audit, file, figures, hi)
    return True


def _qps(audit: Any, file: Path, figures: dict, longest_ns: float | None) -> None:
    count = figures.get("result_query_count")
    with_, without = (figures.get("result_qps_with_loadgen_overhead"),
                      figures.get("result_qps_without_loadgen_overhead"))
    if count and longest_ns and with_:
        if count / with_ < longest_ns * 1e-9 * (1 - _REL):
            audit.add(file, "loadgen/figures", f"{with_:g} QPS over {count} queries means a run "
                      f"of {count / with_:.3g} s, shorter than its longest query "
                      f"({longest_ns * 1e-9:.3g} s)")
    per_s = figures.get("result_samples_per_second")
    samples = (count or 0) * (figures.get("generated_samples_per_query") or 0)
    if samples and longest_ns and per_s and samples / per_s < longest_ns * 1e-9 * (1 - _REL):
        audit.add(file, "loadgen/figures", f"{per_s:g} samples/s over {samples} samples means a "
                  f"run of {samples / per_s:.3g} s, shorter than its longest query "
                  f"({longest_ns * 1e-9:.3g} s)")
    if without and longest_ns and count and count / without < longest_ns * 1e-9 * (1 - _REL):
        audit.add(file, "loadgen/figures", f"{without:g} QPS without LoadGen overhead over {count} "
                  f"queries is less time than its longest query ({longest_ns * 1e-9:.3g} s)")


def result_figures(audit: Any, file: Path, data: dict) -> None:
    """The ``results/figures`` rules on a system result's scores and ``details.timing``."""
    for name, score in (data.get("scores") or {}).items():
        value = score.get("value") if isinstance(score, dict) else score
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for key, x in items:
            if _number(x) and (not math.isfinite(x) or x < 0):
                audit.add(file, "results/figures", f"scores.{name}{'.' + key if key else ''} = "
                          f"{x!r}: a latency, throughput or energy is finite and not negative")
    timing = data["details"].get("timing")
    if not schema(audit, file, "details.timing", timing if timing is not None else {}, dict):
        return
    for stage, stats in (timing or {}).items():
        if not schema(audit, file, f"details.timing.{stage}", stats, dict):
            continue
        for key, x in stats.items():
            if _number(x) and (not math.isfinite(x) or x < 0):
                audit.add(file, "results/figures", f"details.timing.{stage}.{key} = {x!r}: "
                          "timings are finite and not negative")
        lo, hi = stats.get("min_s"), stats.get("max_s")
        if _number(lo) and _number(hi):
            for key in ("mean_s", "median_s", "p90_s", "p99_s"):
                x = stats.get(key)
                if _number(x) and not lo <= x <= hi:
                    audit.add(file, "results/figures", f"details.timing.{stage}.{key} = {x!r} is "
                              f"outside [min_s {lo!r}, max_s {hi!r}]")
