"""The spike-classifier model family (Cramer et al. 2020) and its training recipe.

Registered models ``snn`` (feed-forward LIF), ``rsnn`` (recurrent LIF), ``lstm`` and ``svm``
(linear SVM on spike counts) are :class:`SpikeClassifierFamily` entries: each validates its
``options``, builds an untrained model for a data set's input width and classes, and trains
it with the recipe of :mod:`neuromark.baselines.shd_train` on a spike-file training split
(:class:`~neuromark.data.binned.BinnedSpikes`). Checkpoints are plain dicts of tensors and
numbers (``kind``, ``config``, ``state_dict``, ``meta``), loaded with
``torch.load(weights_only=True)``; a checkpoint is reused while its recipe hash (data set,
model, training settings, training file bytes) matches. Replacement rule (printed when it
applies): a file is replaced only when it carries neuromark's header (``format``), by
``neuromark train`` or by a run with ``train_if_missing: true`` whose recipe differs; a file
neuromark did not write is never replaced.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from neuromark._threads import torch_threads
from neuromark.config import StrictModel
from neuromark.data.download import update_digest
from neuromark.devices import checkpoint_device_meta
from neuromark.errors import DataError
from neuromark.models.checkpoint import read_weights
from neuromark.results import atomic_path

#: Version of the checkpoint dict layout.
CHECKPOINT_FORMAT = 1

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


class TrainSettings(StrictModel):
    """The ``train:`` section of a classification config."""

    epochs: int = Field(30, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(2e-3, gt=0)
    optimizer: Literal["adamax", "adam"] = "adamax"
    seed: int = 0
    threads: int = Field(1, ge=1, description="torch threads; small step-wise models run fastest on one")
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
    citation: str = CITATION

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
        """Train on ``data`` (a :class:`~neuromark.data.binned.BinnedSpikes` training split)
        on ``device`` (torch models; the SVM fits on the CPU); returns (model in eval mode,
        on the CPU, and training info)."""
        start = time.perf_counter()
        rng = np.random.default_rng(train.seed)
        with torch_threads(train.threads):
            if self.kind == "svm":
                from neuromark.baselines.shd_reference import fit_linear_svm_counts
                from neuromark.baselines.shd_train import spike_counts

                model = fit_linear_svm_counts(spike_counts(data), data.targets, classes,
                                              c=options.svm_c, seed=train.seed)
                info: dict[str, Any] = {"epochs": 0, "loss": []}
            else:
                from neuromark.baselines.shd_train import fit_torch_model

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
        from neuromark.baselines.shd_snn import SNNConfig, SpikingClassifier

        return SpikingClassifier(SNNConfig(**config))
    if kind == "lstm":
        from neuromark.baselines.shd_reference import LSTMClassifier, LSTMConfig

        return LSTMClassifier(LSTMConfig(**config))
    if kind == "svm":
        from neuromark.baselines.shd_reference import SpikeCountLinear

        return SpikeCountLinear(**config)
    raise ValueError(f"unknown model kind {kind!r} (snn, lstm, svm)")


def save_checkpoint(path: Path, model: Any, meta: dict[str, Any]) -> Path:
    """Write ``model.checkpoint()`` plus ``meta`` atomically with ``torch.save``
    (permissions 0666 less the umask, like any other file written)."""
    import torch

    payload = {**model.checkpoint(), "format": CHECKPOINT_FORMAT, "meta": meta}
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)
    return path


#: Keys of a checkpoint dict (``meta`` optional).
CHECKPOINT_KEYS = ("format", "kind", "config", "state_dict", "meta")
#: Model kinds a checkpoint may hold (:func:`build_model`).
CHECKPOINT_KINDS = ("snn", "lstm", "svm")


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The raw checkpoint dict at ``path`` (``weights_only`` loading), or
    :class:`DataError` with the real reason: missing, not loadable, not a neuromark
    checkpoint (no ``format`` header), or a malformed dict (kind, keys, config)."""
    try:
        payload = read_weights(path, missing_hint="; run `neuromark train CONFIG` first")
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001 - torch raises many types for foreign bytes
        raise DataError(f"{path}: not a loadable checkpoint: {type(exc).__name__}: {exc}") from None
    if not is_neuromark_checkpoint(payload):
        got = sorted(map(str, payload))[:6] if isinstance(payload, dict) else type(payload).__name__
        raise DataError(f"{path}: not a neuromark classification checkpoint (no 'format': "
                        f"{CHECKPOINT_FORMAT} header; got {got})")
    unknown = sorted(str(k) for k in payload if k not in CHECKPOINT_KEYS)
    missing = [k for k in CHECKPOINT_KEYS[:4] if k not in payload]
    if unknown or missing:
        raise DataError(f"{path}: malformed checkpoint: "
                        + "; ".join(([f"missing key(s) {missing}"] if missing else [])
                                    + ([f"unknown key(s) {unknown}"] if unknown else [])))
    if payload["kind"] not in CHECKPOINT_KINDS:
        raise DataError(f"{path}: malformed checkpoint: unknown kind {payload['kind']!r} "
                        f"(one of {', '.join(CHECKPOINT_KINDS)})")
    for key, kind in (("config", dict), ("state_dict", dict), ("meta", dict)):
        if key in payload and not isinstance(payload[key], kind):
            raise DataError(f"{path}: malformed checkpoint: '{key}' must be a mapping, got "
                            f"{type(payload[key]).__name__}")
    return payload


def is_neuromark_checkpoint(payload: Any) -> bool:
    """True when a loaded payload carries neuromark's checkpoint header (``format``)."""
    return isinstance(payload, dict) and payload.get("format") == CHECKPOINT_FORMAT


def load_checkpoint(path: Path) -> tuple[Any, dict[str, Any]]:
    """(model in eval mode, meta with the model ``kind``) from a checkpoint, loaded with
    ``weights_only=True``; every failure is a :class:`DataError` giving its real reason."""
    payload = read_checkpoint(path)
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


def checkpoint_owner(path: Path) -> str | None:
    """None when the file at ``path`` is a neuromark checkpoint (its header is ours), else
    the reason it is not: neuromark never overwrites such a file."""
    try:
        payload = read_weights(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is foreign
        return str(exc)
    if is_neuromark_checkpoint(payload):
        return None
    return f"no 'format': {CHECKPOINT_FORMAT} header ({type(payload).__name__})"


def _recipe_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(set(old) | set(new), key=str):
            where = f"{prefix}.{k}" if prefix else str(k)
            out += [where] if k not in old or k not in new else _recipe_keys(old[k], new[k], where)
        return out
    return [] if old == new else [prefix or "recipe"]


def recipe_hash(recipe: dict[str, Any], train_file: Path) -> str:
    """sha256 of the recipe (data set, model and training settings, as JSON) and of the
    training file's bytes (of a folder, e.g. DVS Gesture's: each file's relative name and
    bytes, in sorted order)."""
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode())
    folder = Path(train_file)
    if not folder.is_dir():
        return str(update_digest(digest, train_file).hexdigest())
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0")
        update_digest(digest, file)
    return str(digest.hexdigest())


def training_device(family: Any, device: Any) -> Any:
    """Where ``family`` trains when asked for ``device``: its ``trains_on(device)`` (e.g. the
    SVM: the CPU), or the CPU for a family that has no such method (it knows no devices)."""
    return family.trains_on(device) if hasattr(family, "trains_on") else "cpu"


@dataclass
class PreparedCheckpoint:
    """A checkpoint ready for evaluation (see :func:`prepare_checkpoint`).

    Attributes:
        path: the checkpoint file.
        trained: True when it was (re)trained now, False when the cached one was reused.
        model: the checkpoint's model in eval mode, as saved (:func:`load_checkpoint`).
        meta: the checkpoint's meta (recipe hash, classes, training curves and time).
    """

    path: Path
    trained: bool
    model: Any
    meta: dict[str, Any]


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


def prepare_checkpoint(family: SpikeClassifierFamily, options: SpikeModelOptions, train: TrainSettings,
                       data: dict[str, Any], recipe: dict[str, Any], target: Path, *,
                       train_if_missing: bool = True, retrain: bool = False, quiet: bool = True,
                       label: str = "", device: Any = "cpu") -> PreparedCheckpoint:
    """Train and save unless a checkpoint of the same recipe exists at ``target``; then the
    loaded checkpoint (a new one is loaded back after saving, so that evaluation always sees
    the weights exactly as saved).

    Args:
        data: ``{"train": BinnedSpikes, "test": BinnedSpikes}``.
        recipe: the JSON-able settings that define the trained weights (hashed with the
            training file's bytes); on a device other than the CPU it names the device
            (:func:`~neuromark.devices.recipe_device`), so a GPU-trained checkpoint never
            serves a CPU run as its own.
        device: where training runs (the checkpoint records it and the torch version); a
            family without ``trains_on`` knows no devices and trains where it trains.
    """
    check_test_labels(data["test"], None)
    load = getattr(family, "load", load_checkpoint)  # a family may own its checkpoint kind
    # a split may name the file that defines its samples (GSC: the decoded clips' sidecar)
    digest = recipe_hash(recipe, getattr(data["train"], "recipe_file", None) or data["train"].path)
    if target.exists() and not target.is_file():
        raise DataError(f"{target}: checkpoint path is not a file (a folder?)")
    if target.is_file():
        foreign = checkpoint_owner(target)
        if foreign is not None:
            raise DataError(f"{target}: not a neuromark checkpoint ({foreign}); neuromark never "
                            "overwrites a file it did not write: move it away or set "
                            "model.checkpoint to another path")
        try:
            model, meta = load(target)
            problem = ""
        except DataError as exc:
            model, meta, problem = None, {}, str(exc)
        if not retrain and not problem and meta.get("recipe_hash") == digest:
            check_test_labels(data["test"], int(meta.get("classes", 0)) or None, str(target))
            return PreparedCheckpoint(target, False, model, meta)
        keys = _recipe_keys(meta.get("recipe"), recipe) if meta.get("recipe") else []
        why = ("`neuromark train` retrains it" if retrain else
               f"it does not load ({problem})" if problem else
               "its recipe differs" + (f" ({', '.join(keys)})" if keys else
                                       " (the training file or recipe changed)"))
        if not retrain and not train_if_missing:
            raise DataError(f"{target}: " + (f"checkpoint does not load: {problem}" if problem else
                                             "checkpoint was made from a different recipe or "
                                             "data" + (f" ({', '.join(keys)})" if keys else ""))
                            + "; run `neuromark train CONFIG`")
        print(f"replacing neuromark checkpoint {target}: {why} (rule: a neuromark checkpoint "
              "is replaced by `neuromark train`, or by a run with train_if_missing: true when "
              "its recipe differs; files neuromark did not write are never replaced)",
              file=sys.stderr)
    elif not train_if_missing and not retrain:
        raise DataError(f"{target}: no such checkpoint and train_if_missing is false; "
                        "run `neuromark train CONFIG`")
    classes = check_labels(data["train"], data["test"])  # before any training
    model, info = family.fit(options, train, data["train"], classes, quiet=quiet, label=label,
                             **({"device": device} if hasattr(family, "trains_on") else {}))
    meta = {"recipe_hash": digest, "recipe": recipe, "classes": classes,
            "keys": list(data["train"].classes),
            "train_file": str(data["train"].path), **info,
            **checkpoint_device_meta(training_device(family, device))}
    save_checkpoint(target, model, meta)
    model, meta = load(target)
    return PreparedCheckpoint(target, True, model, meta)


#: The registered kinds (``neuromark.registry.models``).
SNN = SpikeClassifierFamily("snn")
RSNN = SpikeClassifierFamily("rsnn")
LSTM = SpikeClassifierFamily("lstm")
SVM = SpikeClassifierFamily("svm")
