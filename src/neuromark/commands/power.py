"""``neuromark power TRACE.csv --window floor=T0:T1 --window active=T2:T3 [--inferences N | --latency S]``.

Analyses an instrument's power log in the NeuroBench spec's words: the ``floor`` window
(configured and ready, not asleep) gives floor power; every other window its total power,
dynamic power (total − floor) and, with ``--inferences`` (window energy / N) or ``--latency``
(power × S, the mean latency or the data time of one sample), total, floor and dynamic energy
per inference. A window named ``idle`` beside a ``floor`` window is a true idle (sleep)
window and is only reported; ``idle`` without ``floor`` is the old name of the floor window
and is read as it, with a note.
Times are trace seconds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from neuromark.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "power", help="mean power and energy of windows of a CSV power trace",
        description="Analyse a CSV power trace (columns t_s,power_w or t_s,voltage_v,current_a).")
    parser.add_argument("trace", type=Path, metavar="TRACE.csv")
    parser.add_argument("--window", action="append", default=[], metavar="NAME=T0:T1",
                        help="a window in trace seconds; name one 'floor' for floor and dynamic "
                             "power, 'idle' for a true idle (sleep) window (repeatable)")
    parser.add_argument("--inferences", type=int, default=None, metavar="N",
                        help="inferences run in each active window (energy per inference = "
                             "energy / N, amortised)")
    parser.add_argument("--latency", type=float, default=None, metavar="S",
                        help="seconds per inference (mean latency, or the data time under the "
                             "real-time rule): energy per inference = power x S")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=_power)


def parse_window(text: str) -> tuple[str, float, float]:
    """``"name=T0:T1"`` -> ``(name, t0, t1)``; bad syntax raises :class:`ConfigError`."""

    name, sep, span = text.partition("=")
    start, colon, end = span.partition(":")
    try:
        if not (sep and colon and name.strip()):
            raise ValueError
        t0, t1 = float(start), float(end)
    except ValueError:
        raise ConfigError(f"--window {text!r}: expected NAME=T0:T1 with times in seconds, "
                          "e.g. floor=0:5") from None
    if not t1 > t0:
        raise ConfigError(f"--window {text!r}: end {t1} must be after start {t0}")
    return name.strip(), t0, t1


def analyse_trace(trace: Path, windows: list[str], inferences: int | None,
                  latency_s: float | None = None) -> dict:
    from neuromark.system.power.csv_trace import CsvTraceMeter
    from neuromark.system.power.windows import Window, window_power

    if not windows:
        raise ConfigError("give at least one --window NAME=T0:T1")
    if inferences is not None and inferences < 1:
        raise ConfigError(f"--inferences must be >= 1, got {inferences}")
    if latency_s is not None and not latency_s > 0:
        raise ConfigError(f"--latency must be > 0 seconds, got {latency_s}")
    if inferences is not None and latency_s is not None:
        raise ConfigError("give --inferences (amortised) or --latency (power x latency), not both")
    meter = CsvTraceMeter(trace, offset_s=0.0)
    parsed = [Window(*parse_window(w)) for w in windows]
    names = [w.name for w in parsed]
    if len(set(names)) != len(names):
        raise ConfigError(f"--window names must be unique, got {names}")
    notes = []
    if "idle" in names and "floor" not in names:  # the old spelling of the floor window
        parsed = [Window("floor", w.t0, w.t1) if w.name == "idle" else w for w in parsed]
        notes.append("window 'idle' read as the floor window (configured and ready, the old "
                     "name); name it 'floor', and 'idle' only a true idle (sleep) window")
    out = {w.name: window_power(meter, w) for w in parsed}
    floor = out.get("floor")
    for name, stats in out.items():
        if name in ("floor", "idle"):
            continue
        total = stats["total_power_w"] = stats["mean_power_w"]
        if floor is not None:
            stats["floor_power_w"] = floor["mean_power_w"]
            stats["dynamic_power_w"] = total - floor["mean_power_w"]
        per = stats["duration_s"] / inferences if inferences else latency_s
        if per is not None:
            if inferences:
                stats["inferences"] = inferences
            stats["total_energy_per_inference_j"] = total * per
            if floor is not None:
                stats["floor_energy_per_inference_j"] = floor["mean_power_w"] * per
                stats["dynamic_energy_per_inference_j"] = stats["dynamic_power_w"] * per
    return {"trace": str(trace), "meter": meter.metadata(), "windows": out, "notes": notes}


def _power(args: argparse.Namespace) -> int:
    result = analyse_trace(args.trace, args.window, args.inferences, args.latency)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    rate = result["meter"]["sample_rate_hz"]
    print(f"{args.trace}: {rate:.4g} samples/s")
    for note in result["notes"]:
        print(f"note: {note}")
    print(f"{'window':<12} {'t0 s':>10} {'t1 s':>10} {'samples':>8} {'mean W':>12} {'energy J':>12}"
          f" {'dynamic W':>12} {'total J/inf':>12} {'floor J/inf':>12} {'dyn J/inf':>12}")
    for name, s in result["windows"].items():
        def f(key: str, s: dict = s) -> str:
            return f"{s[key]:>12.6g}" if key in s else f"{'-':>12}"
        print(f"{name:<12} {s['t0_s']:>10.4f} {s['t1_s']:>10.4f} {s['meter_samples']:>8d} "
              f"{f('mean_power_w')} {f('energy_j')} {f('dynamic_power_w')} "
              f"{f('total_energy_per_inference_j')} {f('floor_energy_per_inference_j')} "
              f"{f('dynamic_energy_per_inference_j')}")
        if "warning" in s:
            print(f"  warning: {s['warning']}")
    return 0
