"""The ``classification`` task: any registered data set, any registered or checkpointed model.

Config::

    task: classification
    benchmark: {id: spoken-digits-rsnn, version: "1.0", parent: shd-classification}
    dataset: {name: spoken_digits, options: {dt_us: 10000, t_max_us: 850000, pool: 10}}
    model:
      name: rsnn                     # a registered model (neuromark list)
      options: {hidden: 128}
      checkpoint: cache:checkpoints/spoken_digits_rsnn.pt
    train: {epochs: 30, batch_size: 32, lr: 0.01, seed: 0}   # for model families with a recipe
    eval: {batch_size: 128, metrics: [classification_accuracy, footprint]}
    device: cpu                      # cpu (default), cuda, cuda:N or auto; --device overrides

- ``dataset`` names an entry of :data:`neuromark.registry.datasets`, called with
  ``split="test"`` (and ``split="train"`` for training) plus ``options``; it yields
  ``(input, label)`` per sample and may offer ``loader(batch_size, *, shuffle, seed,
  drop_last)`` (spike files stream batches read in chunks, memory O(batch)); otherwise a
  torch ``DataLoader`` batches it. Spikes a loader drops after ``t_max_us`` (``late: drop``)
  are counted in the results (``dropped_late_spikes``) and printed.
- ``model`` names an entry of :data:`neuromark.registry.models`. A model family with a
  training recipe (``snn``, ``rsnn``, ``lstm``, ``svm``, ``dvs_gesture_snn``, ``gsc_m5``,
  ``gsc_snn``; ``train:`` as the family's ``train_model`` defines it) is trained once on the train split
  and cached at ``checkpoint`` by recipe hash. Any other entry is a factory called with
  ``options`` returning a torch module or a model adapter; with ``checkpoint`` its
  ``state_dict`` is loaded from that file; without it the weights are scored as the factory
  built them and the results carry the untrained flag (:mod:`neuromark.models.untrained`)
  unless ``model.trained`` declares it (``false``: on purpose; ``true``: the factory loads
  its weights). ``model: {checkpoint: FILE}`` alone evaluates a neuromark checkpoint as saved.
  A bare module holding snnTorch neurons is stepped over time (``SNNTorchModel``,
  :mod:`neuromark.models.stepped`).
- The output is decoded by ``eval.postprocessor`` (:mod:`neuromark.processors.decoding`;
  default: a model family's trained readout, ``max_over_time`` or ``mean_over_time`` by
  ``train.readout``; for other models ``spike_count`` on (B, T, K) outputs, neurobench's
  ``ChooseMaxCount``, and ``argmax`` on (B, K) logits). The rule used and the samples whose
  top class was tied are recorded (``details["decoding"]``); over 5 % tied adds a flag.
- ``device`` is where the model trains and runs (docs/devices.md): the model family's
  recipe trains there (the SVM on the CPU), the runner moves the model and each batch, and
  spike files stream from pinned memory to a CUDA device.
- When the test file carries ``extra/speaker``, the speaker analysis of Cramer et al.
  (2020) is added (:class:`~neuromark.metrics.speakers.SpeakerAccuracy`): accuracy per
  speaker and its spread, and held-out vs seen speakers, where held out means absent from
  the training file (when the data set has a train split).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from neuromark._threads import torch_threads
from neuromark.components import ComponentSpec, build_component, check_options, entry_parameters
from neuromark.config import ConfigFile, IdentitySettings, StrictModel, resolve_path, validate
from neuromark.context import RunContext
from neuromark.devices import DeviceName, recipe_device
from neuromark.errors import ConfigError, DataError
from neuromark.identity import identity_for, model_identity
from neuromark.metrics.execution_rate import per_step_rate
from neuromark.metrics.names import MetricEntry, build_metrics
from neuromark.model_label import ModelLabel
from neuromark.models import as_adapter
from neuromark.models.configured import build_configured
from neuromark.models.untrained import UNTRAINED_FLAG, weights_file
from neuromark.processors.decoding import AutoDecoder, Decoder, default_rule
from neuromark.processors.encoder_cost import attach_front_end
from neuromark.registry import datasets, models
from neuromark.results import Results
from neuromark.said import say_flag
from neuromark.tasks.base import TaskBase, TaskPlan, out_dir_of, task_results
from neuromark.tasks.evaluation import evaluate
from neuromark.training.checkpoints import Prepared
from neuromark.training.family import family_for, training_device

#: Options of data set entries that hold paths, resolved from the config's folder
#: (:func:`neuromark.config.resolve_path`).
PATH_OPTIONS = ("path", "root", "train", "test", "valid")
#: Where a data set entry with a ``cache_dir`` option keeps what it decodes: in the run's
#: cache folder (``--cache-dir``; a ``cache:`` path, :func:`neuromark.config.resolve_path`).
DECODED_CACHE = "cache:decoded"

#: Default metrics: spiking models get all five; the others have no neuron modules, so
#: activation sparsity and membrane updates do not apply to them.
DEFAULT_METRICS = {
    "spiking": ["classification_accuracy", "footprint", "activation_sparsity", "synaptic_operations",
                "membrane_updates"],
    "other": ["classification_accuracy", "footprint", "synaptic_operations"],
}


def class_targets(batch: tuple[Any, Any]) -> tuple[Any, Any]:
    """Preprocessor: the targets must be integer class indices; a float target that is not
    a whole number (it would never equal a predicted class, scoring 0) is a
    :class:`DataError` (the runner adds the batch)."""
    import torch

    data, targets = batch
    t = torch.as_tensor(targets)
    if t.is_floating_point():
        bad = ((~torch.isfinite(t)) | (t != torch.round(t))).reshape(-1).nonzero()
        if len(bad):
            i = int(bad[0])
            raise DataError(f"sample {i} of the batch: class target {t.reshape(-1)[i].item()!r} "
                            "is not an integer class index")
        targets = t.long()
    return data, targets


class ModelSpec(StrictModel):
    """``model: {name, options, checkpoint, label, trained}``: a registered model and/or a
    checkpoint file; ``label`` names it in results files and leaderboards (default: the
    name). A factory's model with no ``checkpoint`` is scored as the factory built it, and
    its results carry the untrained flag (:mod:`neuromark.models.untrained`) unless
    ``trained`` says otherwise: ``true`` (the factory loads trained weights itself) or
    ``false`` (untrained on purpose, e.g. for timing only)."""

    name: str | None = None
    options: dict[str, Any] = {}
    checkpoint: str | None = None
    label: ModelLabel | None = None
    trained: bool | None = None

    @model_validator(mode="after")
    def _named(self) -> ModelSpec:
        if self.name is None and self.checkpoint is None:
            raise ValueError("give model.name (a registered model) and/or model.checkpoint")
        return self


class EvalSettings(StrictModel):
    batch_size: int = Field(128, ge=1)
    #: names or {name, options}; None: DEFAULT_METRICS for the model
    metrics: list[MetricEntry] | None = None
    #: None: as the model family was trained (train.readout), else spike_count on (B, T, K)
    #: outputs and argmax on (B, K) logits (neuromark.processors.decoding)
    postprocessor: Literal["max_over_time", "mean_over_time", "spike_count", "argmax"] | None = None
    #: synaptic_operations' coverage check; None: ``--coverage`` (the run context), else error
    coverage: Literal["error", "warn"] | None = None
    exempt_params: list[str] = []  # parameters (or modules) that apply no synapses here


class ClassificationConfig(StrictModel):
    task: Literal["classification"]
    description: str = ""
    benchmark: IdentitySettings
    dataset: ComponentSpec
    model: ModelSpec
    train: Any = None  # validated by the model family's recipe
    train_if_missing: bool = True
    eval: EvalSettings = EvalSettings()
    device: DeviceName = "cpu"


#: What the classification task's check builds, kept in the plan's ``parts`` (read as
#: ``plan.NAME``, :class:`~neuromark.tasks.base.TaskPlan`): the data set options (paths
#: resolved), the torch device it trains and runs on, the test split (built, not read), the
#: model family with a training recipe (or None), its validated ``model.options`` and
#: ``train:``, the resolved ``model.checkpoint`` (or None), the metric entries; the train
#: split (built once when first needed) and a model given in Python
#: (``Benchmark.from_config``) replacing ``model:`` (:meth:`ClassificationTask.with_model`).
PLAN_PARTS = ("dataset_options", "device", "test", "family", "model_options", "train",
              "checkpoint", "metric_names", "train_split", "given")


class ClassificationTask(TaskBase):
    """Classification of any registered data set by any registered or checkpointed model."""

    name = "classification"
    placement = "unit"

    settings_model = ClassificationConfig

    def check(self, settings: ClassificationConfig, config: ConfigFile,
              ctx: RunContext) -> dict[str, Any]:
        """The plan's parts (:data:`PLAN_PARTS`): data set options with their paths resolved,
        the device, the test split, the model (a family's options and recipe, or a factory's
        options checked), ``model.checkpoint`` resolved once and checked, the metrics."""
        options = {k: str(resolve_path(v, config)) if k in PATH_OPTIONS and isinstance(v, str) else v
                   for k, v in settings.dataset.options.items()}
        parts: dict[str, Any] = dict.fromkeys(PLAN_PARTS)
        parts["dataset_options"] = options
        parts["device"] = ctx.device_for(settings.device, config.where(("device",)))
        parts["test"] = self._dataset(TaskPlan(config, settings, parts), config, "test")
        spec = settings.model
        if spec.name is not None:
            family = family_for(models, spec.name, self.name, config.where(("model", "name")))
            if family is None:
                check_options(models, ComponentSpec(name=spec.name, options=spec.options),
                              config, ("model",))
            else:
                parts["family"] = family
                parts["model_options"] = validate(family.options_model, spec.options, config,
                                                  ("model", "options"))
                parts["train"] = validate(family.train_model, settings.train or {}, config, ("train",))
                if spec.checkpoint is None:
                    raise ConfigError(f"{config.where(('model',))}: model.checkpoint: model "
                                      f"{spec.name!r} is trained by its recipe; give the file "
                                      "where its weights are cached")
        if spec.checkpoint is not None:  # checked before any work
            try:
                where = resolve_path(spec.checkpoint, config)
            except ConfigError as exc:
                raise ConfigError(f"{config.where(('model', 'checkpoint'))}: model.checkpoint: "
                                  f"{exc}") from None
            if where.exists() and not where.is_file():
                raise ConfigError(f"{config.where(('model', 'checkpoint'))}: model.checkpoint: "
                                  f"{where} is not a file (a folder?)")
            if parts["family"] is None and not where.exists():  # only a recipe's cache may be absent
                raise ConfigError(f"{config.where(('model', 'checkpoint'))}: model.checkpoint: "
                                  f"{where}: no such file (relative paths lie in the config's folder)")
            parts["checkpoint"] = where
        if parts["family"] is None and settings.train is not None:
            raise ConfigError(f"{config.where(('train',))}: train: model "
                              f"{spec.name or spec.checkpoint!r} has no training recipe")
        spiking = parts["family"].spiking if parts["family"] is not None else True
        parts["metric_names"] = (list(settings.eval.metrics) if settings.eval.metrics is not None
                                 else DEFAULT_METRICS["spiking" if spiking else "other"])
        build_metrics(parts["metric_names"], config, ("eval", "metrics"))
        return parts

    @staticmethod
    def _dataset(plan: TaskPlan, config: ConfigFile, split: str) -> Any:
        options = dict(plan.dataset_options)
        if config.cache_root is not None and "cache_dir" not in options and \
                "cache_dir" in entry_parameters(datasets, plan.settings.dataset.name):
            options["cache_dir"] = str(resolve_path(DECODED_CACHE, config))  # the run's --cache-dir
        spec = plan.settings.dataset.model_copy(update={"options": options})
        try:
            return build_component(datasets, spec, config, ("dataset",), split=split)
        except (DataError, ConfigError) as exc:
            if str(exc).startswith(str(config.path)):
                raise
            raise ConfigError(f"{config.where(('dataset',))}: dataset {spec.name!r} ({split}): "
                              f"{exc}") from None

    def _train_split(self, plan: TaskPlan) -> Any:
        """The train split, built once per plan (training and the speaker analysis share it)."""
        if plan.train_split is None:
            plan.parts["train_split"] = self._dataset(plan, plan.config, "train")
        return plan.train_split

    def execute(self, plan: TaskPlan, ctx: RunContext) -> list[Results]:
        import torch

        config, settings, test = plan.config, plan.settings, plan.test
        ctx.device_for(settings.device, config.where(("device",)), label=settings.benchmark.id,
                       announce=True)
        model, details = self._given(plan) if plan.given is not None else self._model(plan, ctx, test)
        meta = details.pop("_meta", {})
        provenance = details.pop("_provenance", {})
        size = settings.eval.batch_size
        pin = plan.device.type == "cuda"  # page-locked batches copy to the GPU asynchronously
        loader = (_test_loader(test, size, pin) if hasattr(test, "loader")
                  else torch.utils.data.DataLoader(test, batch_size=size, pin_memory=pin))
        citation = getattr(test, "citation", "") or getattr(plan.family, "citation", "")
        info = settings.benchmark.info(citation)
        metrics = build_metrics(plan.metric_names, config, ("eval", "metrics"))
        metrics += self._speaker_metrics(plan, config, test)
        if settings.eval.exempt_params:
            model = as_adapter(model)
            model.exempt_params = tuple(settings.eval.exempt_params)
        decoder = self._decoder(plan)
        decoder.num_classes = _num_classes(test)  # predictions must lie in the labels' range
        trained = plan.given.trained if plan.given is not None else _declared_trained(plan)
        # a factory's model, no checkpoint, nothing declared: flagged here, with the config's
        # line; weights read from a file (a NIR graph, a checkpoint) are not a factory's draw
        from_file = weights_file(model) or details.get("checkpoint")
        if from_file and trained is None:
            trained = True
            details["weights_file"] = str(from_file)
        unloaded = plan.given is None and trained is None and settings.model.checkpoint is None
        recipe = plan.train if plan.given is None else None
        with torch_threads(recipe.threads if recipe else 1):
            run = evaluate(ctx, model, loader, metrics, preprocessors=[class_targets],
                           postprocessors=[decoder], info=info, device=plan.device,
                           device_requested=ctx.device_requested(settings.device),
                           coverage=settings.eval.coverage,
                           trained=True if unloaded else trained)
        if unloaded:
            run.flag(UNTRAINED_FLAG)
            say_flag(info.id, UNTRAINED_FLAG, f" (no model.checkpoint: {config.where(('model',))}; "
                     "declare model.trained: false for an untrained model on purpose)")
        run.details.update(details)
        attach_front_end(run, test)  # the encoder's cost, beside the model's (issue 47.4)
        spec = settings.model
        options = spec.options if plan.model_options is None else plan.model_options.model_dump()
        identity = (plan.given.identity if plan.given is not None else
                    identity_for(model, model_identity(  # with the notes of how it was read
                        spec.name or details.get("model") or "checkpoint", options,
                        details.get("checkpoint"), spec.label)))
        run.details["decoding"] = decoder.details()  # and the rate: one step per bin if over time
        run.details["model_execution_rate"] = per_step_rate(test, decoder.rule, settings.benchmark)
        if decoder.flag():
            run.flag(decoder.flag())
            say_flag(info.id, decoder.flag())
        run.provenance.update(provenance)
        run.details["input_shape"] = list(getattr(test, "input_shape", ()) or test[0][0].shape)
        dropped = getattr(loader, "dropped", 0)  # spikes after t_max_us (dataset option late: drop)
        if dropped:
            run.details["dropped_late_spikes"] = int(dropped)
            print(f"{info.id}: {dropped} spike(s) after t_max_us dropped (dataset option late: drop)",
                  file=sys.stderr)
        if getattr(test, "path", None) is not None:
            run.details["test_file"] = str(test.path)
        if getattr(test, "on_invalid", "error") == "drop":  # records dropped per file and rule
            run.details["invalid_records_dropped"] = test.invalid_records
        if callable(getattr(test, "data_report", None)):  # what a reader dropped, per rule
            run.details["data_report"] = test.data_report()
        if meta.get("loss"):
            from neuromark.plotting import plot_training

            plot = plot_training(meta, ctx.artefact(f"{info.id}_training.png"), info.id)
            run.artefacts.append(f"{out_dir_of(ctx).name}/{plot.name}")
        return [task_results(run.scores, benchmark=info, model=identity, effective=_effective(plan),
                             device=ctx.device_record(plan.device, settings.device),
                             seeds={"train": recipe.seed} if recipe else {}, details=run.details,
                             provenance=run.provenance, flags=run.flags, artefacts=run.artefacts)]

    @staticmethod
    def _given(plan: TaskPlan) -> tuple[Any, dict[str, Any]]:
        """(model, details) of a model given in Python in place of the config's."""
        return plan.given.model, {"model": plan.given.identity.name, "checkpoint": None,
                                  "model_given_in_python": True}

    def with_model(self, plan: TaskPlan, given: Any) -> TaskPlan:
        """A copy of ``plan`` that runs ``given`` (a
        :class:`~neuromark.runner.GivenModel`) instead of the config's model: the same
        benchmark identity, data, metrics and decoding rule (the config's
        ``eval.postprocessor``, else by output shape: a family's trained readout belongs to
        the family's model, not to yours)."""
        return TaskPlan(plan.config, plan.settings, {**plan.parts, "given": given})

    @staticmethod
    def _decoder(plan: TaskPlan) -> Decoder:
        """``eval.postprocessor``, else the family's trained readout, else by output shape."""
        rule = plan.settings.eval.postprocessor
        if plan.given is not None and plan.given.postprocessor is not None:
            rule = plan.given.postprocessor
        if rule is None and plan.given is None and getattr(plan.train, "readout", None) is not None:
            rule = default_rule(None, plan.train.readout)
        return Decoder(rule) if rule is not None else AutoDecoder()

    def _speaker_metrics(self, plan: TaskPlan, config: ConfigFile, test: Any) -> list[Any]:
        """[SpeakerAccuracy] when the test file has speaker ids (seen speakers: those of the
        train split, when the data set has one), else []."""
        speakers = getattr(getattr(test, "header", None), "speakers", None)
        if speakers is None:
            return []
        from neuromark.metrics.speakers import SpeakerAccuracy

        try:
            seen = self._train_split(plan).header.speakers
        except (ConfigError, DataError, AttributeError):
            seen = None  # no train split: per-speaker accuracy only
        return [SpeakerAccuracy(speakers, seen)]

    def train(self, plan: TaskPlan, ctx: RunContext, *, checkpoint: Path | None = None,
              retrain: bool = True) -> Any:
        """Train the model family's checkpoint (``retrain``: even when one of the same recipe
        is cached; ``checkpoint``: another file than ``model.checkpoint``); returns its
        :class:`~neuromark.training.checkpoints.Prepared` (``neuromark train``)."""
        if plan.family is None:
            spec = plan.settings.model
            raise ConfigError(f"{plan.config.where(('model',))}: model {spec.name or spec.checkpoint!r} "
                              "has no training recipe; `neuromark train` trains model families "
                              "of classification")
        return self.prepare(plan, ctx, checkpoint=checkpoint, retrain=retrain)

    def export_model(self, plan: TaskPlan, ctx: RunContext) -> Any:
        """The model ``neuromark run`` evaluates, for ``neuromark export``: a model family's
        checkpoint (trained first when missing, as a run would), else the model the config
        builds (a registered or ``python`` model, its checkpoint loaded); a
        :class:`~neuromark.training.checkpoints.Prepared` (``path`` None without a checkpoint)."""
        if plan.family is not None:
            return self.prepare(plan, ctx)
        model, details = self._model(plan, ctx, plan.test)
        path = details.get("checkpoint")
        return Prepared(Path(path) if path else None, False, model, details.get("_meta") or {})

    def prepare(self, plan: TaskPlan, ctx: RunContext, *, test: Any = None,
                checkpoint: Path | None = None, retrain: bool = False) -> Any:
        """Train a model family's checkpoint unless one of the same recipe is cached
        (:mod:`neuromark.training.checkpoints`); returns its
        :class:`~neuromark.training.checkpoints.Prepared`."""
        from neuromark.networks.spike_classifiers import prepare_checkpoint

        settings, spec = plan.settings, plan.settings.model
        data = {"train": self._train_split(plan), "test": plan.test if test is None else test}
        recipe = {"dataset": {"name": settings.dataset.name, "options": settings.dataset.options},
                  "model": {"name": spec.name, "options": plan.model_options.model_dump()},
                  "train": plan.train.recipe(),
                  **recipe_device(training_device(plan.family, plan.device))}
        target = checkpoint or plan.checkpoint
        return prepare_checkpoint(plan.family, plan.model_options, plan.train, data, recipe, target,
                                  train_if_missing=settings.train_if_missing, retrain=retrain,
                                  quiet=ctx.quiet, label=settings.benchmark.id, device=plan.device)

    def verify(self, plan: TaskPlan, ctx: RunContext) -> None:
        """What ``neuromark validate`` loads beyond the plan: the model the run will build,
        with its checkpoint loaded strictly (keys and shapes; the same message as the run's,
        naming the config's file and line). A recipe's checkpoint is checked by the run
        itself (it is retrained when its recipe differs)."""
        if plan.family is not None or plan.checkpoint is None or not plan.checkpoint.is_file():
            return
        if plan.settings.model.name is None:
            from neuromark.networks.spike_classifiers import load_checkpoint

            try:
                load_checkpoint(plan.checkpoint)
            except DataError as exc:
                raise DataError(f"{plan.config.where(('model', 'checkpoint'))}: "
                                f"model.checkpoint: {exc}") from None
            return
        build_configured(plan.settings.model.name, plan.settings.model.options, plan.checkpoint,
                         plan.config)

    def _model(self, plan: TaskPlan, ctx: RunContext, test: Any) -> tuple[Any, dict[str, Any]]:
        """(model or adapter, result details) as the config asks."""
        config, spec = plan.config, plan.settings.model
        if plan.family is not None:
            prepared = self.prepare(plan, ctx, test=test)
            return prepared.model, _checkpoint_details(prepared.path, prepared.trained, spec.name,
                                                       prepared.meta)
        checkpoint = plan.checkpoint  # resolved once, by check()
        if spec.name is None:
            from neuromark.networks.spike_classifiers import load_checkpoint

            assert checkpoint is not None
            model, meta = load_checkpoint(checkpoint)
            return model, _checkpoint_details(checkpoint, False, meta.get("kind"), meta)

        # path options as the model read them, a python model's file: the results' provenance
        model, provenance = build_configured(spec.name, spec.options, checkpoint, config)
        return model, {"model": spec.name, "checkpoint": str(checkpoint) if checkpoint else None,
                       "_provenance": provenance}


def _declared_trained(plan: TaskPlan) -> bool | None:
    """True for a recipe's model, else ``model.trained`` (None: not declared; the runner
    then tests the weights, a checkpoint's included, as it does for a model given in
    Python, and a factory's model with no checkpoint is flagged in any case)."""
    return True if plan.family is not None else plan.settings.model.trained


def _effective(plan: TaskPlan) -> dict[str, Any]:
    """The settings the run used: defaults filled in, data set paths resolved (a model given
    in Python replaces the config's model block, and no training ran)."""
    effective = plan.settings.model_dump(mode="json")
    effective["dataset"]["options"] = dict(plan.dataset_options)
    if plan.given is not None:
        effective["model"] = {"name": plan.given.identity.name, "given_in_python": True,
                              "label": plan.given.identity.label, "trained": plan.given.trained}
        effective["train"] = None
        effective["eval"]["postprocessor"] = plan.given.postprocessor or \
            plan.settings.eval.postprocessor
    return effective


def _num_classes(test: Any) -> int | None:
    """The test split's number of classes (its ``num_classes``), or None where it names none."""
    value = getattr(test, "num_classes", None)
    value = value() if callable(value) else value
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def _test_loader(test: Any, batch_size: int, pin: bool) -> Any:
    """The test split's own loader; with ``pin``, asked for pinned batches when it takes a
    ``pin_memory`` option (spike files do)."""
    if pin and "pin_memory" in inspect.signature(test.loader).parameters:
        return test.loader(batch_size, pin_memory=True)
    return test.loader(batch_size)


def _checkpoint_details(path: Path, trained: bool, model: str | None, meta: dict[str, Any]
                        ) -> dict[str, Any]:
    return {
        "checkpoint": str(path), "trained_now": trained, "model": model,
        "train_seconds": meta.get("train_seconds"), "train_samples": meta.get("train_samples"),
        "epochs": meta.get("epochs"), "final_train_loss": (meta.get("loss") or [None])[-1],
        "final_train_accuracy": (meta.get("train_accuracy") or [None])[-1],
        "chance_accuracy": 1.0 / max(1, int(meta.get("classes", 1))), "_meta": meta}


TASK = ClassificationTask()
