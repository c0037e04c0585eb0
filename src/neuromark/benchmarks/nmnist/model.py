"""The N-MNIST baseline: a small convolutional LIF network (snnTorch), read out by spike count.

One time step (frames of ``dt_us``, default 10 ms): ``(B, 2, 34, 34)`` event counts ->
conv 5x5 stride 2 (2 -> 8 channels, 17 x 17) -> Leaky -> conv 3x3 stride 2 (8 -> 16, 9 x 9)
-> Leaky -> Linear 1296 -> 10 -> Leaky; the class with the most output spikes over the 34
steps wins (``spike_count``). 14,546 weights and biases.

Trained with snnTorch's ``mse_count_loss`` (correct rate 0.8, incorrect 0.2; the recipe of
snnTorch's N-MNIST tutorial) and Adam, seeded. Registry entry ``nmnist_snn``
(:func:`nmnist_snn`) builds the untrained network in the snnTorch adapter; a config loads
the shipped weights with ``model.checkpoint`` (:data:`SHIPPED_CHECKPOINT`, trained on
SLAYER's 1,000 training recordings). The command that re-derives that file::

    OMP_NUM_THREADS=1 python -m neuromark.benchmarks.nmnist.model \\
        --data-dir ../shared/realdata/nmnist_small --out nmnist_snn.pt

(defaults: 15 epochs, batch 32, lr 2e-3, seed 0, one thread; 4 to 6 minutes wall on a
loaded 2-core machine). The same settings, data and torch build give the same bytes of
weights (checked: a second run wrote an equal ``state_dict``).
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from neuromark._threads import torch_threads
from neuromark.benchmarks.nmnist.dataset import NMNIST
from neuromark.models.snntorch_model import SNNTorchModel

#: The shipped checkpoint (``{"state_dict", "config", "meta"}``).
SHIPPED_CHECKPOINT = Path(__file__).resolve().parent / "files" / "nmnist_snn.pt"


class NMNISTSNN(nn.Module):
    """One time step: frames (B, 2, 34, 34) -> output spikes (B, 10) (state inside)."""

    def __init__(self, beta: float = 0.8, threshold: float = 1.0,
                 channels: tuple[int, int] = (8, 16)) -> None:
        super().__init__()
        import snntorch as snn
        from snntorch import surrogate

        grad = surrogate.atan()
        c1, c2 = channels
        self.conv1 = nn.Conv2d(2, c1, 5, stride=2, padding=2)   # 34 -> 17
        self.conv2 = nn.Conv2d(c1, c2, 3, stride=2, padding=1)  # 17 -> 9
        self.fc = nn.Linear(c2 * 9 * 9, 10)
        self.lif1, self.lif2, self.lif_out = (
            snn.Leaky(beta=beta, threshold=threshold, spike_grad=grad, init_hidden=True) for _ in range(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.lif1(self.conv1(x))
        x = self.lif2(self.conv2(x))
        return self.lif_out(self.fc(x.flatten(1)))

    def reset_state(self) -> None:
        for lif in (self.lif1, self.lif2, self.lif_out):
            lif.reset_mem()


def nmnist_snn(beta: float = 0.8, threshold: float = 1.0,
               channels: tuple[int, int] = (8, 16)) -> SNNTorchModel:
    """The untrained network (options: membrane decay ``beta`` per step, ``threshold``,
    conv ``channels``) in the snnTorch adapter (input (B, T, 2, 34, 34), output (B, T, 10))."""
    return SNNTorchModel(NMNISTSNN(beta, threshold, tuple(channels)))


def train(data: NMNIST, *, epochs: int = 15, batch_size: int = 32, lr: float = 2e-3, seed: int = 0,
          beta: float = 0.8, threshold: float = 1.0, channels: tuple[int, int] = (8, 16),
          quiet: bool = False) -> tuple[NMNISTSNN, dict[str, Any]]:
    """Train on ``data`` (a training split) with ``mse_count_loss(0.8, 0.2)`` and Adam, on
    one thread, seeded; returns (network in eval mode, {loss and train accuracy per epoch,
    train_seconds, train_samples})."""
    import snntorch.functional as SF

    with torch_threads(1):
        torch.manual_seed(seed)
        net = NMNISTSNN(beta, threshold, channels)
        frames = torch.stack([data[i][0] for i in range(len(data))])  # (N, T, 2, 34, 34)
        labels = torch.tensor(data.targets)
        order = torch.Generator().manual_seed(seed)
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        loss_fn = SF.mse_count_loss(correct_rate=0.8, incorrect_rate=0.2)
        losses: list[float] = []
        accuracy: list[float] = []
        start = time.perf_counter()
        for epoch in range(epochs):
            net.train()
            total, correct = 0.0, 0
            for batch in torch.randperm(len(labels), generator=order).split(batch_size):
                x, y = frames[batch], labels[batch]
                net.reset_state()
                spikes = torch.stack([net(x[:, k]) for k in range(x.shape[1])])  # (T, B, 10)
                loss = loss_fn(spikes, y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(y)
                correct += int((spikes.sum(0).argmax(1) == y).sum())
            losses.append(total / len(labels))
            accuracy.append(correct / len(labels))
            if not quiet:
                print(f"nmnist_snn epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}, "
                      f"train accuracy {accuracy[-1]:.3f}", flush=True)
    net.eval()
    return net, {"loss": losses, "train_accuracy": accuracy, "train_seconds": time.perf_counter() - start,
                 "train_samples": len(labels)}


def data_digest(data: NMNIST) -> str:
    """sha256 over the training recordings' bytes and labels, in order (the recipe's data)."""
    digest = hashlib.sha256()
    for path, label in data.samples:
        digest.update(path.read_bytes())
        digest.update(bytes([label]))
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Train the N-MNIST conv LIF baseline and save its checkpoint")
    parser.add_argument("--data-dir", required=True,
                        help="N-MNIST folder (published Train/Test layout, or SLAYER's NMNISTsmall)")
    parser.add_argument("--out", required=True, help="checkpoint file to write")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dt-us", type=int, default=10_000)
    parser.add_argument("--t-max-us", type=int, default=340_000)
    args = parser.parse_args(argv)
    data = NMNIST(args.data_dir, "train", dt_us=args.dt_us, t_max_us=args.t_max_us)
    net, info = train(data, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed)
    config = {"beta": 0.8, "threshold": 1.0, "channels": [8, 16]}
    meta = {"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "seed": args.seed,
            "dt_us": args.dt_us, "t_max_us": args.t_max_us, "train_data_sha256": data_digest(data),
            "torch": str(torch.__version__), **info}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": net.state_dict(), "config": config, "meta": meta}, args.out)
    print(f"saved {args.out} ({info['train_seconds']:.0f} s, final loss {info['loss'][-1]:.4f})")


if __name__ == "__main__":
    main()
