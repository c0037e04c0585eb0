"""Figures as PNG files (matplotlib Agg): pure functions from arrays or result dicts to an
image file, shared by every task and by the reports.

- system track: latency histograms with p50/p90/p99, the power trace with its windows
  shaded, the submission workflow diagram;
- QUBO: BKS-gap vs timeout, time to solution;
- training curves of a checkpoint's meta;
- keyword FSCIL: accuracy vs session with its percentile band;
- the leaderboard: score vs operations with the Pareto front.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

WORKFLOW = ("data initialisation", "host pre-processing", "data loading",
            "on-device pre-processing", "inference", "post-processing")


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Lay out ``fig``, write it to ``path`` (creating the folder) and close it."""
    fig.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=dpi)
    pyplot().close(fig)
    return target


def latency_histogram(stages_ns: Mapping[str, Sequence[int]], path: str | Path,
                      title: str = "per-sample latency") -> Path:
    """One histogram panel per stage (ms), with p50, p90 and p99 as vertical lines."""
    plt = pyplot()
    names = [s for s, v in stages_ns.items() if len(v)]
    fig, axes = plt.subplots(len(names), 1, figsize=(7, 2.6 * max(1, len(names))), squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        ms = np.asarray(stages_ns[name], dtype=np.float64) * 1e-6
        ax.hist(ms, bins=min(60, max(10, ms.size // 5)), color="#4c72b0", alpha=0.8)
        for q, style in ((50, "-"), (90, "--"), (99, ":")):
            v = np.percentile(ms, q)
            ax.axvline(v, color="#c44e52", linestyle=style, label=f"p{q} = {v:.3g} ms")
        ax.set_xlabel(f"{name} latency (ms)")
        ax.set_ylabel("samples")
        ax.legend(fontsize=8)
    axes[0, 0].set_title(title)
    return save_figure(fig, path)


def power_trace(timeline: Mapping[str, Any], windows: Mapping[str, tuple[float, float]],
                path: str | Path, title: str = "power trace") -> Path:
    """Power (W) over time (s from the first sample) with each window shaded and labelled."""
    plt = pyplot()
    t = np.asarray(timeline["t_s"], dtype=np.float64)
    p = np.asarray(timeline["power_w"], dtype=np.float64)
    t0 = t[0] if t.size else 0.0
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot(t - t0, p, lw=0.8, color="#333333")
    colors = {"idle": "#8fbc8f", "loadgen": "#bbbbbb", "preprocess": "#f4a582", "inference": "#92c5de",
              "stream": "#c2a5cf"}
    palette = ["#fddbc7", "#d1e5f0", "#e7d4e8", "#fee090"]
    for i, (name, (a, b)) in enumerate(windows.items()):
        ax.axvspan(a - t0, b - t0, alpha=0.35, color=colors.get(name, palette[i % len(palette)]), label=name)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("power (W)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper right")
    return save_figure(fig, path)


def workflow_diagram(path: str | Path, notes: Mapping[str, str] | None = None,
                     steps: Sequence[str] = WORKFLOW) -> Path:
    """Boxes and arrows for the submission workflow; ``notes[step]`` is printed under a box
    (e.g. "MFE, 40 mel bands, CPU"; a note starting "not used" greys the box out)."""
    import textwrap

    plt = pyplot()
    notes = notes or {}
    fig, ax = plt.subplots(figsize=(2.1 * len(steps), 2.6))
    ax.set_xlim(0, len(steps))
    ax.set_ylim(0, 1)
    ax.axis("off")
    for i, step in enumerate(steps):
        used = not notes.get(step, "").startswith("not used")
        ax.add_patch(plt.Rectangle((i + 0.08, 0.45), 0.84, 0.4, fc="#dbe9f6" if used else "#eeeeee",
                                   ec="#335577" if used else "#999999"))
        ax.text(i + 0.5, 0.65, step.replace(" ", "\n", 1), ha="center", va="center", fontsize=8)
        if notes.get(step):
            ax.text(i + 0.5, 0.4, textwrap.fill(notes[step], 24), ha="center", va="top", fontsize=7,
                    color="#333333" if used else "#999999")
        if i < len(steps) - 1:
            ax.annotate("", xy=(i + 1.08, 0.65), xytext=(i + 0.92, 0.65),
                        arrowprops={"arrowstyle": "->", "color": "#335577"})
    return save_figure(fig, path)

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


def plot_training(meta: dict[str, Any], path: Path, title: str) -> Path:
    """Training loss (and accuracy) per epoch from a checkpoint's meta, as a PNG."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=110)
    epochs = range(1, len(meta["loss"]) + 1)
    ax.plot(epochs, meta["loss"], color="C0", label="training loss")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss (CE + regularisers)")
    if meta.get("train_accuracy"):
        acc_ax = ax.twinx()
        acc_ax.plot(epochs, meta["train_accuracy"], color="C1", label="training accuracy")
        acc_ax.set_ylabel("training accuracy")
        acc_ax.set_ylim(0, 1)
    ax.set_title(f"{title}: training ({meta.get('train_seconds', 0):.0f} s)")
    return save_figure(fig, path)


def plot_fscil(mean: Sequence[float], p5: Sequence[float], p95: Sequence[float],
               new_mean: Sequence[float], frozen: Sequence[float], path: Path, title: str) -> Path:
    """Few-shot class-incremental accuracy vs session: the mean over repeats with its
    5th-95th percentile band, new-class accuracy, and the frozen reference."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.8), dpi=110)
    sessions = np.arange(len(mean))
    ax.fill_between(sessions, 100 * np.asarray(p5), 100 * np.asarray(p95), color="C0", alpha=0.25,
                    label="all classes, 5th-95th percentile")
    ax.plot(sessions, 100 * np.asarray(mean), "o-", color="C0", label="all classes (mean)")
    ax.plot(sessions, 100 * np.asarray(new_mean, dtype=float), "s--", color="C1",
            label="new classes only (mean)")
    ax.plot(sessions, 100 * np.asarray(frozen), ":", color="C7", label="frozen reference")
    ax.set_xlabel("session")
    ax.set_ylabel("accuracy (%)")
    ax.set_xticks(sessions)
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title(title)
    return save_figure(fig, path)


def pareto_front(ops: Sequence[float], score: Sequence[float], higher_is_better: bool = True
                 ) -> list[int]:
    """Indices of the points no other point dominates (fewer or equal ops and a better or
    equal score, one of them strictly), sorted by ops."""
    sign = 1.0 if higher_is_better else -1.0
    points = [(float(o), sign * float(s)) for o, s in zip(ops, score)]
    front = [i for i, (o, s) in enumerate(points)
             if not any(o2 <= o and s2 >= s and (o2 < o or s2 > s) for o2, s2 in points)]
    return sorted(front, key=lambda i: points[i][0])


def plot_pareto(ops: Sequence[float], score: Sequence[float], labels: Sequence[str],
                path: str | Path, *, sizes: Sequence[float] | None = None,
                score_name: str = "accuracy", higher_is_better: bool = True,
                title: str = "") -> Path:
    """Score vs operations per sample (log x axis) with the Pareto front drawn; ``sizes``
    (e.g. footprint in bytes) scale the markers by area."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    x, y = np.asarray(ops, dtype=float), np.asarray(score, dtype=float)
    if sizes is not None and len(sizes) and np.nanmax(np.asarray(sizes, dtype=float)) > 0:
        s = np.asarray(sizes, dtype=float)
        area = 30 + 400 * np.nan_to_num(s / np.nanmax(s))
    else:
        area = np.full(len(x), 60.0)
    ax.scatter(x, y, s=area, alpha=0.6, color="C0", edgecolors="k")
    for xi, yi, label in zip(x, y, labels):
        ax.annotate(label, (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=7)
    front = pareto_front(x, y, higher_is_better)
    ax.plot(x[front], y[front], "--", color="C3", label="Pareto front")
    ax.set_xscale("log")
    ax.set_xlabel("synaptic operations per sample (effective MACs + ACs, log)")
    ax.set_ylabel(score_name)
    ax.legend(fontsize=8, title="marker area: footprint" if sizes is not None else None,
              title_fontsize=7)
    ax.set_title(title)
    return save_figure(fig, path)
