"""Training recipe of :mod:`neuromark.baselines.event_detector`, with checkpoint caching.

Truncated back-propagation through time over the sequential stream: each batch is one
window of ``num_tbins`` bins per slot; the recurrent state is carried (detached) between
batches and zeroed at file starts. Adam, CenterNet loss on bins with ground truth.
Checkpoints are ``torch.save`` dicts (``format``, ``kind``, ``config``, ``state_dict``,
``meta``) reused while their recipe hash (settings + training files' bytes) matches; a
file without neuromark's header is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import Field

from neuromark._threads import torch_threads
from neuromark.baselines.event_detector import (
    STRIDE,
    DetectorConfig,
    EventDetector,
    detection_loss,
    encode_targets,
)
from neuromark.config import StrictModel
from neuromark.data.download import update_digest
from neuromark.devices import checkpoint_device_meta, move_to
from neuromark.errors import DataError
from neuromark.processors.detection_stream import SequentialStream
from neuromark.results import atomic_path

CHECKPOINT_FORMAT = 1


class DetectorTrainSettings(StrictModel):
    """``train:`` of a detection config."""

    epochs: int = Field(6, ge=1)
    batch_size: int = Field(4, ge=1)
    lr: float = Field(3e-3, gt=0)
    seed: int = 0
    threads: int = Field(1, ge=1)


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


def recipe_hash(recipe: dict[str, Any], files: list[Path]) -> str:
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode())
    for path in files:
        update_digest(digest, path)
    return digest.hexdigest()


def load_detector(path: Path) -> tuple[EventDetector, dict[str, Any]]:
    """(model in eval mode, meta) from a detector checkpoint; :class:`DataError` otherwise."""
    try:
        payload = torch.load(path, weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for foreign bytes
        raise DataError(f"{path}: not a loadable checkpoint: {exc}") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT \
            or payload.get("kind") != "event_detector":
        raise DataError(f"{path}: not a neuromark event-detector checkpoint")
    model = EventDetector(DetectorConfig(**payload["config"]))
    model.load_state_dict(payload["state_dict"])
    model.eval()
    return model, payload.get("meta", {})


def prepare_detector(path: Path, config: DetectorConfig, settings: DetectorTrainSettings,
                     stream: SequentialStream, recipe: dict[str, Any], *, quiet: bool = True,
                     device: Any = "cpu") -> tuple[EventDetector, dict[str, Any], bool]:
    """(model, meta, trained now): the cached checkpoint when its recipe hash matches, else
    a newly trained (on ``device``) and saved one; ``recipe`` names the device when it is
    not the CPU (:func:`~neuromark.devices.recipe_device`)."""
    files = [p for f in stream.files for p in (f.dat, f.boxes)]
    digest = recipe_hash(recipe, files)
    if path.is_file():
        try:
            model, meta = load_detector(path)
            if meta.get("recipe_hash") == digest:
                return model, meta, False
        except DataError:
            payload = None
            try:
                payload = torch.load(path, weights_only=True)
            except Exception:  # noqa: BLE001
                pass
            if not (isinstance(payload, dict) and payload.get("kind") == "event_detector"):
                raise DataError(f"{path}: not a neuromark detector checkpoint; neuromark never "
                                "overwrites a file it did not write") from None
    model, info = fit_detector(config, settings, stream, quiet=quiet, device=device)
    meta = {"recipe_hash": digest, "recipe": recipe, **info, **checkpoint_device_meta(device)}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save({**model.checkpoint(), "format": CHECKPOINT_FORMAT, "meta": meta}, tmp)
    model, meta = load_detector(path)
    return model, meta, True
