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
