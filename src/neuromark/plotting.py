"""Figures as PNG files (matplotlib Agg): pure functions from arrays or result dicts to an
image file, shared by the tasks and the reports (a family keeps its own figures).

- system track: latency histograms with p50/p90/p99, the power trace with its windows
  shaded, the submission workflow diagram;
- training curves of a checkpoint's meta;
- the leaderboard: score vs operations with the Pareto front.
"""

from __future__ import annotations

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
