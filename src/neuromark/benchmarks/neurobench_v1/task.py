"""The ``neurobench_v1_row`` task: one published row of NeuroBench v1.0, measured on
NeuroBench's own trained checkpoint without data.

Config (YAML; ``configs/neurobench_v1/*.yaml``, paths relative to the config's folder)::

    task: neurobench_v1_row
    benchmark: {id: neurobench_v1-primate_ann2d_indy_20160622_01, version: "1.0",
                parent: neurobench-v1.0}
    row: primate reaching, ANN2D, indy_20160622_01   # the published row it belongs to
    model:
      name: neurobench_ann2d         # a model of this family (.models.BASELINES)
      options: {channels: 96}        # the primate decoders' input width
      checkpoint: checkpoints/primate_reaching/model_data/2D_ANN_Weight/indy_..._dict.pth
    example_shape: [51, 1, 96]       # the data-free input: Dense is a function of its shape
    dense_divisor: 2                 # optional: Dense per executed forward = ops / this
    published: {footprint: 20824, dense: 4704, r2_mean_indy: 0.593}   # NeuroBench's figures
    needs_data: the six primate sessions (Zenodo 583331) for R2, ...
    note: optional remark, kept in details.note

The plan builds the model and loads the checkpoint strictly (NeuroBench's three checkpoint
layouts, :func:`neuromark.networks.neurobench_v1.checkpoint_state`): a checkpoint that does
not fit the architecture is a ConfigError naming ``model.checkpoint``'s file and line, before
any work. The run feeds one batch of zeros of ``example_shape`` (its first axis is the batch)
and scores ``footprint`` (our rule), ``footprint_neurobench`` (NeuroBench 2.3.0's rule),
``parameter_count``, ``connection_sparsity`` and ``dense`` (synaptic operations' Dense per
sample, or per executed forward with ``dense_divisor``: all operations / the divisor), with
``details.published``, ``details.needs_data``, ``details.row`` and ``details.note``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from neuromark.config import ConfigFile, IdentitySettings, StrictModel, resolve_path
from neuromark.context import RunContext
from neuromark.devices import DeviceName
from neuromark.errors import ConfigError
from neuromark.identity import model_identity
from neuromark.metrics.execution_rate import NAME as RATE
from neuromark.metrics.execution_rate import stated_rate, undefined
from neuromark.model_label import ModelLabel
from neuromark.registry import models
from neuromark.results import Results, Score
from neuromark.tasks.base import TaskBase, TaskPlan, task_results
from neuromark.tasks.evaluation import evaluate

CITATION = """@article{yik2025neurobench,
  title={The neurobench framework for benchmarking neuromorphic computing algorithms and systems},
  author={Yik, Jason and others}, journal={Nature Communications}, volume={16}, pages={1545},
  year={2025}}"""


class RowModel(StrictModel):
    """``model: {name, options, checkpoint, label}``: a NeuroBench baseline of this family and
    NeuroBench's checkpoint of it."""

    name: str
    options: dict[str, Any] = {}
    checkpoint: str
    label: ModelLabel | None = None


class RowConfig(StrictModel):
    task: Literal["neurobench_v1_row"]
    description: str = ""
    benchmark: IdentitySettings
    row: str = Field(min_length=1, description="the published row this checkpoint belongs to")
    model: RowModel
    example_shape: list[int] = Field(min_length=1, description="the data-free input's shape; "
                                     "its first axis is the batch")
    dense_divisor: int | None = Field(None, gt=0, description="Dense per executed forward: "
                                      "all operations / this (None: per sample)")
    published: dict[str, Any] = Field(default_factory=dict,
                                      description="NeuroBench's published figures of the row")
    needs_data: str | None = None
    note: str | None = None
    device: DeviceName = "cpu"

    @field_validator("example_shape")
    @classmethod
    def _positive(cls, shape: list[int]) -> list[int]:
        if not all(n > 0 for n in shape):
            raise ValueError(f"every axis must be a positive integer, got {shape}")
        return shape


def load_row_model(settings: RowConfig, config: ConfigFile) -> tuple[Any, Any]:
    """(the model built and its checkpoint loaded strictly, in eval mode; the checkpoint's
    path); ConfigError naming the config's file and line otherwise."""
    from neuromark.benchmarks.neurobench_v1.models import BASELINES
    from neuromark.networks.neurobench_v1 import checkpoint_state

    spec = settings.model
    if spec.name not in BASELINES:
        raise ConfigError(f"{config.where(('model', 'name'))}: model.name: {spec.name!r} is no "
                          f"NeuroBench v1.0 baseline; known: {', '.join(sorted(BASELINES))}")
    try:
        net = models.get(spec.name)(**spec.options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{config.where(('model', 'options'))}: model.options: {exc}") from None
    path = resolve_path(spec.checkpoint, config)
    where = f"{config.where(('model', 'checkpoint'))}: model.checkpoint"
    if not path.is_file():
        raise ConfigError(f"{where}: no file {path}")
    try:
        net.load_state_dict(checkpoint_state(path), strict=True)
    except Exception as exc:  # noqa: BLE001 - unpickling and loading raise several types
        raise ConfigError(f"{where}: {path} does not fit architecture {spec.name!r}: "
                          f"{str(exc).strip()[:600]}") from None
    return net.eval(), path


class NeurobenchRowTask(TaskBase):
    """The ``neurobench_v1_row`` task (see the module docstring)."""

    name = "neurobench_v1_row"
    train_note = ("a row measures NeuroBench's own trained checkpoint (model.checkpoint); "
                  "NeuroBench's example scripts train them")
    settings_model = RowConfig

    def check(self, settings: RowConfig, config: ConfigFile, ctx: RunContext) -> dict[str, Any]:
        _, path = load_row_model(settings, config)  # a misfit: file and line, before any work
        return {"checkpoint": path}

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        from neuromark.benchmarks.neurobench_v1.models import adapter_for
        from neuromark.metrics.complexity import SynapticOperations
        from neuromark.metrics.static import (
            ConnectionSparsity,
            Footprint,
            FootprintNeurobench,
            ParameterCount,
        )

        settings, config = plan.settings, plan.config
        device = ctx.device_for(settings.device, config.where(("device",)),
                                label=settings.benchmark.id, announce=True)
        net, path = load_row_model(settings, config)  # fresh: a run changes its state
        example = torch.zeros(settings.example_shape)
        loader = DataLoader(TensorDataset(example, torch.zeros(example.shape[0])),
                            batch_size=example.shape[0])
        info = settings.benchmark.info(CITATION)
        metrics = [Footprint(), FootprintNeurobench(), ParameterCount(),
                   ConnectionSparsity(recurrent_biases=True),
                   SynapticOperations(mac_rule="per_call")]
        run = evaluate(ctx, adapter_for(settings.model.name, net), loader, metrics, info=info,
                       device=device, device_requested=ctx.device_requested(settings.device),
                       trained=True)
        scores = dict(run.scores)
        ops = scores.pop("synaptic_operations")
        dense = ops.value["Dense"]  # per sample (row of the example)
        if settings.dense_divisor:  # per executed forward: all operations / executions
            dense = dense * example.shape[0] / float(settings.dense_divisor)
        scores["dense"] = Score(dense, unit="ops", higher_is_better=False, raw={
            "per": "executed forward" if settings.dense_divisor else "sample",
            "example_shape": list(settings.example_shape)})
        details = dict(run.details)
        details.update({"row": settings.row, "architecture": settings.model.name,
                        "checkpoint": path.name, "published": dict(settings.published),
                        "needs_data": settings.needs_data, "note": settings.note})
        published = settings.published.get("footprint")
        details["primary_metric"] = "footprint_neurobench"  # the figure set beside the row's
        details["headline_note"] = ("NeuroBench 2.3.0's rule: parameters and buffers before any "
                                    "data" + (f"; published {published:,}" if published else "")
                                    + "; 'footprint' is ours")
        details[RATE] = stated_rate(settings.benchmark) or undefined(
            "data-free static figures of one example input: no data, so no time step")
        effective = settings.model_dump(mode="json")
        effective["model"]["checkpoint"] = str(path)
        spec = settings.model
        identity = model_identity(spec.name, spec.options, path, spec.label)
        return [task_results(scores, benchmark=info, model=identity, effective=effective,
                             device=ctx.device_record(device, settings.device), details=details,
                             provenance=run.provenance, flags=run.flags, artefacts=run.artefacts)]


TASK = NeurobenchRowTask()
