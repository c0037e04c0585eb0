"""What ``neuromark qubo solve`` prints and writes into ``--out``: the table of runs and
figures, the time-to-target data (CSV and JSON) and figure."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from neuromark.io_atomic import write_text_atomic


def _fmt(value: Any, spec: str = ".4g") -> str:
    return "n/a" if value is None else format(value, spec)


def _interval(ci: list[float | None]) -> str:
    low, high = ci
    return f"{_fmt(low)}..{'unbounded' if high is None else _fmt(high)} s"


def print_result(result: dict[str, Any], solver: str) -> None:
    """The human-readable report of :func:`~neuromark.benchmarks.qubo.repeat.solve_runs`."""
    inst, summary = result["instance"], result["summary"]
    graph = f", {inst['edges']} edges" if inst["edges"] is not None else ""
    print(f"instance {inst['name']} ({inst['format']}, n={inst['n']}{graph})")
    print(f"energy   {inst['energy']}")
    runs = result["runs"]
    print(f"solver   {solver}, {len(runs)} run(s) x {result['timeout_s']:g} s, seeds "
          f"{runs[0]['seed']}..{runs[-1]['seed']}")
    mis = inst["edges"] is not None
    print(f"{'run':>4} {'seed':>5} {'energy':>10} " + (f"{'|S|':>5} {'feasible':>8} " if mis
                                                       else "") + f"{'wall_s':>8}  history")
    for i, r in enumerate(runs, 1):
        hist = " ".join(f"{t:.4g}s:{c:g}" for t, c in r["history"][-6:])
        more = "... " if len(r["history"]) > 6 else ""
        cells = f"{r['size']:>5} {'yes' if r['feasible'] else 'NO':>8} " if mis else ""
        print(f"{i:>4} {r['seed']:>5} {r['energy']:>10g} {cells}{r['wall_s']:>8.4f}  "
              f"{more}{hist}")
    size = f" (|S*| = {summary['target_size']})" if summary.get("target_size") is not None else ""
    print(f"target            energy {_fmt(summary['target_energy'], 'g')}{size}, from "
          f"{summary['target_source']}")
    for note in summary.get("notes", []):
        print(f"NOTE              {note}")
    print(f"feasible runs     {summary['feasible_runs']}/{summary['runs']}")
    print(f"success prob.     {summary['successes']}/{summary['runs']} = "
          f"{summary['p_success']:.4g} (at the timeout)")
    if summary["tts99_s"] is None and summary.get("late_hits"):
        print(f"TTS99             not reached by the timeout: {summary['late_hits']} run(s) "
              f"reached the target only after it, during their overrun (a solver without a "
              f"history, e.g. kamis, reports its set at the end of its call)")
    elif summary["tts99_s"] is None:
        print("TTS99             not reached (no run reached the target by the timeout)")
    else:
        print(f"TTS99             {summary['tts99_s']:.4g} s at tau* = {summary['tau_opt_s']:.4g} s "
              f"(p_s(tau*) = {summary['p_s_at_tau_opt']:.4g}; min over tau of tau ln 0.01 / "
              f"ln(1 - p_s(tau)); 95% bootstrap {_interval(summary['tts99_ci95_s'])})")
        print(f"  with overhead   {_fmt(summary['tts99_with_overhead_s'])} s (each run also pays "
              f"its mean stop overhead {summary['stop_overhead_s']:.3g} s)")
    at = summary["tts99_at_timeout_s"]
    print(f"TTS99 at timeout  {'not reached' if at is None else f'{at:.4g} s'} (tau = mean run "
          f"wall {summary['tau_at_timeout_s']:.4g} s)")
    print(f"residual energy   {_fmt(summary.get('residual_energy_mean'))} (mean over runs)")
    print(f"gap to target     best run {_fmt(summary.get('gap_best'))}, mean "
          f"{_fmt(summary.get('gap_mean'))}")


def curve_csv(summary: dict[str, Any]) -> str:
    """The time-to-target curve as CSV: ``t_s,reached,runs,p_s,tts99_s``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["t_s", "reached", "runs", "p_s", "tts99_s"])
    for p in summary["time_to_target"]:
        writer.writerow([repr(p["t_s"]), p["reached"], summary["runs"], repr(p["p_s"]),
                         repr(p["tts99_s"])])
    return buf.getvalue()


def write_outputs(out: Path, result: dict[str, Any]) -> list[Path]:
    """``result.json``, ``time_to_target.csv``/``.json`` and ``time_to_target.png`` in ``out``."""
    from neuromark.benchmarks.qubo.plots import plot_time_to_target

    summary = result["summary"]
    curve = {"runs": summary["runs"], "target_energy": summary["target_energy"],
             "target_source": summary["target_source"], "tts99_s": summary["tts99_s"],
             "tau_opt_s": summary["tau_opt_s"], "hit_times_s": summary["hit_times_s"],
             "points": summary["time_to_target"]}
    title = (f"{result['instance']['name']}: {result.get('solver', '')}, {summary['runs']} runs "
             f"x {result['timeout_s']:g} s")
    return [write_text_atomic(out / "result.json", json.dumps(result, indent=1) + "\n"),
            write_text_atomic(out / "time_to_target.csv", curve_csv(summary)),
            write_text_atomic(out / "time_to_target.json", json.dumps(curve, indent=1) + "\n"),
            plot_time_to_target(summary, result["timeout_s"], title,
                                out / "time_to_target.png")]
