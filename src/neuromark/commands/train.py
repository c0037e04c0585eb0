"""``neuromark train CONFIG``: train the checkpoint(s) a config's task caches, through the
task protocol (``task.train(plan, ctx, checkpoint=..., retrain=True)``: one
:class:`~neuromark.training.checkpoints.Prepared`, or a list of them for a task with several, e.g.
primate_reaching's per-session decoders)."""

from __future__ import annotations

import argparse
from pathlib import Path

from neuromark.commands import add_command
from neuromark.commands.run import (
    add_allow_long_flag,
    add_cache_flag,
    add_device_flag,
    context_from_args,
)
from neuromark.errors import ConfigError
from neuromark.io_atomic import claim_output_file

DESCRIPTION = """Train the model a config describes (classification, detection, fscil,
primate_reaching: a model family with a training recipe) and write the checkpoint named by its
model.checkpoint key (or --out; primate_reaching: one decoder per session, or the shared one, in
checkpoint_dir or the folder --out), replacing a neuromark checkpoint there (never a file neuromark
did not write). A --out file that exists is refused unless --overwrite (then still only a neuromark
checkpoint is replaced); the config itself never is. The checkpoint loads with
torch.load(weights_only=True); `neuromark run CONFIG` then reuses it while its recipe is unchanged."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "train", "train a config's model and write its checkpoint",
                         DESCRIPTION)
    parser.add_argument("config", type=Path, metavar="CONFIG")
    parser.add_argument("--out", type=Path, default=None, help="checkpoint path (overrides the config; "
                        "primate_reaching: the folder of its decoders)")
    parser.add_argument("--overwrite", action="store_true",
                        help="let --out replace an existing file (still only a neuromark "
                        "checkpoint; never the config itself)")
    add_cache_flag(parser)
    add_device_flag(parser)
    add_allow_long_flag(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=_train)


def _train(args: argparse.Namespace) -> int:
    from neuromark.config import load_config
    from neuromark.suite import task_of

    ctx = context_from_args(args)
    config = load_config(args.config)
    config.cache_root = ctx.cache_dir
    if args.out is not None and args.out.exists() and not args.out.is_dir():  # not a decoders folder
        claim_output_file(args.out, overwrite=args.overwrite, flag="--out",
                          protected={"the config": config.path or args.config})
    task = task_of(config)
    train = getattr(task, "train", None)
    if not callable(train):
        note = getattr(task, "train_note", "") or "it declares no train(plan, ctx) step"
        raise ConfigError(f"{config.where(('task',))}: task {task.name!r} has no checkpoint for "
                          f"`neuromark train` to write: {note}; `neuromark run CONFIG` trains "
                          "what it needs")
    plan = task.plan(config, ctx)
    trained = train(plan, ctx, checkpoint=args.out, retrain=True)
    name = config.data.get("model", {}).get("name") if isinstance(config.data.get("model"), dict) else None
    for prepared in trained if isinstance(trained, list) else [trained]:
        meta = prepared.meta
        parts = [f"on {meta['train_samples']} samples" if meta.get("train_samples") is not None else
                 f"on {meta['train_files']} files" if meta.get("train_files") is not None else "",
                 f"in {meta.get('train_seconds') or 0:.1f} s"]
        acc = (meta.get("train_accuracy") or [meta.get("final_train_accuracy")])[-1]
        print(f"trained {name or task.name} " + " ".join(p for p in parts if p)
              + (f"; final training accuracy {acc:.3f}" if acc is not None else ""))
        print(f"checkpoint: {prepared.path}")
    return 0
