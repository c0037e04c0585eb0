"""Model selection for the keyword LIF baselines on validation splits only.

- ``mswc``: the FSCIL backbone (``LIFNet``, ``sum`` readout, 200 outputs, cross entropy on
  the 100 base logits), trained on ``base_train`` of an MSWC-layout folder and scored on
  ``base_val`` (held-out voice variants; the espeak-ng corpus is written first with
  ``--synthesize``, the size of ``configs/keywords/mswc_fscil_snn_short.yaml``).
- ``gsc``: the GSC SNN (``gsc_snn``: 20-256-256-256-35, spike-count readout, spike-count
  MSE), trained on ``training`` and scored on ``validation`` (speaker-disjoint).

Both on delta-modulated log-mel spikes (:func:`neuromark.benchmarks.keywords.features.delta_spikes`).
A candidate is a set of ``--set key=value`` overrides of the model options (``beta``,
``slope``, ``init_gain``, ``logit_scale``, ``hidden``) and training settings (``lr``,
``epochs``, ``batch_size``, ``step_size``, ``gamma``, ``weight_decay``, ``seed``).
Each run appends a JSON line (task, settings, training curve, validation accuracy every
``--every`` epochs, seconds) to ``--log``; ``--summary`` prints the log as a table::

    python scripts/keyword_snn_select.py mswc --set slope=5 --set init_gain=2 --set lr=0.005
    python scripts/keyword_snn_select.py --summary
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import torch
import yaml

from neuromark._threads import torch_threads
from neuromark.benchmarks.keywords.features import KeywordFeatures
from neuromark.benchmarks.keywords.generator import MSWCSize, build_mswc
from neuromark.benchmarks.keywords.models import LIFNet, gsc_snn, speech_commands
from neuromark.benchmarks.keywords.mswc import MSWC, SAMPLE_RATE
from neuromark.benchmarks.keywords.train import fit_classifier, init_seeded, predict
from neuromark.config import resolve_path

MODEL_KEYS = {"beta", "slope", "init_gain", "logit_scale", "hidden"}
TRAIN_DEFAULTS = {"mswc": {"lr": 0.002, "epochs": 15, "batch_size": 16, "step_size": 100, "gamma": 0.1,
                           "weight_decay": 1e-4, "seed": 0},
                  "gsc": {"lr": 0.001, "epochs": 30, "batch_size": 64, "step_size": 100, "gamma": 0.1,
                          "weight_decay": 1e-4, "seed": 0}}


def mswc_split(root: Path, subset: str) -> tuple[torch.Tensor, torch.Tensor]:
    data = MSWC(root, subset)
    clips = data.arrays(root / "decoded")
    recipe = KeywordFeatures("delta_mel", SAMPLE_RATE)
    x = torch.cat([recipe(clips[i:i + 256]) for i in range(0, len(clips), 256)])
    return x, torch.from_numpy(data.labels)


def gsc_split(root: Path, split: str) -> tuple[torch.Tensor, torch.Tensor]:
    xs, ys = zip(*speech_commands(split, str(root), "delta_mel", {"speakers": 48, "repeats": 1}).loader(256),
                 strict=True)
    return torch.cat(xs), torch.cat(ys)


def run(task: str, overrides: dict[str, Any], root: Path, every: int) -> dict[str, Any]:
    train = {**TRAIN_DEFAULTS[task], **{k: v for k, v in overrides.items() if k not in MODEL_KEYS}}
    options = {k: v for k, v in overrides.items() if k in MODEL_KEYS}
    if task == "mswc":
        x, y = mswc_split(root, "base_train")
        xv, yv = mswc_split(root, "base_val")
        hidden = tuple(options.pop("hidden", (256, 256)))
        model = init_seeded(lambda: LIFNet(20, 200, hidden, readout="sum", **options), train["seed"])
        classes, loss = 100, "ce"
    else:
        x, y = gsc_split(root, "train")
        xv, yv = gsc_split(root, "validation")
        model = init_seeded(lambda: gsc_snn(**options), train["seed"])
        classes, loss = None, "mse_count"
    curve: list[dict[str, Any]] = []
    start = time.perf_counter()

    def log(line: str) -> None:
        epoch = len(curve) + 1
        entry: dict[str, Any] = {"epoch": epoch, "line": line}
        if epoch % every == 0 or epoch == train["epochs"]:
            logits = predict(model, xv)
            logits = logits[:, :classes] if classes else logits
            entry["validation_accuracy"] = float((logits.argmax(1) == yv).double().mean())
        curve.append(entry)
        print(f"{task}: {line}, validation {entry.get('validation_accuracy', '-')}, "
              f"{time.perf_counter() - start:.0f} s", flush=True)

    info = fit_classifier(model, x, y, epochs=train["epochs"], batch_size=train["batch_size"], lr=train["lr"],
                          weight_decay=train["weight_decay"], step_size=train["step_size"],
                          gamma=train["gamma"], seed=train["seed"], classes=classes, loss=loss, log=log)
    return {"task": task, "overrides": overrides, "train": train, "options": options,
            "validation_accuracy": curve[-1]["validation_accuracy"], "validation_samples": len(yv),
            "train_accuracy": info["train_accuracy"], "loss": info["loss"], "curve": curve,
            "seconds": time.perf_counter() - start}


def summary(log: Path) -> None:
    for line in log.read_text().splitlines():
        r = json.loads(line)
        val = [c["validation_accuracy"] for c in r["curve"] if "validation_accuracy" in c]
        curve = ", ".join(f"{v:.2f}" for v in val)
        print(f"{r['task']:5s} val {r['validation_accuracy']:.3f} (curve {curve}) "
              f"train {r['train_accuracy'][-1]:.3f} {r['seconds']:.0f} s  {json.dumps(r['overrides'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", nargs="?", choices=["mswc", "gsc"])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--root", help="default: cache:keywords/mswc_snn or cache:keywords/gsc")
    parser.add_argument("--every", type=int, default=5, help="validation every N epochs")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--log", default="keyword_snn_select.jsonl")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    log = Path(args.log)
    if args.summary:
        summary(log)
        return
    if args.task is None:
        parser.error("give a task (mswc or gsc) or --summary")
    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set {item!r}: expected KEY=VALUE")
        overrides[key] = yaml.safe_load(value)
    default_root = "cache:keywords/mswc_snn" if args.task == "mswc" else "cache:keywords/gsc"
    root = resolve_path(args.root or default_root, None)
    if args.task == "mswc" and args.root is None:
        build_mswc(root, MSWCSize(8, 2, 2, 10, 2), fmt="wav")
    with torch_threads(args.threads):
        result = run(args.task, overrides, root, args.every)
    with log.open("a") as f:
        f.write(json.dumps(result) + "\n")
    print(f"{args.task}: validation accuracy {result['validation_accuracy']:.4f} on "
          f"{result['validation_samples']} clips, {result['seconds']:.0f} s")


if __name__ == "__main__":
    main()
