"""Training recipe of :mod:`neuromark.benchmarks.event_detection.model`, with checkpoint caching.

Truncated back-propagation through time over the sequential stream: each batch is one
window of ``num_tbins`` bins per slot; the recurrent state is carried (detached) between
batches and zeroed at file starts. Adam, CenterNet loss on bins with ground truth.

Registry entry ``event_detector`` is :data:`EVENT_DETECTOR`, a
:class:`~neuromark.training.family.ModelFamily` of the ``detection`` task: its checkpoints live in
the shared cache (:mod:`neuromark.training.checkpoints`), reused while their recipe hash
(settings + the training files' bytes, in order) matches; the hash is the one the
detector's checkpoints had before the cache was shared, so they are still reused.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from pydantic import Field

from neuromark._threads import torch_threads
from neuromark.benchmarks.event_detection.model import (
    STRIDE,
    DetectorConfig,
    EventDetector,
    detection_loss,
    encode_targets,
)
from neuromark.benchmarks.event_detection.stream import SequentialStream
from neuromark.config import StrictModel
from neuromark.devices import move_to
from neuromark.training.checkpoints import read_checkpoint, restore_network
from neuromark.training.recipe import BatchSize, Epochs, LearningRate, Threads, TrainRecipe

#: The ``kind`` of the detector's checkpoints (and its registry name).
KIND = "event_detector"


class DetectorOptions(StrictModel):
    """``model.options`` of ``event_detector`` (:class:`DetectorConfig`; ``in_channels``
    None: the channels of the configured event tensor)."""

    in_channels: int | None = Field(None, ge=1)
    classes: int = Field(3, ge=1)
    width: int = Field(16, ge=1)
    memory: Literal["gru", "lif"] = "gru"
    beta: float = Field(0.8, gt=0)
    threshold: float = Field(1.0, gt=0)


class DetectorTrainSettings(TrainRecipe):
    """``train:`` of a detection config."""

    epochs: Epochs = 6
    batch_size: BatchSize = 4
    lr: LearningRate = 3e-3
    threads: Threads = 1


def fit_detector(config: DetectorConfig, settings: DetectorTrainSettings, stream: SequentialStream,
                 *, quiet: bool = True, device: Any = "cpu") -> tuple[EventDetector, dict[str, Any]]:
    """Train a fresh detector on ``stream`` (its batch size is the training batch) on
    ``device`` (built on the CPU after seeding, then moved; returned on the CPU)."""
    torch.manual_seed(settings.seed)
    model = EventDetector(config).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr)
    losses: list[float] = []
    start = time.perf_counter()
    h, w = -(-stream.tensor.height // STRIDE), -(-stream.tensor.width // STRIDE)
    with torch_threads(settings.threads):
        for epoch in range(settings.epochs):
            model.train()
            model.forget()
            total, batches = 0.0, 0
            for (x, keep), targets in stream:
                out = model(move_to((x, keep), device))
                enc = [encode_targets(boxes, stream.stamps[b], config.classes, h, w)
                       for b, (_, boxes) in enumerate(targets)]
                heat, reg, pos = (torch.stack([e[i] for e in enc]).flatten(0, 1).to(device)
                                  for i in range(3))
                labelled = _labelled(targets, stream.stamps).to(device)
                loss = detection_loss(out.flatten(0, 1), heat, reg, pos, labelled)
                opt.zero_grad()
                loss.backward()
                opt.step()
                model.memory_state = model.memory_state.detach() if model.memory_state is not None else None
                total += float(loss.detach())
                batches += 1
            losses.append(total / max(batches, 1))
            if not quiet:
                print(f"detector epoch {epoch + 1}/{settings.epochs}: loss {losses[-1]:.4f}")
    model.eval()
    model.forget()
    return model.cpu(), {"loss": losses, "epochs": settings.epochs,
                         "train_seconds": time.perf_counter() - start, "train_files": len(stream.files)}


def _labelled(targets: list[tuple[Any, np.ndarray]], stamps: np.ndarray) -> torch.Tensor:
    """(B*T,) bool: the bins whose stamp has ground truth."""
    return torch.tensor([bool(np.any(boxes["t"] == s)) for b, (_, boxes) in enumerate(targets)
                         for s in stamps[b]])


@dataclass(frozen=True)
class EventDetectorFamily:
    """The ``event_detector`` model family: options, the recipe of :func:`fit_detector`, and
    its checkpoints."""

    name: str = KIND
    options_model: type[DetectorOptions] = DetectorOptions
    train_model: type[DetectorTrainSettings] = DetectorTrainSettings
    spiking: bool = False  # the GRU memory; a LIF memory's neurons are counted where present
    tasks: tuple[str, ...] = ("detection",)

    def trains_on(self, device: Any) -> Any:
        return device

    def config(self, options: DetectorOptions, stream: SequentialStream) -> DetectorConfig:
        """The architecture: ``options``, with the stream's channels unless they are given."""
        chosen = options.model_dump(exclude_unset=True)
        return DetectorConfig(**{"in_channels": stream.tensor.channels, **chosen})

    def fit(self, options: DetectorOptions, train: DetectorTrainSettings, data: SequentialStream,
            classes: int, *, quiet: bool = True, label: str = "", device: Any = "cpu"
            ) -> tuple[EventDetector, dict[str, Any]]:
        """Train a fresh detector on the training stream ``data`` (see :func:`fit_detector`)."""
        return fit_detector(self.config(options, data), train, data, quiet=quiet, device=device)

    def load(self, path: Path) -> tuple[EventDetector, dict[str, Any]]:
        """(model in eval mode, meta) from a detector checkpoint; :class:`DataError` otherwise."""

        payload = read_checkpoint(Path(path), (KIND,), what="event-detector")
        model = restore_network(path, payload,
                                lambda config: EventDetector(DetectorConfig(**config)), KIND)
        return model, payload.get("meta", {})

    def __call__(self, **options: Any) -> EventDetector:
        """An untrained detector from ``options`` (the entry used as a plain factory)."""
        return EventDetector(DetectorConfig(**options))


#: Registry entry ``event_detector``.
EVENT_DETECTOR = EventDetectorFamily()
