"""The power rules of ``neuromark check`` (:mod:`neuromark.system.checker`).

- ``power/not-measured-reason``, ``power/floor``, ``power/samples``,
  ``power/energy-per-inference``: as before (a reason for "not measured", a floor window,
  at least :data:`~neuromark.system.power.windows.MIN_SAMPLES` readings per window, total
  energy per inference).
- ``power/plausible``: every window's ``energy_j``, ``mean_power_w`` and ``peak_power_w``
  is finite and > 0, and the ptd meter's log (when found) holds no sample <= 0 W or NaN
  (MLPerf's checker drops such samples; here the run is refused).
- ``power/point``: a measured result states where its meter measured
  (``details.power_meter.point``: wall, board, shunt, rail or package).
- ``power/definitions``: every window records its length, sample count, sample rate and
  peak power (power format 3 and later).
- ``power/window-length``: in the ``submission`` profile no window is shorter than
  :data:`~neuromark.system.power.windows.MIN_WINDOW_S` (NeuroBench system rules review).
- ``power/mlperf-layout``, ``power/mlperf-metric``: a run with MLPerf's two passes holds
  power-dev's layout, and its ``mlperf_power`` figure is what MLPerf's submission checker
  computes from the ``run_1`` logs (:func:`~neuromark.system.power.mlperf.mlperf_figures`).

A task's own rules on its figures (e.g. the share of solves over their deadline) are its
family's ``checker_rules`` entry (:data:`neuromark.registry.checker_rules`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from neuromark.errors import DataError
from neuromark.system.power.mlperf import check_layout, mlperf_figures
from neuromark.system.power.spec import POINTS
from neuromark.system.power.spl import read_spl
from neuromark.system.power.windows import MIN_SAMPLES, MIN_WINDOW_S

#: Window fields that hold a measured total: each must be finite and > 0 (power/plausible).
PLAUSIBLE_FIELDS = ("energy_j", "mean_power_w", "peak_power_w")
#: The per-window definitions a format-3 power section records.
WINDOW_FIELDS = ("duration_s", "meter_samples", "sample_rate_hz", "peak_power_w")


def check_power(audit: Any, file: Path, details: dict, profile: str, base: Path) -> None:
    """The power rules for one system result ``file`` (``base``: its output folder)."""
    meter = details.get("power_meter", {})
    if not meter.get("measured"):
        if not str(meter.get("reason", "")).strip():
            audit.add(file, "power/not-measured-reason", "power not measured and no reason given")
        return
    power = details.get("power")
    if not isinstance(power, dict) or "floor" not in power:
        audit.add(file, "power/floor", "a meter ran but there is no floor window (details.power.floor)")
        return
    windows = {"floor": power["floor"], **({"idle": power["idle"]} if "idle" in power else {}),
               **power.get("active", {}), **({"loadgen": power["loadgen"]}
                                             if "loadgen" in power else {})}
    current = int(power.get("format", 1)) >= 3
    if current and meter.get("point") not in POINTS:
        audit.add(file, "power/point", f"the meter's measurement point is {meter.get('point')!r}; "
                  f"declare meter.point as one of {', '.join(POINTS)}")
    for name, w in windows.items():
        n = w.get("meter_samples", 0)
        if n < MIN_SAMPLES and name != "loadgen":
            audit.add(file, "power/samples", f"power window {name!r} holds {n} meter samples "
                      f"(< {MIN_SAMPLES}); lengthen it or raise the meter's sample rate")
        missing = [k for k in WINDOW_FIELDS if k not in w]
        if current and missing:
            audit.add(file, "power/definitions", f"power window {name!r} does not record "
                      f"{', '.join(missing)}")
        duration = w.get("duration_s")
        if profile == "submission" and isinstance(duration, (int, float)) and duration < MIN_WINDOW_S:
            audit.add(file, "power/window-length", f"power window {name!r} lasts {duration:.3g} s "
                      f"(< {MIN_WINDOW_S:g} s: board capacitance biases short windows)")
    for name, w in windows.items():
        for key in PLAUSIBLE_FIELDS:
            value = w.get(key)
            if key in w and (not isinstance(value, (int, float)) or isinstance(value, bool)
                             or not math.isfinite(value) or value <= 0):
                audit.add(file, "power/plausible", f"power window {name!r}: {key} is {value!r}; "
                          "a measured power or energy must be a finite number > 0")
    if meter.get("name") == "ptd" and meter.get("file"):
        check_ptd_log(audit, file, Path(str(meter["file"])), base)
    for name, w in power.get("active", {}).items():
        if "total_energy_per_inference_j" not in w:
            audit.add(file, "power/energy-per-inference", f"window {name!r} has no total energy "
                      "per inference")
    if "mlperf_power" in details:
        check_mlperf(audit, file, details["mlperf_power"], meter, base)


def check_ptd_log(audit: Any, file: Path, log: Path, base: Path) -> None:
    """Every sample of the ptd meter's log (when it is still where the result says, or
    beside the result) is finite and above 0 W: :func:`~neuromark.system.power.spl.read_spl`
    names the first bad line."""
    for candidate in (log, base / log, base / log.name):
        if candidate.is_file():
            try:
                read_spl(candidate)
            except DataError as exc:
                audit.add(file, "power/plausible", f"the ptd meter's log: {exc}")
            return


def check_mlperf(audit: Any, file: Path, figures: dict, meter: dict, base: Path) -> None:
    """power-dev's layout under ``base/<folder>`` and the recomputed MLPerf figure."""
    folder = base / str(figures.get("folder", "mlperf_power"))
    for rel, message in check_layout(folder):
        audit.add(folder / rel, "power/mlperf-layout", message)
    try:
        again = mlperf_figures(folder, float(meter.get("timezone_s") or 0.0))
    except DataError as exc:
        audit.add(folder, "power/mlperf-metric", str(exc))
        return
    claimed = figures.get("metric")
    if not isinstance(claimed, (int, float)) or not math.isclose(claimed, again["metric"],
                                                                 rel_tol=1e-9):
        audit.add(file, "power/mlperf-metric", f"mlperf_power {claimed} {figures.get('unit')} "
                  f"but the run_1 logs give {again['metric']:.6g} {again['unit']} (MLPerf's "
                  "submission checker formula)")
