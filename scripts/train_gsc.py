#!/usr/bin/env python3
"""Train NeuroBench's two GSC baselines by their package recipes
(:mod:`neuromark.benchmarks.keywords.gsc_family`) on a Speech Commands v0.02 folder (by default the
espeak-ng corpus, written first) and print each model's validation accuracy: the tool the
recipes were chosen with (validation speakers only).

The configs ``configs/keywords/gsc_*.yaml`` do not need this script: ``neuromark run`` trains
them on first use by the same recipes and caches their checkpoints. The files this script
writes (``--checkpoints``) are neuromark checkpoints of the family (``kind`` gsc_m5 or
gsc_snn), without a config's recipe hash, so a config pointed at one retrains it.

- ``gsc_m5``: M5 on the 8-kHz waveform; Adam 0.01, weight decay 1e-4, StepLR(20, 0.1),
  cross entropy, batch 64, 30 epochs.
- ``gsc_snn``: 3-layer Leaky LIF on delta-mel spikes with the options of
  ``configs/keywords/gsc_snn.yaml`` (``CHOSEN_OPTIONS``: β 0.95, slope 5, initial weights
  x 2); spike-count MSE, Adam 0.005, weight decay 1e-4, StepLR(15, 0.1), batch 32, 20 epochs.

Usage::

    python scripts/train_gsc.py                       # synthetic corpus in the cache folder
    python scripts/train_gsc.py --only gsc_snn --seed 1
    python scripts/train_gsc.py --root /data/speech_commands_v0.02 --no-synthesize
"""

from __future__ import annotations

import argparse

from neuromark._threads import torch_threads
from neuromark.benchmarks.keywords.gsc_family import CHOSEN_OPTIONS, FAMILIES, split_tensors
from neuromark.benchmarks.keywords.models import speech_commands
from neuromark.benchmarks.keywords.train import predict
from neuromark.config import resolve_path
from neuromark.training.checkpoints import save_checkpoint

FEATURES = {"gsc_m5": "waveform", "gsc_snn": "delta_mel"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default="cache:keywords/gsc")
    parser.add_argument("--speakers", type=int, default=48)
    parser.add_argument("--no-synthesize", action="store_true")
    parser.add_argument("--only", choices=sorted(FAMILIES), action="append", help="train only these")
    parser.add_argument("--epochs", type=int, help="override the recipe's epochs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--checkpoints", default="cache:checkpoints/gsc_script",
                        help="folder for the trained networks (NAME_seedN.pt)")
    args = parser.parse_args()
    root = str(resolve_path(args.root, None))
    synth = None if args.no_synthesize else {"speakers": args.speakers, "repeats": 1}
    out = resolve_path(args.checkpoints, None)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.only or list(FAMILIES):
        family = FAMILIES[name]
        options = family.options_model(**CHOSEN_OPTIONS[name])
        train = family.train_model(seed=args.seed, threads=args.threads,
                                   **({"epochs": args.epochs} if args.epochs else {}))
        data = speech_commands("train", root, FEATURES[name], synth)
        trained, info = family.fit(options, train, data, data.num_classes, quiet=False, label=name)
        xv, yv = split_tensors(speech_commands("validation", root, FEATURES[name], synth))
        with torch_threads(args.threads):
            val = float((predict(trained.net, xv).argmax(1) == yv).double().mean())
        path = save_checkpoint(out / f"{name}_seed{args.seed}.pt", trained,
                               {**info, "train": train.recipe(), "validation_accuracy": val})
        print(f"{name}: {info['train_samples']} training clips, {info['train_seconds']:.0f} s, final train "
              f"accuracy {info['train_accuracy'][-1]:.4f}, validation accuracy {val:.4f} ({len(yv)} clips), "
              f"saved {path}")


if __name__ == "__main__":
    main()
