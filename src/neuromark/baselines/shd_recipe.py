"""Training recipe for spike-data classifiers (SHD, SSC, the spoken-digit corpus).

One YAML config serves ``neuromark train CONFIG`` (writes the checkpoint) and
``neuromark run CONFIG`` (evaluates it with the harness; trains first when the cached
checkpoint is missing or was made from a different recipe). Example::

    task: classification
    benchmark: {id: spoken-digits-rsnn, version: "1.0"}
    data: {corpus: spoken_digits, dt_ms: 10, t_max_ms: 1000, pool: 10}
    model: {kind: rsnn, hidden: 128}
    train: {epochs: 30, batch_size: 32, lr: 0.002, seed: 0}
    checkpoint: results/checkpoints/spoken_digits_rsnn.pt

Models: ``snn`` (feed-forward LIF), ``rsnn`` (recurrent LIF), ``lstm``, ``svm`` (linear SVM
on spike counts). Checkpoints are plain dicts of tensors and numbers, loaded with
``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from neuromark._threads import torch_threads
from neuromark.config import ConfigFile, StrictModel, resolve_path, validate
from neuromark.data.download import update_digest
from neuromark.data.hdf5_spikes import SpikeSamples, read_shd_file
from neuromark.errors import ConfigError, DataError
from neuromark.results import atomic_path

#: Version of the checkpoint dict layout.
CHECKPOINT_FORMAT = 1


class BenchmarkSettings(StrictModel):
    id: str
    version: str = "1.0"
    parent: str | None = None
    citation: str = ""


class DataSettings(StrictModel):
    """Where the spike files are and how they are binned."""

    corpus: Literal["spoken_digits"] | None = None
    train: str | None = None
    test: str | None = None
    channels: int = Field(700, gt=0)
    dt_ms: float = Field(10.0, gt=0)
    t_max_ms: float = Field(1000.0, gt=0)
    pool: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _one_source(self) -> DataSettings:
        if (self.corpus is None) == (self.train is None or self.test is None):
            raise ValueError("give either corpus: spoken_digits, or both train: and test: paths")
        if self.channels % self.pool:
            raise ValueError(f"channels={self.channels} is not divisible by pool={self.pool}")
        if self.dt_ms > self.t_max_ms:
            raise ValueError(f"dt_ms={self.dt_ms} is larger than t_max_ms={self.t_max_ms}")
        return self

    @property
    def dt_us(self) -> int:
        return round(self.dt_ms * 1000)

    @property
    def t_max_us(self) -> int:
        return round(self.t_max_ms * 1000)


class ModelSettings(StrictModel):
    kind: Literal["snn", "rsnn", "lstm", "svm"]
    hidden: int = Field(128, gt=0)
    tau_syn_ms: float = Field(10.0, gt=0)
    tau_mem_ms: float = Field(20.0, gt=0)
    threshold: float = Field(1.0, gt=0)
    beta: float = Field(100.0, gt=0)
    init_gain: float = Field(1.0, gt=0)
    recurrent_gain: float = Field(0.5, ge=0)
    svm_c: float = Field(1.0, gt=0)


class RegulariserSettings(StrictModel):
    """Spike-count regularisers (Cramer et al. 2020, eqs. 10-11); thresholds in spikes/sample."""

    lower_strength: float = Field(1.0, ge=0)
    lower_threshold: float = Field(1.0, ge=0)
    upper_strength: float = Field(0.06, ge=0)
    upper_threshold: float = Field(10.0, ge=0)


class TrainSettings(StrictModel):
    epochs: int = Field(30, ge=1)
    batch_size: int = Field(32, ge=1)
    lr: float = Field(2e-3, gt=0)
    optimizer: Literal["adamax", "adam"] = "adamax"
    seed: int = 0
    threads: int = Field(1, ge=1, description="torch threads; small step-wise models run fastest on one")
    jitter_sigma: float = Field(0.0, ge=0, description="channel jitter (channels, before pooling)")
    regularisers: RegulariserSettings = RegulariserSettings()


#: Default metrics: SNNs get all five; the LSTM and the SVM have no neuron modules, so
#: activation sparsity and membrane updates do not apply to them.
DEFAULT_METRICS = {
    "spiking": ["classification_accuracy", "footprint", "activation_sparsity", "synaptic_operations",
                "membrane_updates"],
    "other": ["classification_accuracy", "footprint", "synaptic_operations"],
}


class EvalSettings(StrictModel):
    batch_size: int = Field(128, ge=1)
    metrics: list[str] | None = None  # None: DEFAULT_METRICS for the model kind


class RecipeSettings(StrictModel):
    task: Literal["classification"]
    benchmark: BenchmarkSettings
    data: DataSettings
    model: ModelSettings
    train: TrainSettings = TrainSettings()
    checkpoint: str
    train_if_missing: bool = True
    eval: EvalSettings = EvalSettings()


def eval_metrics(settings: RecipeSettings) -> list[str]:
    """The metric names to evaluate (the configured ones, or the defaults for the model kind)."""
    if settings.eval.metrics is not None:
        return list(settings.eval.metrics)
    return DEFAULT_METRICS["spiking" if settings.model.kind in ("snn", "rsnn") else "other"]


def load_settings(config: ConfigFile) -> RecipeSettings:
    """Validate a classification config (errors name the file, line and key)."""
    return validate(RecipeSettings, config.data, config)


def data_paths(settings: RecipeSettings, config: ConfigFile) -> dict[str, Path]:
    """``{"train": path, "test": path}`` of the spike files."""
    if settings.data.corpus == "spoken_digits":
        from neuromark.data.spoken_digits import shipped_corpus

        return shipped_corpus()
    assert settings.data.train is not None and settings.data.test is not None
    paths = {"train": resolve_path(settings.data.train, config),
             "test": resolve_path(settings.data.test, config)}
    for split, path in paths.items():
        if not path.is_file():
            raise ConfigError(f"{config.where(('data', split))}: data.{split}: no such file {path}")
    return paths


def checkpoint_path(settings: RecipeSettings) -> Path:
    """The checkpoint file: relative paths are relative to the working directory (not the config)."""
    return Path(settings.checkpoint)


def load_split(path: Path, settings: RecipeSettings) -> SpikeSamples:
    return read_shd_file(path, channels=settings.data.channels)


def dense(samples: SpikeSamples, settings: RecipeSettings, rng: np.random.Generator | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """Binned (N, T, channels/pool) float32 frames and (N,) labels; jitter when ``rng`` given."""
    from neuromark.processors.events import BinSpikes, ChannelJitter, PoolChannels

    data = settings.data
    if rng is not None and settings.train.jitter_sigma > 0:
        samples = ChannelJitter(rng, settings.train.jitter_sigma, data.channels).jitter_samples(samples)
    if data.pool > 1:
        samples = PoolChannels(data.pool).pool_samples(samples)
    frames = BinSpikes(data.dt_us, data.t_max_us, samples.channels, np.float32).bin_samples(samples)
    return frames, samples.labels


def num_classes(*splits: SpikeSamples) -> int:
    """Number of classes: the class names in the files, or the largest label + 1."""
    return max(max(len(s.keys), int(s.labels.max(initial=-1)) + 1) for s in splits)


def recipe_hash(settings: RecipeSettings, paths: dict[str, Path]) -> str:
    """sha256 of the recipe (data, model, train sections) and of the training file's bytes."""
    digest = hashlib.sha256()
    recipe = {k: settings.model_dump()[k] for k in ("data", "model", "train")}
    digest.update(json.dumps(recipe, sort_keys=True).encode())
    return str(update_digest(digest, paths["train"]).hexdigest())


def build_model(kind: str, config: dict[str, Any]) -> Any:
    """A fresh model of ``kind`` ("snn", "lstm", "svm") from its config dict."""
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


def load_checkpoint(path: Path) -> tuple[Any, dict[str, Any]]:
    """(model in eval mode, meta) from a checkpoint, loaded with ``weights_only=True``."""
    import pickle

    import torch

    if not path.is_file():
        raise DataError(f"{path}: no such checkpoint; run `neuromark train CONFIG` first")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError) as exc:
        raise DataError(f"{path}: not a loadable checkpoint: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise DataError(f"{path}: not a neuromark classification checkpoint (format "
                        f"{CHECKPOINT_FORMAT} expected)")
    model = build_model(payload["kind"], payload["config"])
    try:
        model.load_state_dict(payload["state_dict"])
    except RuntimeError as exc:
        raise DataError(f"{path}: weights do not fit the model: {exc}") from exc
    model.eval()
    return model, payload.get("meta", {})


def train_model(settings: RecipeSettings, train: SpikeSamples, classes: int, *, quiet: bool = True
                ) -> tuple[Any, dict[str, Any]]:
    """Train the configured model on ``train``; returns (model, training info)."""

    start = time.perf_counter()
    rng = np.random.default_rng(settings.train.seed)
    with torch_threads(settings.train.threads):
        model, info = _train(settings, train, classes, rng, quiet)
    info["train_seconds"] = time.perf_counter() - start
    info["train_samples"] = len(train)
    return model, info


def _train(settings: RecipeSettings, train: SpikeSamples, classes: int, rng: np.random.Generator,
           quiet: bool) -> tuple[Any, dict[str, Any]]:
    kind = settings.model.kind
    if kind == "svm":
        from neuromark.baselines.shd_reference import fit_linear_svm

        frames, labels = dense(train, settings)
        model = fit_linear_svm(frames, labels, classes, c=settings.model.svm_c, seed=settings.train.seed)
        info: dict[str, Any] = {"epochs": 0, "loss": []}
    else:
        from neuromark.baselines.shd_train import fit_torch_model

        model, info = fit_torch_model(settings, train, classes, rng, quiet=quiet)
    return model, info


def new_torch_model(settings: RecipeSettings, inputs: int, classes: int) -> Any:
    """An untrained torch model of the configured kind."""
    m = settings.model
    if m.kind in ("snn", "rsnn"):
        return build_model("snn", {
            "inputs": inputs, "classes": classes, "hidden": m.hidden, "recurrent": m.kind == "rsnn",
            "dt_ms": settings.data.dt_ms, "tau_syn_ms": m.tau_syn_ms, "tau_mem_ms": m.tau_mem_ms,
            "threshold": m.threshold, "beta": m.beta, "init_gain": m.init_gain,
            "recurrent_gain": m.recurrent_gain})
    if m.kind == "lstm":
        return build_model("lstm", {"inputs": inputs, "classes": classes, "hidden": m.hidden})
    raise ValueError(f"{m.kind} is not a torch-trained model")


@dataclass
class PreparedCheckpoint:
    """What evaluating a recipe needs, each obtained once (see :func:`prepare_checkpoint`).

    Attributes:
        path: the checkpoint file.
        trained: True when it was (re)trained now, False when the cached one was reused.
        paths: ``{"train": path, "test": path}`` of the spike files (:func:`data_paths`).
        model: the checkpoint's model in eval mode, as saved (:func:`load_checkpoint`).
        meta: the checkpoint's meta (recipe hash, classes, training curves and time).
    """

    path: Path
    trained: bool
    paths: dict[str, Path]
    model: Any
    meta: dict[str, Any]


def prepare_checkpoint(settings: RecipeSettings, config: ConfigFile, *, retrain: bool = False,
                       quiet: bool = True) -> PreparedCheckpoint:
    """Train and save unless a checkpoint of the same recipe exists; then the loaded checkpoint.

    Finds the data files (hashing the shipped corpus) and loads the checkpoint once each:
    a cached checkpoint is the one loaded to compare its recipe hash; a new one is loaded
    back after saving, so that evaluation always sees the weights exactly as saved.
    """
    paths = data_paths(settings, config)
    target = checkpoint_path(settings)
    digest = recipe_hash(settings, paths)
    if target.is_file() and not retrain:
        try:
            model, meta = load_checkpoint(target)
        except DataError:
            model, meta = None, {}
        if meta.get("recipe_hash") == digest:
            return PreparedCheckpoint(target, False, paths, model, meta)
        if not settings.train_if_missing:
            raise DataError(f"{target}: checkpoint was made from a different recipe or data; "
                            "run `neuromark train CONFIG`")
    elif not target.is_file() and not settings.train_if_missing and not retrain:
        raise DataError(f"{target}: no such checkpoint and train_if_missing is false; "
                        "run `neuromark train CONFIG`")
    train = load_split(paths["train"], settings)
    test = load_split(paths["test"], settings)
    classes = num_classes(train, test)
    model, info = train_model(settings, train, classes, quiet=quiet)
    meta = {"recipe_hash": digest, "classes": classes, "keys": list(train.keys),
            "train_file": str(paths["train"]), **info}
    save_checkpoint(target, model, meta)
    model, meta = load_checkpoint(target)
    return PreparedCheckpoint(target, True, paths, model, meta)
