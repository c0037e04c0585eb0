"""``neuromark export onnx CONFIG OUT.onnx``: the model a config evaluates, exported to ONNX
and checked with onnxruntime on the config's first test batch
(:func:`neuromark.models.onnx_export.export_onnx`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from neuromark.commands import add_command
from neuromark.commands.run import add_cache_flag, context_from_args
from neuromark.errors import ConfigError
from neuromark.models.onnx_export import export_onnx

DESCRIPTION = """Export the model a config evaluates to ONNX (format: onnx) and check the file
with onnxruntime: its outputs must equal the torch model's on the config's first test batch
within float tolerance. The model is the task's checkpoint (trained first when missing, as
`neuromark run` would); a task whose plan holds no test split, or a model that keeps state
from one call to the next, is refused with the reason. Needs the extra onnx
(pip install 'neuromark[onnx]')."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "export", "export a config's model (ONNX, checked)",
                         DESCRIPTION)
    parser.add_argument("format", choices=["onnx"])
    parser.add_argument("config", type=Path, metavar="CONFIG")
    parser.add_argument("out", type=Path, metavar="OUT")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default 1e-5)")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default 1e-4)")
    add_cache_flag(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=_export)


def first_batch(plan: Any, where: str) -> Any:
    """The first input batch of a plan's test split (``plan.test``: a data set with
    ``loader(batch_size)`` or a torch data set), at the config's evaluation batch size."""
    import torch

    test = getattr(plan, "test", None)
    if test is None:
        raise ConfigError(f"{where}: this task's plan holds no test split to check an export on")
    size = getattr(getattr(getattr(plan, "settings", None), "eval", None), "batch_size", 1)
    loader = test.loader(size) if callable(getattr(test, "loader", None)) else \
        torch.utils.data.DataLoader(test, batch_size=size)
    batch = next(iter(loader))
    data = batch[0] if isinstance(batch, (tuple, list)) else batch
    if not isinstance(data, torch.Tensor):
        raise ConfigError(f"{where}: the test batch's input is {type(data).__name__}, not one "
                          f"tensor: ONNX export here takes a single tensor input")
    return data


def _export(args: argparse.Namespace) -> int:
    from neuromark.config import load_config
    from neuromark.suite import task_of

    ctx = context_from_args(args)
    config = load_config(args.config)
    config.cache_root = ctx.cache_dir
    task = task_of(config)
    where = str(config.path or args.config)
    train = getattr(task, "train", None)
    if not callable(train):
        raise ConfigError(f"{where}: task {task.name!r} has no model checkpoint to export")
    plan = task.plan(config, ctx)
    prepared = train(plan, ctx, checkpoint=None, retrain=False)
    if isinstance(prepared, list):
        raise ConfigError(f"{where}: task {task.name!r} has {len(prepared)} models (one per "
                          f"session); export one config per model")
    module = getattr(prepared.model, "module", prepared.model)
    report = export_onnx(module, first_batch(plan, where).cpu(), args.out,
                         atol=args.atol, rtol=args.rtol)
    print(json.dumps(report, indent=1))
    return 0
