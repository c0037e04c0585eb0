"""The spike-classifier model family (Cramer et al. 2020) and its training recipe.

Registered models ``snn`` (feed-forward LIF), ``rsnn`` (recurrent LIF), ``lstm`` and ``svm``
(linear SVM on spike counts) are :class:`SpikeClassifierFamily` entries: each validates its
``options``, builds an untrained model for a data set's input width and classes, and trains
it with the recipe of :mod:`neuromark.networks.spike_training` on a binned spike-file training
split (a spike-data family's data set). Checkpoints, their recipe hash (data set,
model, training settings, training file bytes) and the replacement rule are those of
:mod:`neuromark.training.checkpoints`, shared by every trainable family.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from neuromark._threads import torch_threads
from neuromark.config import StrictModel
from neuromark.errors import DataError
from neuromark.training.checkpoints import Prepared as PreparedCheckpoint
from neuromark.training.checkpoints import prepare, read_checkpoint
from neuromark.training.recipe import Epochs, LearningRate, Threads, TrainRecipe

CITATION = """@article{cramer2020heidelberg,
  title={The Heidelberg Spiking Data Sets for the Systematic Evaluation of Spiking Neural Networks},
  author={Cramer, Benjamin and Stradmann, Yannik and Schemmel, Johannes and Zenke, Friedemann},
  journal={IEEE Transactions on Neural Networks and Learning Systems},
  volume={33}, number={7}, pages={2744--2757}, year={2022}, doi={10.1109/TNNLS.2020.3044364}}"""


class SpikeModelOptions(StrictModel):
    """``model.options`` of the family (times in ms; ``svm_c`` for the SVM only)."""

    hidden: int = Field(128, gt=0)
    tau_syn_ms: float = Field(10.0, gt=0)
    tau_mem_ms: float = Field(20.0, gt=0)
    threshold: float = Field(1.0, gt=0)
    beta: float = Field(100.0, gt=0)
    init_gain: float = Field(1.0, gt=0)
    recurrent_gain: float = Field(0.5, ge=0)
    learn_tau: bool = Field(False, description="train per-neuron time constants (SNNs)")
    dropout: float = Field(0.0, ge=0, lt=1, description="dropout of hidden spikes in training (SNNs)")
    input_log: bool = Field(False, description="feed log(1 + counts) to the SNN (SNNs)")
    input_bias: bool = Field(False, description="a bias on the SNN's input layer (SNNs)")
    svm_c: float = Field(1.0, gt=0)


class RegulariserSettings(StrictModel):
    """Spike-count regularisers (Cramer et al. 2020, eqs. 10-11); thresholds in spikes/sample."""

    lower_strength: float = Field(1.0, ge=0)
    lower_threshold: float = Field(1.0, ge=0)
    upper_strength: float = Field(0.06, ge=0)
    upper_threshold: float = Field(10.0, ge=0)


class TrainSettings(TrainRecipe):
    """The ``train:`` section of a classification config."""

    epochs: Epochs = 30
    lr: LearningRate = 2e-3
    threads: Threads = Field(1, description="torch threads; small step-wise models run fastest on one")
    optimizer: Literal["adamax", "adam"] = "adamax"
    jitter_sigma: float = Field(0.0, ge=0, description="channel jitter (channels, before pooling)")
    time_stretch: float = Field(0.0, ge=0, lt=1, description="time stretch: factor in [1-s, 1+s]")
    readout: Literal["max", "mean"] = Field("max", description="loss on the max or mean over time")
    schedule: Literal["constant", "cosine"] = "constant"
    weight_decay: float = Field(0.0, ge=0)
    regularisers: RegulariserSettings = RegulariserSettings()
    deterministic: bool = Field(False, description="torch.use_deterministic_algorithms while "
                                "training (GPU training is not bit-reproducible without it)")

    def recipe(self) -> dict[str, Any]:
        """The settings as they enter the recipe hash: ``deterministic`` only when true, so
        that checkpoints cached before it existed keep their hash."""
        return self.model_dump(exclude=set() if self.deterministic else {"deterministic"})


@dataclass(frozen=True)
class SpikeClassifierFamily:
    """One registered model kind of the family: options schema, builder and training recipe."""

    kind: Literal["snn", "rsnn", "lstm", "svm"]
    options_model: type[SpikeModelOptions] = SpikeModelOptions
    train_model: type[TrainSettings] = TrainSettings
    citation: str = CITATION
    tasks: tuple[str, ...] = ("classification",)

    @property
    def name(self) -> str:
        """The registry name (its checkpoints' ``kind`` is ``snn`` for both LIF networks)."""
        return self.kind

    def load(self, path: Path) -> tuple[Any, dict[str, Any]]:
        """(model in eval mode, meta with ``kind``) from a checkpoint (:func:`load_checkpoint`)."""
        return load_checkpoint(path)

    @property
    def spiking(self) -> bool:
        """True for the LIF networks (they have neuron layers, so activation sparsity and
        membrane updates apply)."""
        return self.kind in ("snn", "rsnn")

    def build(self, options: SpikeModelOptions, inputs: int, classes: int, dt_ms: float) -> Any:
        """An untrained torch model (not for the SVM, which is fitted, see :meth:`fit`)."""
        if self.kind in ("snn", "rsnn"):
            return build_model("snn", {
                "inputs": inputs, "classes": classes, "hidden": options.hidden,
                "recurrent": self.kind == "rsnn", "dt_ms": dt_ms, "tau_syn_ms": options.tau_syn_ms,
                "tau_mem_ms": options.tau_mem_ms, "threshold": options.threshold, "beta": options.beta,
                "init_gain": options.init_gain, "recurrent_gain": options.recurrent_gain,
                "learn_tau": options.learn_tau, "dropout": options.dropout,
                "input_log": options.input_log, "input_bias": options.input_bias})
        if self.kind == "lstm":
            return build_model("lstm", {"inputs": inputs, "classes": classes, "hidden": options.hidden})
        raise ValueError(f"{self.kind} is not a torch-trained model")

    def trains_on(self, device: Any) -> Any:
        """The device this kind trains on: ``device`` for the torch models, the CPU for the
        SVM (fitted by numpy)."""
        return "cpu" if self.kind == "svm" else device

    def fit(self, options: SpikeModelOptions, train: TrainSettings, data: Any, classes: int, *,
            quiet: bool = True, label: str = "", device: Any = "cpu") -> tuple[Any, dict[str, Any]]:
        """Train on ``data`` (a binned spike-file training split, or a
        :class:`~neuromark.networks.spike_training.SampleSplit`) on ``device`` (torch models;
        the SVM fits on the CPU); returns (model in eval mode, on the CPU, and training info)."""
        start = time.perf_counter()
        rng = np.random.default_rng(train.seed)
        with torch_threads(train.threads):
            if self.kind == "svm":
                from neuromark.networks.reference_classifiers import fit_linear_svm_counts
                from neuromark.networks.spike_training import spike_counts

                model = fit_linear_svm_counts(spike_counts(data), data.targets, classes,
                                              c=options.svm_c, seed=train.seed)
                info: dict[str, Any] = {"epochs": 0, "loss": []}
            else:
                from neuromark.networks.spike_training import fit_torch_model

                dt_ms = data.dt_us / 1000

                def new_model() -> Any:
                    return self.build(options, data.input_shape[1], classes, dt_ms)

                model, info = fit_torch_model(new_model, train, data, rng, quiet=quiet, label=label,
                                              device=device)
        info["train_seconds"] = time.perf_counter() - start
        info["train_samples"] = len(data)
        return model, info


def build_model(kind: str, config: dict[str, Any]) -> Any:
    """A fresh model of a checkpoint ``kind`` ("snn", "lstm", "svm") from its config dict."""
    if kind == "snn":
        from neuromark.networks.lif import SNNConfig, SpikingClassifier

        return SpikingClassifier(SNNConfig(**config))
    if kind == "lstm":
        from neuromark.networks.reference_classifiers import LSTMClassifier, LSTMConfig

        return LSTMClassifier(LSTMConfig(**config))
    if kind == "svm":
        from neuromark.networks.reference_classifiers import SpikeCountLinear

        return SpikeCountLinear(**config)
    raise ValueError(f"unknown model kind {kind!r} (snn, lstm, svm)")


#: Model kinds a checkpoint may hold (:func:`build_model`).
CHECKPOINT_KINDS = ("snn", "lstm", "svm")


def load_checkpoint(path: Path) -> tuple[Any, dict[str, Any]]:
    """(model in eval mode, meta with the model ``kind``) from a checkpoint, loaded with
    ``weights_only=True``; every failure is a :class:`DataError` giving its real reason."""
    payload = read_checkpoint(path, CHECKPOINT_KINDS, what="classification")
    try:
        model = build_model(payload["kind"], payload["config"])
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path}: malformed checkpoint: its {payload['kind']} config does not "
                        f"build a model: {exc}") from None
    try:
        model.load_state_dict(payload["state_dict"])
    except (RuntimeError, TypeError, KeyError, AttributeError) as exc:
        raise DataError(f"{path}: weights do not fit the model: {exc}") from exc
    model.eval()
    return model, {**payload.get("meta", {}), "kind": payload["kind"]}


def check_labels(train: Any, test: Any) -> int:
    """The number of classes, from the training data (its class names, else its largest
    label + 1); raises :class:`DataError` naming the file and sample for an empty split or
    a test label outside the training classes (called before any training)."""
    if len(train) == 0:
        raise DataError(f"{getattr(train, 'path', train)}: no samples; a training split needs "
                        "at least one")
    classes = int(train.num_classes)
    check_test_labels(test, classes, str(train.path))
    return classes


def check_test_labels(test: Any, classes: int | None, source: str = "") -> None:
    """Raise :class:`DataError` naming the file and sample when ``test`` is empty or one of
    its labels is outside ``0..classes-1`` (the classes of ``source``: the training file or
    a cached checkpoint); ``classes=None`` checks only that the split has samples."""
    if len(test) == 0:
        raise DataError(f"{getattr(test, 'path', test)}: no samples; a test split needs at "
                        "least one")
    if classes is None:
        return
    labels = np.asarray(test.targets)  # the header only: evaluation never reads the split whole
    bad = np.flatnonzero((labels < 0) | (labels >= classes))
    if bad.size:
        i = int(bad[0])
        raise DataError(f"{test.path}: sample {i}: label {int(labels[i])} is outside the "
                        f"training classes 0..{classes - 1} (from {source}); "
                        f"{bad.size} test sample(s) out of range")


def prepare_checkpoint(family: Any, options: SpikeModelOptions, train: TrainSettings,
                       data: dict[str, Any], recipe: dict[str, Any], target: Path, *,
                       train_if_missing: bool = True, retrain: bool = False, quiet: bool = True,
                       label: str = "", device: Any = "cpu") -> PreparedCheckpoint:
    """A classification family's checkpoint through the shared cache
    (:func:`neuromark.training.checkpoints.prepare`): the test split is checked first, the training
    labels before any training, a cached checkpoint's classes against the test labels.

    Args:
        data: ``{"train": split, "test": split}`` (the train split, or the file its
            ``recipe_file`` names, e.g. GSC's decoded clips' sidecar, enters the hash).
        recipe: the JSON-able settings that define the trained weights; on a device other
            than the CPU it names the device (:func:`~neuromark.devices.recipe_device`).
        device: where training runs; a family without ``trains_on`` trains on the CPU.
    """
    check_test_labels(data["test"], None)

    def fit() -> tuple[Any, dict[str, Any]]:
        classes = check_labels(data["train"], data["test"])  # before any training
        model, info = family.fit(options, train, data["train"], classes, quiet=quiet, label=label,
                                 **({"device": device} if hasattr(family, "trains_on") else {}))
        return model, {"classes": classes, "keys": list(data["train"].classes),
                       "train_file": str(data["train"].path), **info}

    def accept(meta: dict[str, Any]) -> None:
        check_test_labels(data["test"], int(meta.get("classes", 0)) or None, str(target))

    hashed = getattr(data["train"], "recipe_file", None) or data["train"].path
    return prepare(family, target, recipe, hashed, fit, train_if_missing=train_if_missing,
                   retrain=retrain, device=device, accept=accept)


#: The registered kinds (``neuromark.registry.models``).
SNN = SpikeClassifierFamily("snn")
RSNN = SpikeClassifierFamily("rsnn")
LSTM = SpikeClassifierFamily("lstm")
SVM = SpikeClassifierFamily("svm")
