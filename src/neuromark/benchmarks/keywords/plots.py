"""The FSCIL figure: accuracy vs session with its percentile band (PNG)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from neuromark.plotting import pyplot, save_figure


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
