"""The QUBO sweep's figures: mean BKS-gap vs timeout and median time to solution (PNG)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.plotting import pyplot, save_figure


def plot_gap_vs_timeout(entries: list[dict[str, Any]], path: Path) -> Path | None:
    """Mean BKS-gap vs timeout, log-x, one line per (solver, size, density)."""
    fixed = [e for e in entries if e["scenario"] == "fixed_timeout"]
    if not fixed:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for solver, n, d in sorted({(e["solver"], e["n"], e["density"]) for e in fixed}):
        rows = [e for e in fixed if (e["solver"], e["n"], e["density"]) == (solver, n, d)]
        ts = sorted({e["timeout_s"] for e in rows})
        means = [np.mean([e["gap"] for e in rows if e["timeout_s"] == t]) for t in ts]
        ax.plot(ts, means, marker="o", label=f"{solver}, n={n}, d={d:g}")
    ax.set_xscale("log")
    ax.set_xlabel("timeout (s)")
    ax.set_ylabel("mean BKS-gap")
    ax.axhline(0.0, color="grey", lw=0.5)
    ax.legend(fontsize=7)
    ax.set_title("QUBO MIS: BKS-gap vs timeout")
    return save_figure(fig, path, dpi=100)


def plot_tts(entries: list[dict[str, Any]], path: Path) -> Path | None:
    """Median time to reach each gap threshold, bars per solver; unreached bars are hatched
    at the cap and labelled."""
    tts = [e for e in entries if e["scenario"] == "time_to_solution"]
    if not tts:
        return None
    plt = pyplot()
    solvers = sorted({e["solver"] for e in tts})
    gaps = list(tts[0]["latency_s"])
    fig, ax = plt.subplots(figsize=(6, 4))
    width = 0.8 / len(solvers)
    for i, solver in enumerate(solvers):
        rows = [e for e in tts if e["solver"] == solver]
        cap = max(e["cap_s"] for e in rows)
        for j, g in enumerate(gaps):
            vals = [math.inf if isinstance(e["latency_s"][g], str) else e["latency_s"][g]
                    for e in rows]
            med = float(np.median(vals))
            x = j + i * width
            if math.isinf(med):
                ax.bar(x, cap, width, color=f"C{i}", alpha=0.3, hatch="//")
                ax.text(x, cap, "not reached", rotation=90, fontsize=6, ha="center", va="top")
            else:
                ax.bar(x, med, width, color=f"C{i}", label=solver if j == 0 else None)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(gaps))], [f"gap <= {g}" for g in gaps])
    ax.set_yscale("log")
    ax.set_ylabel("median time to solution (s)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    ax.set_title("QUBO MIS: time to solution")
    return save_figure(fig, path, dpi=100)


def plot_qubo_sweep(entries: list[dict[str, Any]], out_dir: Path) -> list[str]:
    """Write every applicable plot under ``out_dir``; returns their absolute paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    made = [plot_gap_vs_timeout(entries, out_dir / "qubo_gap_vs_timeout.png"),
            plot_tts(entries, out_dir / "qubo_time_to_solution.png")]
    return [str(p.resolve()) for p in made if p is not None]


def plot_time_to_target(summary: dict[str, Any], timeout_s: float, title: str, path: Path
                        ) -> Path:
    """The time-to-target curve of ``qubo solve`` (Aiex, Resende and Ribeiro's TTT plot): the
    fraction of runs at the target by time t (a step at each hit time, solver clock, log-x),
    and TTS99(tau) on a second axis with its minimum marked."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    points = summary["time_to_target"]
    runs = summary["runs"]
    if points:
        ts = [p["t_s"] for p in points]
        first = max(ts[0] / 2, 1e-9)
        ax.step([first, *ts, max(timeout_s, ts[-1])], [0.0, *(p["p_s"] for p in points),
                points[-1]["p_s"]], where="post", color="C0",
                label=f"fraction of {runs} runs at target by t")
        tts_ax = ax.twinx()
        tts_ax.plot(ts, [p["tts99_s"] for p in points], "o", color="C1", ms=3, label="TTS99(tau)")
        tts_ax.plot([summary["tau_opt_s"]], [summary["tts99_s"]], "*", color="C3", ms=10,
                    label=f"min {summary['tts99_s']:.3g} s at tau {summary['tau_opt_s']:.3g} s")
        tts_ax.set_yscale("log")
        tts_ax.set_ylabel("TTS99(tau) (s)")
        tts_ax.legend(loc="lower right", fontsize=7)
        ax.set_xscale("log")
    else:
        ax.text(0.5, 0.5, "no run reached the target", ha="center", transform=ax.transAxes)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time since the solve started (s)")
    ax.set_ylabel("fraction of runs at target")
    ax.legend(loc="upper left", fontsize=7)
    ax.set_title(f"{title}\ntime to target (TTT plot) and TTS99(tau)", fontsize=9)
    return save_figure(fig, path, dpi=100)
