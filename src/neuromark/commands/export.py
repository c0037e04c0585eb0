"""``neuromark export onnx CONFIG OUT.onnx``: the model a config evaluates, exported to ONNX
and checked with onnxruntime on the config's first test batch
(:func:`neuromark.models.onnx_export.export_onnx`); ``neuromark export nir CONFIG OUT.nir``:
an snnTorch model through snnTorch's NIR exporter (:func:`neuromark.models.nir_model.to_nir`),
read back with neuromark's NIR import and its outputs on the first test batch compared.

A task whose checkpoint step returns several models (one per session) chooses the one to
export and the input to check it on through its optional hook
``example_input(plan, prepared, choice, where) -> (prepared one, input batch, details)``
(:mod:`neuromark.tasks.base`): ``choice`` is ``--session`` (None: the task's default), the
details are added to the printed report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from neuromark.commands import add_command
from neuromark.commands.run import add_cache_flag, context_from_args
from neuromark.errors import ConfigError
from neuromark.io_atomic import claim_output_file, same_file, temp_beside
from neuromark.models.onnx_export import export_onnx

DESCRIPTION = """Export the model a config evaluates to ONNX (format: onnx) and check the file
with onnxruntime: its outputs must equal the torch model's on the config's first test batch
within float tolerance. The model is the task's checkpoint (trained first when missing, as
`neuromark run` would); a task whose plan holds no test split is refused with the reason. A
model that keeps state from one call to the next (a streaming SNN, a decoder with input
history) is exported one time step at a time, its state as explicit inputs and outputs,
and checked step by step over the whole first test sample with its state fed back.
A task that trains several models (one per session) picks the one to export and the input
to check it on (its example_input: by default the first session's model, or --session's,
on the first chunk of that session's test stream). Needs the extra onnx
(pip install 'neuromark[onnx]'). Format nir: snnTorch networks only (snnTorch's exporter),
written with nir.write, read back and compared on the first test batch (the report says
whether the outputs agree: NIR's LIF resets to v_reset, so a subtract reset comes back as a
zero reset)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "export", "export a config's model (ONNX, checked)",
                         DESCRIPTION)
    parser.add_argument("format", choices=["onnx", "nir"])
    parser.add_argument("config", type=Path, metavar="CONFIG")
    parser.add_argument("out", type=Path, metavar="OUT")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (default 1e-5)")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (default 1e-4)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing OUT (never the config, its checkpoint or "
                        "model file)")
    parser.add_argument("--session", default=None, help="a task with one model per session: "
                        "whose model (default: the config's first session)")
    add_cache_flag(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=_export)


def config_inputs(config: Any) -> dict[str, Any]:
    """The files a config reads that an export must never replace: the config itself, its
    model checkpoint and a ``python`` model's source file (what -> path)."""
    from neuromark.config import resolve_path

    inputs: dict[str, Any] = {"the config": config.path}
    model = config.data.get("model")
    if not isinstance(model, dict):
        return inputs
    for what, given in (("the config's model.checkpoint", model.get("checkpoint")),
                        ("the config's model file", str((model.get("options") or {}).get(
                            "factory", "")).rpartition(":")[0] if isinstance(
                            model.get("options"), dict) else None)):
        if isinstance(given, str) and given:
            try:
                inputs[what] = resolve_path(given, config)
            except ConfigError:
                pass  # a bad path is the plan's error, named there
    return inputs


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
    claim_output_file(args.out, overwrite=args.overwrite, protected=config_inputs(config))
    build = getattr(task, "export_model", None)
    train = getattr(task, "train", None)
    if not callable(build) and not callable(train):
        raise ConfigError(f"{where}: task {task.name!r} has no model checkpoint to export")
    plan = task.plan(config, ctx)
    prepared = build(plan, ctx) if callable(build) else train(plan, ctx, checkpoint=None,
                                                              retrain=False)
    for one in prepared if isinstance(prepared, list) else [prepared]:
        if one.path is not None and same_file(args.out, one.path):
            raise ConfigError(f"OUT {args.out}: is the checkpoint the config's model reads; "
                              f"neuromark never writes over its own inputs (not even with "
                              f"--overwrite): choose another path")
    which: dict[str, Any] = {}
    example_input = getattr(task, "example_input", None)
    if callable(example_input):
        prepared, batch, which = example_input(plan, prepared, args.session, where)
    elif isinstance(prepared, list):
        raise ConfigError(f"{where}: task {task.name!r} has {len(prepared)} models; export one "
                          f"config per model")
    else:
        batch = first_batch(plan, where).cpu()
    module = getattr(prepared.model, "module", prepared.model)
    if args.format == "onnx":
        steps, whole, time_dim = time_steps(prepared.model, module, batch)
        report = export_onnx(module, batch, args.out, atol=args.atol, rtol=args.rtol,
                             steps=steps, whole=whole, time_dim=time_dim)
    else:
        report = export_nir(module, batch, args.out, where)
    print(json.dumps({**report, **which}, indent=1))
    return 0


def time_steps(model: Any, module: Any, batch: Any) -> tuple[list[Any] | None, Any, int]:
    """How ``module`` is fed ``batch`` one time step at a time: ``(steps, whole, time_dim)``;
    an adapter that calls it once per step (its ``time_dim``) gets the batch unbound along
    that axis (``whole`` None), a module that takes the time axis (dim 1) itself gets
    length-1 slices and ``whole`` = the batch; ``(None, None, 1)`` without a time axis."""
    if batch.dim() < 2:
        return None, None, 1
    time_dim = getattr(model, "time_dim", None)
    if model is not module and isinstance(time_dim, int):
        return list(batch.unbind(time_dim)), None, time_dim
    return [batch.narrow(1, n, 1) for n in range(batch.shape[1])], batch, 1


def export_nir(module: Any, batch: Any, out: Path, where: str) -> dict[str, Any]:
    """Write ``module`` (snnTorch) as NIR to ``out``, read it back and compare the outputs
    on ``batch`` (B, T, *features), stepped over time by the snnTorch adapter."""
    import nir
    import torch

    from neuromark.models.nir_model import from_nir, to_nir
    from neuromark.models.snntorch_model import SNNTorchModel

    if not any(type(m).__module__.startswith("snntorch") for m in module.modules()):
        raise ConfigError(f"{where}: {type(module).__name__} holds no snnTorch layer; NIR export "
                          f"goes through snnTorch's exporter (export onnx covers other models)")
    sample = batch[0]
    while sample.dim() > 1:
        sample = sample[0]  # one time step of one sample, as snnTorch's exporter takes
    try:
        graph = to_nir(module, sample)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    tmp = temp_beside(out)
    try:
        nir.write(str(tmp), graph)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    original, back = SNNTorchModel(module), from_nir(out)
    with torch.no_grad():
        original.reset_state()
        want = original(batch)
        back.reset_state()
        got = back(batch)
    diff = float((got - want).abs().max()) if got.shape == want.shape else float("inf")
    return {"path": str(out), "nodes": len(graph.nodes), "input_shape": list(batch.shape),
            "round_trip_equal": bool(diff == 0.0), "max_abs_diff": diff}
