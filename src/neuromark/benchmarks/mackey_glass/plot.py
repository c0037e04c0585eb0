"""The Mackey-Glass sweep's figure: sMAPE against the delay tau (like Fig. 5 of Yik et al.
2025), drawn with the kernel's figure helpers (:mod:`neuromark.plotting`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuromark.plotting import pyplot, save_figure


def plot_smape_vs_tau(entries: Sequence[dict[str, Any]], path: Path) -> Path:
    """Write a PNG of sMAPE (mean ± SE over instances) against tau; returns ``path``.

    Args:
        entries: dicts with ``model``, ``tau``, ``sMAPE`` and ``sMAPE_se`` (None allowed).
        path: the PNG file to write (folders are created).
    """
    plt = pyplot()
    models = list(dict.fromkeys(e["model"] for e in entries))
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for offset, model in enumerate(models):
        rows = sorted((e for e in entries if e["model"] == model), key=lambda e: e["tau"])
        taus = [e["tau"] + 0.08 * (offset - (len(models) - 1) / 2) for e in rows]
        means = [e["sMAPE"] for e in rows]
        errors = [e["sMAPE_se"] or 0.0 for e in rows]
        ax.errorbar(taus, means, yerr=errors, marker="o", capsize=3, label=model.upper())
    ax.set_xlabel("delay τ")
    ax.set_ylabel("sMAPE (%)")
    ax.set_title("Mackey-Glass forecast: sMAPE vs τ (mean ± SE over instances)")
    all_taus = sorted({e["tau"] for e in entries})
    ax.set_xticks(all_taus)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    return save_figure(fig, path, dpi=120)
