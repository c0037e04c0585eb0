#!/usr/bin/env python3
"""Train NeuroBench's two GSC baselines on a Speech Commands v0.02 folder (by default the
espeak-ng corpus, written first) and save their weights for the ``configs/keywords/gsc_*.yaml``
classification entries.

- M5 on the waveform resampled to 8 kHz (``gsc_m5``): Adam 0.01, weight decay 1e-4,
  StepLR(20, 0.1), cross entropy, 30 epochs.
- 3-layer Leaky LIF SNN on delta-modulated log-mel spikes (``gsc_snn``): the spike-count
  MSE loss (targets 25% / 2.5% of the steps, as snnTorch's ``mse_count_loss`` that
  NeuroBench uses); the recipe chosen on the validation speakers
  (``scripts/keyword_snn_select.py gsc``, docs/keywords.md): β 0.95, surrogate slope 5,
  initial weights x 2, Adam 0.005, weight decay 1e-4, StepLR(15, 0.1), batch 32, 20 epochs.
  Its model options (``SNN_OPTIONS``) are those of ``configs/keywords/gsc_snn.yaml``.

Prints the validation accuracy of each model (the test split is scored by ``neuromark run``).

Usage::

    python scripts/train_gsc.py                       # synthetic corpus in the cache folder
    python scripts/train_gsc.py --only gsc_snn
    python scripts/train_gsc.py --root /data/speech_commands_v0.02 --no-synthesize
    neuromark run configs/keywords/gsc_m5.yaml configs/keywords/gsc_snn.yaml
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from neuromark._threads import torch_threads
from neuromark.baselines.keywords import (
    fit_classifier,
    gsc_m5,
    gsc_snn,
    init_seeded,
    predict,
    speech_commands,
)
from neuromark.config import resolve_path
from neuromark.results import atomic_path

SNN_OPTIONS = {"beta": 0.95, "slope": 5.0, "init_gain": 2.0}
RECIPES = {  # features, factory, optimiser and schedule, loss
    "gsc_m5": {"features": "waveform", "factory": gsc_m5, "epochs": 30, "lr": 0.01, "batch_size": 64,
               "step_size": 20, "loss": "ce"},
    "gsc_snn": {"features": "delta_mel", "factory": lambda: gsc_snn(**SNN_OPTIONS), "epochs": 20, "lr": 0.005,
                "batch_size": 32, "step_size": 15, "loss": "mse_count"},
}


def features(root: Path, split: str, kind: str, synth: dict | None) -> tuple[torch.Tensor, torch.Tensor]:
    data = speech_commands(split, str(root), kind, synth)
    xs, ys = zip(*data.loader(256), strict=True)
    return torch.cat(xs), torch.cat(ys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default="cache:keywords/gsc")
    parser.add_argument("--speakers", type=int, default=48)
    parser.add_argument("--no-synthesize", action="store_true")
    parser.add_argument("--only", choices=sorted(RECIPES), action="append", help="train only these")
    parser.add_argument("--epochs", type=int, help="override the recipe's epochs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--checkpoints", default="cache:checkpoints")
    args = parser.parse_args()
    root = resolve_path(args.root, None)
    synth = None if args.no_synthesize else {"speakers": args.speakers, "repeats": 1}
    out = resolve_path(args.checkpoints, None)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.only or list(RECIPES):
        r = RECIPES[name]
        x, y = features(root, "train", r["features"], synth)
        xv, yv = features(root, "validation", r["features"], synth)
        model = init_seeded(r["factory"], args.seed)
        start = time.perf_counter()
        with torch_threads(args.threads):
            info = fit_classifier(model, x, y, epochs=args.epochs or r["epochs"], batch_size=r["batch_size"],
                                  lr=r["lr"], step_size=r["step_size"], seed=args.seed, loss=r["loss"],
                                  log=lambda line, n=name: print(f"{n}: {line}", flush=True))
            val = float((predict(model, xv).argmax(1) == yv).double().mean())
        with atomic_path(out / f"{name}.pt") as tmp:
            torch.save(model.state_dict(), tmp)
        print(f"{name}: {len(y)} training clips, {time.perf_counter() - start:.0f} s, final train accuracy "
              f"{info['train_accuracy'][-1]:.4f}, validation accuracy {val:.4f} ({len(yv)} clips), "
              f"saved {out / f'{name}.pt'}")


if __name__ == "__main__":
    main()
