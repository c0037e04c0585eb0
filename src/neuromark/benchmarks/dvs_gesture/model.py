"""NeuroBench's DVS Gesture baseline: 3 x [conv 5x5 "same" -> max-pool 2 -> Leaky], 16/32/64
channels, Linear 1024 -> 11 with dropout and a Leaky output layer, read out by spike count
(``research/wave2-tasks.md`` §5). Trained with snnTorch's ``mse_count_loss`` (correct rate
0.8, incorrect 0.2), Adam and a cosine schedule, as the peer's recipe; epochs, learning rate
and batch are options (the peer: 100 epochs, 8.27e-3, batch 64, seed 1234).

Registry entry ``dvs_gesture_snn`` is a model family with this training recipe
(:data:`DVS_GESTURE_SNN`): the ``classification`` task trains it once on the data set's
training split (``train:`` epochs, batch_size, lr, optimizer, schedule, weight_decay, seed,
threads) and caches a neuromark checkpoint at ``model.checkpoint`` by recipe hash (settings
plus every training file's bytes). :func:`dvs_gesture_snn` builds the untrained network in
the snnTorch adapter (one call per time step). A bare ``state_dict`` file for other uses::

    python -m neuromark.benchmarks.dvs_gesture.model ROOT CHECKPOINT [--epochs 30]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from pydantic import Field
from torch import nn

from neuromark._threads import torch_threads
from neuromark.benchmarks.dvs_gesture.reader import CITATION
from neuromark.config import StrictModel
from neuromark.errors import DataError
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.networks.spike_classifiers import TrainSettings
from neuromark.training.checkpoints import read_checkpoint, restore_network

#: The ``kind`` of this family's checkpoints.
KIND = "dvs_gesture_snn"


class GestureSNN(nn.Module):
    """One time step: frames (B, 2, 32, 32) -> output spikes (B, 11) (hidden state inside)."""

    def __init__(self, beta: float = 0.5, threshold: float = 1.0, dropout: float = 0.5,
                 classes: int = 11) -> None:
        super().__init__()
        import snntorch as snn
        from snntorch import surrogate

        grad = surrogate.atan()
        self.conv1, self.conv2, self.conv3 = (nn.Conv2d(i, o, 5, padding=2)
                                              for i, o in ((2, 16), (16, 32), (32, 64)))
        self.pool = nn.MaxPool2d(2)
        self.lif1, self.lif2, self.lif3, self.lif_out = (
            snn.Leaky(beta=beta, threshold=threshold, spike_grad=grad, init_hidden=True) for _ in range(4))
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(64 * 4 * 4, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.lif1(self.pool(self.conv1(x)))
        x = self.lif2(self.pool(self.conv2(x)))
        x = self.lif3(self.pool(self.conv3(x)))
        return self.lif_out(self.fc(self.drop(x.flatten(1))))

    def reset_state(self) -> None:
        for lif in (self.lif1, self.lif2, self.lif3, self.lif_out):
            lif.reset_mem()


def dvs_gesture_snn(beta: float = 0.5, threshold: float = 1.0, dropout: float = 0.5) -> Any:
    """The untrained network in the snnTorch adapter."""
    return GestureModel(GestureSNN(beta, threshold, dropout))


class GestureModel(SNNTorchModel):
    """The snnTorch adapter over :class:`GestureSNN`, with its checkpoint dict."""

    def checkpoint(self) -> dict[str, Any]:
        """``{"kind", "config", "state_dict"}`` as neuromark checkpoints hold them."""
        net = self.module
        config = {"beta": float(net.lif1.beta), "threshold": float(net.lif1.threshold),
                  "dropout": float(net.drop.p)}
        return {"kind": KIND, "config": config, "state_dict": net.state_dict()}


class GestureOptions(StrictModel):
    """``model.options`` of ``dvs_gesture_snn``."""

    beta: float = Field(0.5, gt=0, le=1, description="membrane decay per time step")
    threshold: float = Field(1.0, gt=0)
    dropout: float = Field(0.5, ge=0, lt=1)


def train(root: str, *, epochs: int = 30, lr: float = 8.27e-3, batch_size: int = 16,
          seed: int = 1234,
          time_bins: int = 25, quiet: bool = False) -> tuple[GestureSNN, dict[str, Any]]:
    """Train on ``root``'s training split; returns (network, {loss per epoch, seconds})."""
    from neuromark.benchmarks.dvs_gesture.reader import DVSGesture

    data = DVSGesture(root, "train", n_time_bins=time_bins)
    return fit_gesture(GestureSNN, data, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed,
                       quiet=quiet)


def fit_gesture(new_net: Callable[[], GestureSNN], data: Any, *, epochs: int, lr: float, batch_size: int,
                seed: int, optimizer: str = "adam", schedule: str = "cosine", weight_decay: float = 0.0,
                device: Any = "cpu", quiet: bool = True, label: str = "gesture"
                ) -> tuple[GestureSNN, dict[str, Any]]:
    """Train the network ``new_net()`` builds (called after seeding torch with ``seed``, so
    the initial weights are reproducible) on ``data`` ((frames (T, 2, 32, 32), label)
    samples) with ``mse_count_loss(0.8, 0.2)``; returns (network in eval mode on the CPU,
    {loss per epoch, train_seconds, train_samples, epochs})."""
    import snntorch.functional as SF

    torch.manual_seed(seed)
    net = new_net().to(device)
    loader = torch.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True,
                                         generator=torch.Generator().manual_seed(seed))
    cls = torch.optim.Adam if optimizer == "adam" else torch.optim.Adamax
    opt = cls(net.parameters(), lr=lr, betas=(0.9, 0.999), weight_decay=weight_decay)
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs * len(loader)))
             if schedule == "cosine" else None)
    loss_fn = SF.mse_count_loss(correct_rate=0.8, incorrect_rate=0.2)
    losses, start = [], time.perf_counter()
    for epoch in range(epochs):
        net.train()
        total = 0.0
        for frames, labels in loader:
            frames, labels = frames.to(device), labels.to(device)
            net.reset_state()
            spikes = torch.stack([net(frames[:, k]) for k in range(frames.shape[1])])  # (T, B, K)
            loss = loss_fn(spikes, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            total += float(loss.detach()) * len(labels)
        losses.append(total / len(data))
        if not quiet:
            print(f"{label} epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    net = net.to("cpu").eval()
    return net, {"loss": losses, "train_seconds": time.perf_counter() - start, "train_samples": len(data),
                 "epochs": epochs}


@dataclass(frozen=True)
class GestureFamily:
    """The ``dvs_gesture_snn`` model family: options, the peer's training recipe, and its
    checkpoints (see the module docstring)."""

    name: str = KIND
    options_model: type[GestureOptions] = GestureOptions
    citation: str = CITATION
    spiking: bool = True
    tasks: tuple[str, ...] = ("classification",)

    @property
    def train_model(self) -> type[Any]:
        """``train:``: the spike-file recipe's settings (its augmentations are refused)."""

        return TrainSettings

    def trains_on(self, device: Any) -> Any:
        return device

    def fit(self, options: GestureOptions, train: Any, data: Any, classes: int, *, quiet: bool = True,
            label: str = "", device: Any = "cpu") -> tuple[GestureModel, dict[str, Any]]:
        """Train on the training split ``data`` (``train``: the classification task's
        ``train:`` settings; augmentations and regularisers of the spike-file recipe do
        not apply and are refused when set)."""
        if classes != 11:
            raise DataError(f"{getattr(data, 'path', data)}: DVS Gesture has 11 classes, the "
                            f"training split says {classes}")
        if getattr(train, "jitter_sigma", 0) or getattr(train, "time_stretch", 0) \
                or getattr(train, "readout", "max") != "max":
            raise ValueError("dvs_gesture_snn: train.jitter_sigma, time_stretch and readout: mean "
                             "are spike-file recipe settings; its loss is mse_count_loss on spike counts")
        with torch_threads(getattr(train, "threads", 1)):
            def new_net() -> GestureSNN:
                return GestureSNN(options.beta, options.threshold, options.dropout)

            net, info = fit_gesture(new_net, data,
                                    epochs=train.epochs, lr=train.lr, batch_size=train.batch_size,
                                    seed=train.seed, optimizer=train.optimizer, schedule=train.schedule,
                                    weight_decay=train.weight_decay, device=device, quiet=quiet,
                                    label=label or KIND)
        return GestureModel(net), info

    def load(self, path: Path) -> tuple[GestureModel, dict[str, Any]]:
        """(adapter in eval mode, meta with ``kind``) from a checkpoint this family saved."""

        payload = read_checkpoint(Path(path), (KIND,), what=KIND)
        net = restore_network(path, payload, lambda config: GestureSNN(**config), KIND)
        return GestureModel(net), {**payload.get("meta", {}), "kind": KIND}


#: Registry entry ``dvs_gesture_snn``.
DVS_GESTURE_SNN = GestureFamily()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train the DVS Gesture LIF baseline")
    parser.add_argument("root")
    parser.add_argument("checkpoint")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=8.27e-3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args(argv)
    net, info = train(args.root, epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, seed=args.seed)
    torch.save(net.state_dict(), args.checkpoint)
    print(f"saved {args.checkpoint} ({info['train_seconds']:.0f} s, final loss {info['loss'][-1]:.4f})")


if __name__ == "__main__":
    main()
