"""A model family for windowed time series (e.g. sensor windows, EEG trials).

A :class:`SeriesFamily` is a registry entry of ``neuromark.registry.models`` (a
:class:`~neuromark.training.family.ModelFamily`) for the ``classification`` task on splits that
yield ``(x (T, C) float32, label)`` and offer ``input_shape`` (T, C), ``arrays()`` and
``sibling("valid")`` (the windowed-series families' data sets).

- ``kind="step"``: a spiking network called once per time step on (B, C), hidden state
  inside (snnTorch ``init_hidden``), evaluated through the snnTorch adapter; trained with
  cross-entropy on the output spike count summed over time (NeuroBench's NeHAR and
  ThorEEGMI recipes), read out by spike count.
- ``kind="window"``: a network called once on the whole window (B, T, C), returning logits.
- ``kind="closed_form"``: fitted on the training arrays by ``fit_arrays`` (e.g. LDA), no
  epochs; evaluated as a torch module.

Training (``train:``, :class:`SeriesTrain`): Adam, seeded initial weights and batch order,
``epochs`` over the training split; after each epoch the accuracy on the validation split
is measured and the weights of the best epoch are kept (``select: valid``; ``last`` keeps
the final ones). The test split is never used for choosing anything.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from neuromark._threads import torch_threads
from neuromark.training.checkpoints import read_checkpoint, restore_network
from neuromark.training.family import TrainedModule
from neuromark.training.recipe import BatchSize, Epochs, LearningRate, TrainRecipe


class SeriesTrain(TrainRecipe):
    """``train:`` of a series family."""

    epochs: Epochs = 20
    batch_size: BatchSize = 64
    lr: LearningRate = 1e-3
    weight_decay: float = Field(0.0, ge=0)
    select: Literal["valid", "last"] = Field("valid", description="keep the best validation epoch")


def run_steps(net: Any, x: Any) -> Any:
    """(B, T, K) outputs of a per-step network over (B, T, C), state reset first."""
    import torch

    for module in net.modules():
        for method in ("reset_state", "reset_mem"):  # ours, then snnTorch's
            reset = getattr(module, method, None)
            if callable(reset) and module is not net:
                reset()
                break
    out = [net(x[:, t]) for t in range(x.shape[1])]
    return torch.stack([o[0] if isinstance(o, tuple) else o for o in out], 1)


def logits_of(kind: str, net: Any, x: Any) -> Any:
    """(B, K) training logits: ``step``: the network's ``logits`` of its (B, T, K) outputs
    when it defines one (e.g. a membrane readout's mean over time), else the spike count
    over time; otherwise the output."""
    if kind != "step":
        return net(x)
    out = run_steps(net, x)
    reduce = getattr(net, "logits", None)
    return reduce(out) if callable(reduce) else out.sum(1)


def accuracy(kind: str, net: Any, x: Any, y: Any, batch: int = 256) -> float:
    import torch

    correct = 0
    with torch.no_grad():
        for i in range(0, len(y), batch):
            correct += int((logits_of(kind, net, x[i:i + batch]).argmax(1) == y[i:i + batch]).sum())
    return correct / max(1, len(y))


def fit_series(kind: str, new_net: Callable[[], Any], data: Any, train: SeriesTrain, *,
               quiet: bool = True, label: str = "", device: Any = "cpu") -> tuple[Any, dict[str, Any]]:
    """Train ``new_net()`` (built after seeding torch) on ``data``'s arrays; returns (net in
    eval mode on the CPU, info: loss, train/valid accuracy per epoch, best epoch)."""
    import torch

    torch.manual_seed(train.seed)
    net = new_net().to(device)
    xs, ys = data.arrays()
    x, y = torch.from_numpy(xs).to(device), torch.from_numpy(ys).to(device)
    valid = data.sibling("valid") if hasattr(data, "sibling") else None
    vx, vy = (torch.from_numpy(a).to(device) for a in valid.arrays()) if valid is not None else (None, None)
    opt = torch.optim.Adam(net.parameters(), lr=train.lr, weight_decay=train.weight_decay)
    order = torch.Generator().manual_seed(train.seed)
    info: dict[str, Any] = {"loss": [], "train_accuracy": [], "valid_accuracy": []}
    best, best_acc = None, -1.0
    for epoch in range(train.epochs):
        net.train()
        total, correct = 0.0, 0
        for idx in torch.randperm(len(y), generator=order).split(train.batch_size):
            logits = logits_of(kind, net, x[idx])
            loss = torch.nn.functional.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            correct += int((logits.argmax(1) == y[idx]).sum())
        info["loss"].append(total / len(y))
        info["train_accuracy"].append(correct / len(y))
        net.eval()
        if vx is not None and len(vy):
            acc = accuracy(kind, net, vx, vy)
            info["valid_accuracy"].append(acc)
            if train.select == "valid" and acc > best_acc:
                best, best_acc, info["best_epoch"] = copy.deepcopy(net.state_dict()), acc, epoch + 1
        if not quiet:
            shown = f", valid {info['valid_accuracy'][-1]:.3f}" if info["valid_accuracy"] else ""
            print(f"{label} epoch {epoch + 1}/{train.epochs}: loss {info['loss'][-1]:.4f}{shown}")
    if best is not None:
        net.load_state_dict(best)
    return net.to("cpu").eval(), info


@dataclass(frozen=True)
class SeriesFamily:
    """A registered series model: ``build(**config)`` makes the network from its config
    (options plus ``inputs``, ``steps``, ``classes``); ``fit_arrays`` fits a closed-form
    one; ``adapter`` wraps it for evaluation (module docstring)."""

    name: str
    kind: Literal["step", "window", "closed_form"]
    build: Callable[..., Any]
    options_model: type[Any]
    citation: str
    spiking: bool
    train_model: type[Any] = SeriesTrain
    fit_arrays: Callable[..., Any] | None = None
    tasks: tuple[str, ...] = ("classification",)

    def trains_on(self, device: Any) -> Any:
        return "cpu" if self.kind == "closed_form" else device

    def _config(self, options: Any, data: Any, classes: int) -> dict[str, Any]:
        steps, inputs = data.input_shape
        return {**options.model_dump(), "inputs": int(inputs), "steps": int(steps), "classes": int(classes)}

    def wrap(self, net: Any) -> Any:
        if self.kind == "step":
            from neuromark.models.snntorch_model import SNNTorchModel

            return SNNTorchModel(net)
        return net

    def fit(self, options: Any, train: Any, data: Any, classes: int, *, quiet: bool = True,
            label: str = "", device: Any = "cpu") -> tuple[Any, dict[str, Any]]:
        """Train (or fit) on the training split ``data``; validation from its ``valid`` sibling."""
        config = self._config(options, data, classes)
        start = time.perf_counter()
        with torch_threads(train.threads):
            if self.kind == "closed_form":
                assert self.fit_arrays is not None
                xs, ys = data.arrays()
                net = self.fit_arrays(config, np.asarray(xs), np.asarray(ys), seed=train.seed)
                info = {"epochs": 0}
            else:
                net, info = fit_series(self.kind, lambda: self.build(**config), data, train, quiet=quiet,
                                       label=label or self.name, device=device)
                info["epochs"] = train.epochs
        info.update(train_seconds=time.perf_counter() - start, train_samples=len(data))
        return TrainedModule(self.name, config, net), info

    def load(self, path: Path) -> tuple[Any, dict[str, Any]]:
        payload = read_checkpoint(Path(path), (self.name,), what=self.name)
        net = restore_network(path, payload, lambda config: self.build(**config), self.name)
        return self.wrap(net), {**payload.get("meta", {}), "kind": self.name}
