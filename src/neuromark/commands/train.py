"""``neuromark train CONFIG``: run a config's training recipe and write its checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.commands.run import add_cache_flag, add_device_flag, context_from_args
from neuromark.errors import ConfigError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "train", help="train a baseline from a benchmark config and write its checkpoint",
        description="Train the model a classification config describes (model, data, train "
                    "sections) and write the checkpoint named by its `checkpoint` key (or --out). "
                    "The checkpoint loads with torch.load(weights_only=True); `neuromark run "
                    "CONFIG` then evaluates it with the harness.")
    parser.add_argument("config", type=Path, metavar="CONFIG")
    parser.add_argument("--out", type=Path, default=None, help="checkpoint path (overrides the config)")
    add_cache_flag(parser)
    add_device_flag(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=_train)


def _train(args: argparse.Namespace) -> int:
    from neuromark.config import load_config
    from neuromark.suite import task_of
    from neuromark.tasks.classification import TASK

    ctx = context_from_args(args)
    config = load_config(args.config)
    config.cache_root = ctx.cache_dir
    task_of(config)  # a clear error for configs of other tasks
    if config.data.get("task") != "classification":
        raise ConfigError(f"{config.where(('task',))}: `neuromark train` supports task "
                          f"'classification', not {config.data.get('task')!r}")
    plan = TASK.plan(config, ctx)
    if plan.family is None:
        raise ConfigError(f"{config.where(('model',))}: model "
                          f"{plan.settings.model.name or plan.settings.model.checkpoint!r} has no "
                          "training recipe; `neuromark train` trains model families (snn, rsnn, lstm, svm, "
                          "dvs_gesture_snn, gsc_m5, gsc_snn)")
    prepared = TASK.prepare(plan, ctx, checkpoint=args.out, retrain=True)
    meta = prepared.meta
    acc = (meta.get("train_accuracy") or [None])[-1]
    print(f"trained {plan.settings.model.name} on {meta.get('train_samples')} samples in "
          f"{meta.get('train_seconds', 0):.1f} s"
          + (f"; final training accuracy {acc:.3f}" if acc is not None else ""))
    print(f"checkpoint: {prepared.path}")
    return 0
