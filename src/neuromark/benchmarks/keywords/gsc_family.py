"""NeuroBench's two Google Speech Commands baselines as model families with their training
recipes, so that ``configs/keywords/gsc_*.yaml`` train on first use and cache a checkpoint.

- ``gsc_m5`` (:data:`GSC_M5`): M5 on the 8-kHz waveform, cross entropy; recipe Adam 0.01,
  weight decay 1e-4, StepLR(20, 0.1), batch 64, 30 epochs.
- ``gsc_snn`` (:data:`GSC_SNN`): 20-256-256-256-35 Leaky LIF on delta-mel spikes, the
  spike-count MSE (targets 25 % / 2.5 % of T, the rule of snnTorch's ``mse_count_loss``);
  recipe Adam 0.005, weight decay 1e-4, StepLR(15, 0.1), batch 32, 20 epochs; the options
  chosen on the validation speakers (:data:`CHOSEN_OPTIONS`, docs/keywords.md).

The ``classification`` task validates ``train:`` with the family's :attr:`train_model`
(epochs, batch_size, lr, weight_decay, step_size, gamma, seed, threads), trains with
:func:`~neuromark.benchmarks.keywords.models.fit_classifier` on the whole training split (features
computed in batches of 256, weights drawn under ``seed``), and caches a neuromark checkpoint
(``kind``, ``config``, ``state_dict``) at ``model.checkpoint`` through the shared cache
(:mod:`neuromark.training.checkpoints`), reused while its recipe hash (settings plus the
decoded training clips' sidecar, :attr:`KeywordClips.recipe_file`) matches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field
from torch import nn

from neuromark._threads import torch_threads
from neuromark.benchmarks.keywords.models import gsc_m5, gsc_snn
from neuromark.benchmarks.keywords.speech_commands import CITATION, LABELS
from neuromark.benchmarks.keywords.train import fit_classifier, init_seeded
from neuromark.config import StrictModel
from neuromark.errors import DataError
from neuromark.training.checkpoints import read_checkpoint, restore_network
from neuromark.training.recipe import BatchSize, Epochs, LearningRate, TrainRecipe


class M5Options(StrictModel):
    """``model.options`` of ``gsc_m5`` (the arguments of :func:`gsc_m5`)."""

    n_input: int = Field(1, ge=1)
    n_output: int = Field(35, ge=1)
    n_channel: int = Field(32, ge=1)


class SNNOptions(StrictModel):
    """``model.options`` of ``gsc_snn`` (the arguments of :func:`gsc_snn`)."""

    inputs: int = Field(20, ge=1)
    classes: int = Field(35, ge=1)
    hidden: int = Field(256, ge=1)
    beta: float = Field(0.9, gt=0, lt=1, description="membrane decay per step (NeuroBench: 0.9)")
    slope: float = Field(25.0, gt=0, description="fast-sigmoid surrogate steepness")
    init_gain: float = Field(1.0, gt=0, description="initial weights multiplied by this")


class KeywordTrainSettings(TrainRecipe):
    """``train:`` of a GSC family: Adam, StepLR(step_size, gamma); defaults: M5's recipe."""

    epochs: Epochs = 30
    batch_size: BatchSize = 64
    lr: LearningRate = 0.01
    weight_decay: float = Field(1e-4, ge=0)
    step_size: int = Field(20, ge=1, description="epochs between learning-rate steps")
    gamma: float = Field(0.1, gt=0)


class SNNTrainSettings(KeywordTrainSettings):
    """``train:`` of ``gsc_snn``; defaults: its chosen recipe."""

    epochs: Epochs = 20
    batch_size: BatchSize = 32
    lr: LearningRate = 0.005
    step_size: int = Field(15, ge=1)


#: The options of ``configs/keywords/gsc_*.yaml`` (``gsc_snn``: chosen on validation speakers).
CHOSEN_OPTIONS: dict[str, dict[str, float]] = {"gsc_m5": {},
                                               "gsc_snn": {"beta": 0.95, "slope": 5.0, "init_gain": 2.0}}


@dataclass
class TrainedKeywordNet:
    """A trained network with what its checkpoint records (``save_checkpoint`` reads
    :meth:`checkpoint`)."""

    kind: str
    config: dict[str, Any]
    net: nn.Module

    def checkpoint(self) -> dict[str, Any]:
        """``{"kind", "config", "state_dict"}`` as neuromark checkpoints hold them."""
        return {"kind": self.kind, "config": self.config, "state_dict": self.net.state_dict()}


def split_tensors(data: Any, batch_size: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """(features (N, ...), labels (N,)) of a whole keyword split, computed in batches."""
    xs, ys = zip(*data.loader(batch_size), strict=True)
    return torch.cat(xs), torch.cat(ys)


@dataclass(frozen=True)
class KeywordFamily:
    """A GSC model family: options, training recipe and checkpoints (see the module notes)."""

    kind: Literal["gsc_m5", "gsc_snn"]
    options_model: type[StrictModel]
    train_model: type[KeywordTrainSettings]
    factory: Callable[..., nn.Module]
    loss: Literal["ce", "mse_count"]
    spiking: bool
    citation: str = CITATION
    tasks: tuple[str, ...] = ("classification",)

    @property
    def name(self) -> str:
        """The registry name, and its checkpoints' ``kind``."""
        return self.kind

    def trains_on(self, device: Any) -> str:
        """The CPU: the recipe trains there whatever the evaluation device."""
        return "cpu"

    def fit(self, options: Any, train: KeywordTrainSettings, data: Any, classes: int, *,
            quiet: bool = True, label: str = "", device: Any = "cpu"
            ) -> tuple[TrainedKeywordNet, dict[str, Any]]:
        """Train a fresh network (drawn under ``train.seed``) on the training split ``data``;
        returns (trained network, {loss and train_accuracy per epoch, train_seconds,
        train_samples, epochs})."""
        config = options.model_dump()
        out = config.get("n_output", config.get("classes"))
        if out != classes or classes != len(LABELS):
            raise DataError(f"{getattr(data, 'path', data)}: {self.kind} has {out} outputs; the "
                            f"training split has {classes} classes (Speech Commands: {len(LABELS)})")
        x, y = split_tensors(data)
        net = init_seeded(lambda: self.factory(**config), train.seed)
        log = None if quiet else (lambda line: print(f"{label or self.kind}: {line}", flush=True))
        with torch_threads(train.threads):
            info = fit_classifier(net, x, y, epochs=train.epochs, batch_size=train.batch_size, lr=train.lr,
                                  weight_decay=train.weight_decay, step_size=train.step_size,
                                  gamma=train.gamma, seed=train.seed, loss=self.loss, log=log)
        return TrainedKeywordNet(self.kind, config, net), {**info, "train_samples": len(y),
                                                          "epochs": train.epochs}

    def load(self, path: Path) -> tuple[nn.Module, dict[str, Any]]:
        """(network in eval mode, meta with ``kind``) from a checkpoint this family saved."""
        payload = read_checkpoint(Path(path), (self.kind,), what=self.kind)
        net = restore_network(path, payload, lambda config: self.factory(**config), self.kind)
        return net, {**payload.get("meta", {}), "kind": self.kind}


#: Registry entries ``gsc_m5`` and ``gsc_snn``.
GSC_M5 = KeywordFamily("gsc_m5", M5Options, KeywordTrainSettings, gsc_m5, "ce", spiking=False)
GSC_SNN = KeywordFamily("gsc_snn", SNNOptions, SNNTrainSettings, gsc_snn, "mse_count", spiking=True)
FAMILIES = {f.kind: f for f in (GSC_M5, GSC_SNN)}
