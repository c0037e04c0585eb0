"""Model selection for the spoken-digit baselines on the speaker-held-out validation split.

Fits a classification config's model (``snn``, ``rsnn``, ``lstm``, ``svm``) with optional
overrides, for one or more seeds, and scores it:

- ``--split valid`` (default): trains on the training speakers minus
  :data:`~neuromark.benchmarks.shd.spoken_digits.VALID_SPEAKERS`, scores those held-out speakers.
  Hyperparameters are chosen here only.
- ``--split test``: trains on all training speakers, scores the test speakers (the final
  figures of a chosen config; never used to choose anything).

``--summary`` prints, for every candidate name and split in the log, the mean accuracy with
its standard error over seeds (and the pooled per-speaker accuracies), without training.

Each run appends one JSON line to ``--log`` (config, overrides, seed, accuracy, per-speaker
accuracy, training curve and time); a line already in the log with the same key is reused,
not re-run. Prints the accuracy per seed and the mean with its standard error over seeds::

    python scripts/spoken_digits_select.py configs/shd/spoken_digits_rsnn.yaml \\
        --set train.readout=mean --set model.options.learn_tau=true --seeds 0 1
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from neuromark._threads import torch_threads
from neuromark.benchmarks.shd.spoken_digits import VALID_SPEAKERS, speaker_split
from neuromark.config import load_config
from neuromark.context import RunContext
from neuromark.metrics.functional.speakers import speaker_accuracy
from neuromark.metrics.functional.stats import standard_error
from neuromark.networks.spike_training import READOUTS, SampleSplit
from neuromark.tasks.classification import TASK


def override(data: dict[str, Any], assignment: str) -> None:
    """Apply ``a.b.c=value`` (value parsed as YAML) to the config dict."""
    key, _, text = assignment.partition("=")
    node = data
    *path, last = key.split(".")
    for part in path:
        node = node.setdefault(part, {})
    node[last] = yaml.safe_load(text)


def evaluate(model: Any, frames: np.ndarray, readout: str, batch: int = 128) -> np.ndarray:
    """(N,) predicted classes of a trained model on (N, T, C) frames."""
    import torch

    out = []
    model.train(False)
    with torch.inference_mode():
        for start in range(0, len(frames), batch):
            output = model(torch.as_tensor(frames[start:start + batch]))
            out.append(READOUTS[readout](output).argmax(-1).numpy())
    return np.concatenate(out)


def run_one(config_path: Path, sets: list[str], seed: int, split: str) -> dict[str, Any]:
    """Fit and score one (config, overrides, seed, split)."""
    config = load_config(config_path)
    config.data = copy.deepcopy(config.data)
    for assignment in sets:
        override(config.data, assignment)
    override(config.data, f"train.seed={seed}")
    plan = TASK.plan(config, RunContext.build())
    train_file = TASK._dataset(plan, config, "train")
    classes = int(train_file.num_classes)
    if split == "valid":
        fit_idx, held_idx = speaker_split(train_file.samples.speakers, VALID_SPEAKERS,
                                          name=str(train_file.path))
        fit_data = SampleSplit.of(train_file, fit_idx)
        held = SampleSplit.of(train_file, held_idx)
        seen = train_file.samples.speakers[fit_idx]
    else:
        fit_data = SampleSplit.of(train_file, np.arange(len(train_file)))
        test = TASK._dataset(plan, config, "test")
        held = SampleSplit.of(test, np.arange(len(test)))
        seen = train_file.samples.speakers
    start = time.perf_counter()
    model, info = plan.family.fit(plan.model_options, plan.train, fit_data, classes, quiet=True)
    with torch_threads(plan.train.threads):
        predicted = evaluate(model, held.frames(), plan.train.readout)
    correct = (predicted == held.samples.labels).astype(np.int64)
    speakers = speaker_accuracy(correct, held.samples.speakers, seen)
    return {"accuracy": float(correct.mean()), "samples": int(correct.size),
            "per_speaker": {str(k): v for k, v in speakers.accuracies().items()},
            "held_out": speakers.held_out, "train_samples": len(fit_data),
            "train_accuracy": info.get("train_accuracy", [None])[-1] if info.get("train_accuracy") else None,
            "loss": info.get("loss"), "train_seconds": round(time.perf_counter() - start, 1)}


def summary(rows: list[dict[str, Any]]) -> None:
    """Mean ± SE over seeds per (name, split), with the per-speaker means over seeds."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["name"], row["split"]), []).append(row)
    for (name, split), runs in groups.items():
        acc = [r["accuracy"] for r in runs]
        se = standard_error(acc)
        speakers = sorted(runs[0]["per_speaker"], key=int)
        per = {k: round(float(np.mean([r["per_speaker"][k] for r in runs])), 3) for k in speakers}
        print(f"{name:12s} {split:5s} seeds {sorted(r['seed'] for r in runs)}: {np.mean(acc):.3f}"
              + (f" ± {se:.3f}" if se is not None else "") + f"  per speaker {per}")


def plot(rows: list[dict[str, Any]], names: list[str], out: Path, seed: int = 0) -> Path:
    """Training loss per epoch of the logged seed-``seed`` runs of ``names`` (one line per
    run and split), each labelled with its held-out accuracy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for row in rows:
        if row["name"] in names and row.get("loss") and row["seed"] == seed:
            ax.plot(range(1, len(row["loss"]) + 1), row["loss"],
                    label=f"{row['name']} seed {row['seed']} ({row['split']} {row['accuracy']:.1%})")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss (cross entropy + regularisers)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key (dotted path, YAML value)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--split", choices=("valid", "test"), default="valid")
    parser.add_argument("--log", type=Path, default=Path("spoken_digits_selection.jsonl"))
    parser.add_argument("--name", default="", help="label of this candidate in the log")
    parser.add_argument("--summary", action="store_true", help="summarise the log and exit")
    parser.add_argument("--plot", type=Path, help="plot the loss curves of --plot-names to this PNG and exit")
    parser.add_argument("--plot-names", nargs="+", default=[])
    args = parser.parse_args(argv)
    done = {}
    if args.log.is_file():
        for line in args.log.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["key"]] = row
    if args.summary:
        summary(list(done.values()))
        return 0
    if args.plot:
        print(plot(list(done.values()), args.plot_names, args.plot))
        return 0
    accuracies = []
    for seed in args.seeds:
        key = json.dumps([args.config.as_posix(), sorted(args.set), seed, args.split])
        row = done.get(key)
        if row is None:
            row = {"key": key, "name": args.name, "config": args.config.as_posix(), "set": args.set,
                   "seed": seed, "split": args.split, **run_one(args.config, args.set, seed, args.split)}
            with args.log.open("a") as log:
                log.write(json.dumps(row) + "\n")
        accuracies.append(row["accuracy"])
        fit = row["train_accuracy"]
        print(f"{args.name or args.config.name} seed {seed} {args.split}: {row['accuracy']:.3f} "
              f"(train {'-' if fit is None else round(fit, 3)}, {row['train_seconds']} s) "
              f"per speaker {row['per_speaker']}", flush=True)
    se = standard_error(accuracies)
    print(f"{args.name or args.config.name} {args.split}: mean {np.mean(accuracies):.3f}"
          + (f" ± {se:.3f} (SE over {len(accuracies)} seeds)" if se is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
