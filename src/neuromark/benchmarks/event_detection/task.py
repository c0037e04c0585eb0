"""The ``detection`` task: event-camera object detection scored by COCO mAP (NeuroBench's
Gen4 1 Mpx task), streamed sequentially over files.

Config::

    task: detection
    benchmark: {id: gen4-synthetic-convgru, version: "1.0", parent: gen4-detection}
    data:
      root: cache:event_detection/gen4_synthetic   # <root>/{train,test}/<stem>_td.dat + <stem>_bbox.npy
      synthesize: {files: {train: 6, test: 2}, duration_s: 3.0, height: 72, width: 128, seed: 0}
      preprocess: multi_channel_timesurface      # or histo
      network: [64, 36]                          # W, H: sensor / 2**k
      box_filter: {resolution: [640, 360]}       # NeuroBench's rule; [1280, 720]: the paper's
    model: {name: event_detector, options: {memory: gru, width: 8}, checkpoint: cache:checkpoints/x.pt}
    train: {epochs: 8, batch_size: 4}           # a model family of detection: trained once, cached
    train_if_missing: true                      # false: a missing or stale checkpoint is an error
    eval: {batch_size: 1, time_tol_us: 0, metrics: [coco_map, footprint, synaptic_operations]}
    device: cpu          # cpu (default), cuda, cuda:N or auto: trains and runs there; --device overrides

Protocol: ``num_tbins`` bins of ``delta_t_us`` (12 x 50 ms = one 600-ms sample per slot and
batch, execution rate 20 Hz); per-slot recurrent state reset at file starts (the model gets
``keep``); ground truth and detections stamped at each bin's end and joined with
``coco_map(time_tol_us=eval.time_tol_us)``; the first ``skip_us`` of each file unscored.
Complexity metrics are per 12-bin sample (the runner divides by the slots of each batch),
as the peer counts them. With ``data.synthesize``, the ``gen4`` data set entry writes
missing data first (:mod:`neuromark.synth.camera_events`, seeded, into ``root``).

``model.name`` is a registered model: a model family of ``detection``
(:class:`~neuromark.training.family.ModelFamily`, e.g. ``event_detector``) is trained on the
train/ files and cached at ``model.checkpoint`` (:mod:`neuromark.training.checkpoints`;
``neuromark train CONFIG`` retrains it); any other registered factory is built with
``options`` (its ``state_dict`` loaded from ``model.checkpoint`` when given).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from neuromark._threads import torch_threads
from neuromark.components import ComponentSpec, check_options
from neuromark.config import ConfigFile, IdentitySettings, Seed, StrictModel, resolve_path, validate
from neuromark.context import RunContext
from neuromark.devices import DeviceName, recipe_device
from neuromark.errors import ConfigError, DataError
from neuromark.identity import model_identity
from neuromark.metrics.names import MetricEntry, build_metrics, metric_names
from neuromark.model_label import ModelLabel
from neuromark.models.configured import build_configured
from neuromark.processors.encoder_cost import attach_front_end
from neuromark.registry import models
from neuromark.results import Results
from neuromark.tasks.base import TaskBase, TaskPlan
from neuromark.tasks.evaluation import evaluate
from neuromark.training.checkpoints import prepare
from neuromark.training.family import family_for, training_device


class SynthesizeSettings(StrictModel):
    files: dict[str, int] = {"train": 6, "test": 2}
    duration_s: float = Field(3.0, gt=0.6)
    height: int = Field(72, ge=16)
    width: int = Field(128, ge=16)
    seed: Seed = 0


class BoxFilterSettings(StrictModel):
    resolution: tuple[int, int] = (640, 360)
    min_diag: float = Field(60.0, ge=0)
    min_side: float = Field(20.0, ge=0)
    max_width_frac: float = Field(0.8, gt=0)


class DataSettings(StrictModel):
    root: str
    synthesize: SynthesizeSettings | None = None
    preprocess: Literal["multi_channel_timesurface", "histo"] = "multi_channel_timesurface"
    delta_t_us: int = Field(50_000, gt=0)
    num_tbins: int = Field(12, ge=1)
    network: tuple[int, int] | None = None  # None: the sensor size
    max_incr: float = Field(5.0, gt=0)
    box_filter: BoxFilterSettings = BoxFilterSettings()
    skip_us: int = Field(500_000, ge=0)
    on_invalid: Literal["error", "drop"] = "error"  # the readers' input contract (docs/failures.md)

    def time_step_s(self) -> tuple[float, str]:
        """One model step per time bin (:mod:`neuromark.metrics.execution_rate`)."""
        return self.delta_t_us * 1e-6, "data.delta_t_us, one time bin"


class ModelSettings(StrictModel):
    name: str = "event_detector"
    options: dict[str, Any] = {}
    checkpoint: str | None = None
    label: ModelLabel | None = None  # in results file names and leaderboards (default: name)


class EvalSettings(StrictModel):
    batch_size: int = Field(1, ge=1)
    time_tol_us: int = Field(0, ge=0)
    score_threshold: float = Field(0.05, ge=0, le=1)
    max_boxes: int = Field(100, ge=1)
    #: names or {name, options}; coco_map's options come from the model and time_tol_us
    metrics: list[MetricEntry] = ["coco_map", "footprint", "activation_sparsity", "synaptic_operations"]


class DetectionConfig(StrictModel):
    task: Literal["detection"]
    description: str = ""
    benchmark: IdentitySettings
    data: DataSettings
    model: ModelSettings = ModelSettings()
    train: dict[str, Any] | None = None
    train_if_missing: bool = True
    eval: EvalSettings = EvalSettings()
    device: DeviceName = "cpu"


def ensure_data(root: Path, synth: SynthesizeSettings | None) -> None:
    """The data at ``root``; with ``synth``, the ``gen4`` entry's generator writes them
    there first (:meth:`neuromark.benchmarks.event_detection.gen4.Gen4Entry.synthesize`: atomically, only when
    absent or different, never over files it did not write)."""
    from neuromark.benchmarks.event_detection.gen4 import GEN4

    if synth is not None:
        GEN4.synthesize(root, **synth.model_dump())
    elif not root.is_dir():
        raise DataError(f"{root}: no such data folder (and no data.synthesize to write one)")


class DetectionTask(TaskBase):
    """See the module docstring."""

    name = "detection"
    placement = "unit"

    settings_model = DetectionConfig

    def check(self, s: DetectionConfig, config: ConfigFile, ctx: RunContext) -> dict[str, Any]:
        build_metrics(s.eval.metrics, config, ("eval", "metrics"))  # coco_map: replaced at run
        if "coco_map" not in metric_names(s.eval.metrics):
            raise ConfigError(f"{config.where(('eval', 'metrics'))}: eval.metrics must include coco_map")
        for i, m in enumerate(s.eval.metrics):
            if not isinstance(m, str) and m.name == "coco_map" and m.options:
                raise ConfigError(f"{config.where(('eval', 'metrics', i))}: eval.metrics[{i}]: "
                                  "coco_map takes no options here (classes and frame size come "
                                  "from the model, the time tolerance from eval.time_tol_us)")
        family = family_for(models, s.model.name, self.name, config.where(("model", "name")))
        parts: dict[str, Any] = {"family": family}
        if family is None and s.train is not None:
            raise ConfigError(f"{config.where(('train',))}: train: model {s.model.name!r} has no "
                              "training recipe (it is no model family of detection)")
        if family is None:  # a factory (python: your own file): options checked, file found
            check_options(models, ComponentSpec(name=s.model.name, options=s.model.options),
                          config, ("model",))
            if s.model.checkpoint is not None and not resolve_path(s.model.checkpoint, config).is_file():
                raise ConfigError(f"{config.where(('model', 'checkpoint'))}: model.checkpoint: "
                                  f"{resolve_path(s.model.checkpoint, config)}: no such file")
        if family is not None:
            parts["options"] = validate(family.options_model, s.model.options, config, ("model", "options"))
            parts["train"] = validate(family.train_model, s.train or {}, config, ("train",))
            if s.model.checkpoint is None:
                raise ConfigError(f"{config.where(('model',))}: model.checkpoint: give the file where "
                                  "the trained weights are cached")
        return parts

    def _streams(self, plan: TaskPlan) -> tuple[Any, Any, dict[str, Any]]:
        from neuromark.benchmarks.event_detection.boxes import BoxFilter, LabelPipeline
        from neuromark.benchmarks.event_detection.stream import SequentialStream, invalid_records, list_files
        from neuromark.data.prophesee import read_dat_header
        from neuromark.processors.event_frames import EventTensor

        s, config = plan.settings, plan.config
        root = resolve_path(s.data.root, config)
        ensure_data(root, s.data.synthesize)
        test, skipped = list_files(root / "test", s.data.on_invalid)
        if not test:
            raise DataError(f"{root / 'test'}: no labelled *_td.dat files")
        header = read_dat_header(test[0].dat)
        if header.width is None or header.height is None:
            raise DataError(f"{test[0].dat}: header has no Width/Height")
        sensor = (header.width, header.height)
        network = s.data.network or sensor
        ds = math.log2(sensor[0] / network[0])
        if ds != int(ds) or sensor[1] >> int(ds) != network[1]:
            raise ConfigError(f"{config.where(('data', 'network'))}: data.network {list(network)} must be "
                              f"the sensor size {list(sensor)} divided by a power of two")
        tensor = EventTensor(s.data.preprocess, s.data.delta_t_us, s.data.num_tbins, network[1], network[0],
                             int(ds), s.data.max_incr)
        bf = s.data.box_filter
        labels = LabelPipeline(sensor, network, BoxFilter(bf.resolution, bf.min_diag, bf.min_side,
                                                          bf.max_width_frac), s.data.skip_us)
        train_files = list_files(root / "train", s.data.on_invalid)[0] if (root / "train").is_dir() else []
        info = {"root": str(root), "sensor": list(sensor), "network": list(network),
                "test_files": [f.stream for f in test], "skipped_test_files": [p.name for p in skipped],
                "box_filter_resolution": list(bf.resolution), "time_tol_us": s.eval.time_tol_us}
        if s.data.on_invalid == "drop":  # records dropped per file and rule (none: {})
            info["invalid_records_dropped"] = invalid_records(test + train_files)
        batch = plan.parts["train"].batch_size if plan.parts.get("train") is not None else 1
        return (SequentialStream(train_files, tensor, labels, batch),
                SequentialStream(test, tensor, labels, s.eval.batch_size), info)

    def train(self, plan: TaskPlan, ctx: RunContext, *, checkpoint: Path | None = None,
              retrain: bool = True, stream: Any = None) -> Any:
        """Train the model family's checkpoint (``retrain``: even when one of the same recipe
        is cached) through the shared cache; returns its
        :class:`~neuromark.training.checkpoints.Prepared`. ``stream``: the training stream, when built."""
        s, config, family = plan.settings, plan.config, plan.parts.get("family")
        if family is None:
            raise ConfigError(f"{config.where(('model', 'name'))}: model {s.model.name!r} has no "
                              "training recipe; `neuromark train` trains model families of detection")
        if stream is None:
            stream = self._streams(plan)[0]
        if not stream.files:
            raise DataError("the detector needs a train/ folder of labelled files to train on")
        device = ctx.device_for(s.device, config.where(("device",)))
        options, settings = plan.parts["options"], plan.parts["train"]
        recipe = {"model": s.model.options, "train": settings.recipe(),
                  "data": s.data.model_dump(mode="json", exclude={"root", "synthesize", "on_invalid"}),
                  **recipe_device(training_device(family, device))}

        def fit() -> tuple[Any, dict[str, Any]]:
            return family.fit(options, settings, stream, options.classes, quiet=ctx.quiet,
                              label=s.benchmark.id, device=training_device(family, device))

        return prepare(family, checkpoint or resolve_path(s.model.checkpoint or "", config), recipe,
                       [p for f in stream.files for p in (f.dat, f.boxes)], fit,
                       train_if_missing=s.train_if_missing, retrain=retrain, device=device)

    def _model(self, plan: TaskPlan, train: Any, ctx: RunContext) -> tuple[Any, dict]:
        s, config = plan.settings, plan.config
        if plan.parts.get("family") is not None:
            prepared = self.train(plan, ctx, retrain=False, stream=train)
            meta = prepared.meta
            return prepared.model, {"checkpoint": str(prepared.path), "trained_now": prepared.trained,
                                    "train_seconds": meta.get("train_seconds"), "epochs": meta.get("epochs"),
                                    "final_train_loss": (meta.get("loss") or [None])[-1]}
        checkpoint = resolve_path(s.model.checkpoint, config) if s.model.checkpoint else None
        model, provenance = build_configured(s.model.name, s.model.options, checkpoint, config)
        return model, {"checkpoint": s.model.checkpoint, "_provenance": provenance}

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        from neuromark.benchmarks.event_detection.boxes import DETECTION_CLASSES
        from neuromark.benchmarks.event_detection.coco_map import CocoMap
        from neuromark.benchmarks.event_detection.model import decode

        s, config = plan.settings, plan.config
        device = ctx.device_for(s.device, config.where(("device",)), label=s.benchmark.id,
                                announce=True)
        train, test, info = self._streams(plan)
        model, details = self._model(plan, train, ctx)
        provenance = details.pop("_provenance", {})
        if hasattr(model, "forget"):
            model.forget()
        net_w, net_h = info["network"]

        def decoder(output: Any) -> list[Any]:
            return decode(output.cpu(), test.stamps, height=net_h, width=net_w,
                          score_threshold=s.eval.score_threshold, max_boxes=s.eval.max_boxes)

        metrics = [CocoMap(DETECTION_CLASSES, height=net_h, width=net_w, time_tol_us=s.eval.time_tol_us)
                   if m.name == "coco_map" else m
                   for m in build_metrics(s.eval.metrics, config, ("eval", "metrics"))]
        with torch_threads(1):
            results = evaluate(ctx, model, test, metrics, postprocessors=[decoder],
                               info=s.benchmark.info(getattr(model, "citation", "")),
                               device=device, device_requested=ctx.device_requested(s.device),
                               config=s.model_dump(mode="json"),
                               seeds={"train": (s.train or {}).get("seed", 0)})
        results.details.update(details)
        results.provenance.update(provenance)  # model_file: your own python factory's source
        results.model = model_identity(s.model.name, s.model.options, resolve_path(
            s.model.checkpoint, config) if s.model.checkpoint else None, s.model.label)
        results.details.update(info)
        attach_front_end(results, test)  # the event tensor's cost, beside the model's (issue 47.4)
        results.details["padded_samples"] = test.padded_samples
        results.details["sample"] = f"{s.data.num_tbins} bins x {s.data.delta_t_us} us per slot"
        results.details["primary_metric"] = "coco_map"  # the headline reports and leaderboards show
        return [results]


TASK = DetectionTask()
