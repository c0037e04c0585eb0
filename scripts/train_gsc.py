#!/usr/bin/env python3
"""Train NeuroBench's two GSC baselines on a Speech Commands v0.02 folder (by default the
espeak-ng corpus, written first) and save their weights for the ``configs/keywords/gsc_*.yaml``
classification entries.

- M5 on the waveform resampled to 8 kHz (``gsc_m5``): Adam 0.01, weight decay 1e-4,
  StepLR(20, 0.1), cross entropy.
- 3-layer Leaky LIF SNN on delta-modulated log-mel spikes (``gsc_snn``): Adam 1e-3, the
  spike-count MSE loss (targets 25% / 2.5% of the steps, as snnTorch's ``mse_count_loss``
  that NeuroBench uses).

Usage::

    python scripts/train_gsc.py                       # synthetic corpus in the cache folder
    python scripts/train_gsc.py --root /data/speech_commands_v0.02 --no-synthesize
    neuromark run configs/keywords/gsc_m5.yaml configs/keywords/gsc_snn.yaml
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from neuromark.baselines.keywords import fit_classifier, gsc_m5, gsc_snn, init_seeded, speech_commands
from neuromark.config import resolve_path
from neuromark.results import atomic_path


def features(root: Path, kind: str, synth: dict | None) -> tuple[torch.Tensor, torch.Tensor]:
    data = speech_commands("train", str(root), kind, synth)
    xs, ys = zip(*data.loader(256), strict=True)
    return torch.cat(xs), torch.cat(ys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default="cache:keywords/gsc")
    parser.add_argument("--speakers", type=int, default=48)
    parser.add_argument("--no-synthesize", action="store_true")
    parser.add_argument("--epochs-m5", type=int, default=30)
    parser.add_argument("--epochs-snn", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoints", default="cache:checkpoints")
    args = parser.parse_args()
    root = resolve_path(args.root, None)
    synth = None if args.no_synthesize else {"speakers": args.speakers, "repeats": 1}
    out = resolve_path(args.checkpoints, None)
    out.mkdir(parents=True, exist_ok=True)
    recipes = {"gsc_m5": (gsc_m5, "waveform", args.epochs_m5, 0.01, "ce"),
               "gsc_snn": (gsc_snn, "delta_mel", args.epochs_snn, 0.001, "mse_count")}
    for name, (factory, kind, epochs, lr, loss) in recipes.items():
        x, y = features(root, kind, synth)
        model = init_seeded(factory, args.seed)
        start = time.perf_counter()
        info = fit_classifier(model, x, y, epochs=epochs, batch_size=64, lr=lr, seed=args.seed, loss=loss,
                              log=lambda line, n=name: print(f"{n}: {line}", flush=True))
        with atomic_path(out / f"{name}.pt") as tmp:
            torch.save(model.state_dict(), tmp)
        print(f"{name}: {len(y)} training clips, {time.perf_counter() - start:.0f} s, final train "
              f"accuracy {info['train_accuracy'][-1]:.4f}, saved {out / f'{name}.pt'}; "
              f"classes {np.bincount(y.numpy()).size}")


if __name__ == "__main__":
    main()
