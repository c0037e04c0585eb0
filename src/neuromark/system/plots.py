"""System-track figures (PNG, matplotlib Agg): latency histograms with p50/p90/p99, the
power trace with idle/active windows shaded, and the submission workflow diagram."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

WORKFLOW = ("data initialisation", "host pre-processing", "data loading",
            "on-device pre-processing", "inference", "post-processing")


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Lay out ``fig``, write it to ``path`` (creating the folder) and close it."""
    fig.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=dpi)
    _plt().close(fig)
    return target


def latency_histogram(stages_ns: Mapping[str, Sequence[int]], path: str | Path,
                      title: str = "per-sample latency") -> Path:
    """One histogram panel per stage (ms), with p50, p90 and p99 as vertical lines."""
    plt = _plt()
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
    return _save(fig, path)


def power_trace(timeline: Mapping[str, Any], windows: Mapping[str, tuple[float, float]],
                path: str | Path, title: str = "power trace") -> Path:
    """Power (W) over time (s from the first sample) with each window shaded and labelled."""
    plt = _plt()
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
    return _save(fig, path)


def workflow_diagram(path: str | Path, notes: Mapping[str, str] | None = None,
                     steps: Sequence[str] = WORKFLOW) -> Path:
    """Boxes and arrows for the submission workflow; ``notes[step]`` is printed under a box
    (e.g. "MFE, 40 mel bands, CPU"; a note starting "not used" greys the box out)."""
    import textwrap

    plt = _plt()
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
    return _save(fig, path)
