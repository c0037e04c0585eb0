"""NeuroBench's DVS Gesture baseline: 3 x [conv 5x5 "same" -> max-pool 2 -> Leaky], 16/32/64
channels, Linear 1024 -> 11 with dropout and a Leaky output layer, read out by spike count
(``research/wave2-tasks.md`` §5). Trained with snnTorch's ``mse_count_loss`` (correct rate
0.8, incorrect 0.2), Adam and a cosine schedule, as the peer's recipe; epochs, learning rate
and batch are options (the peer: 100 epochs, 8.27e-3, batch 64, seed 1234).

Registry entry ``dvs_gesture_snn`` returns the snnTorch adapter (one call per time step).
Train a checkpoint (``state_dict`` file) with::

    python -m neuromark.baselines.dvs_gesture ROOT CHECKPOINT [--epochs 30]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import torch
from torch import nn

from neuromark.models.snntorch_model import SNNTorchModel


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
    """Registry entry: the untrained network in the snnTorch adapter."""
    return SNNTorchModel(GestureSNN(beta, threshold, dropout))


def train(root: str, *, epochs: int = 30, lr: float = 8.27e-3, batch_size: int = 16,
          seed: int = 1234,
          time_bins: int = 25, quiet: bool = False) -> tuple[GestureSNN, dict[str, Any]]:
    """Train on ``root``'s training split; returns (network, {loss per epoch, seconds})."""
    import snntorch.functional as SF

    from neuromark.data.dvs_gesture import DVSGesture

    torch.manual_seed(seed)
    data = DVSGesture(root, "train", n_time_bins=time_bins)
    loader = torch.utils.data.DataLoader(data, batch_size=batch_size, shuffle=True,
                                         generator=torch.Generator().manual_seed(seed))
    net = GestureSNN()
    opt = torch.optim.Adam(net.parameters(), lr=lr, betas=(0.9, 0.999))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs * len(loader)))
    loss_fn = SF.mse_count_loss(correct_rate=0.8, incorrect_rate=0.2)
    losses, start = [], time.perf_counter()
    for epoch in range(epochs):
        net.train()
        total = 0.0
        for frames, labels in loader:
            net.reset_state()
            spikes = torch.stack([net(frames[:, k]) for k in range(frames.shape[1])])  # (T, B, K)
            loss = loss_fn(spikes, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(labels)
        losses.append(total / len(data))
        if not quiet:
            print(f"gesture epoch {epoch + 1}/{epochs}: loss {losses[-1]:.4f}")
    net.eval()
    return net, {"loss": losses, "train_seconds": time.perf_counter() - start, "train_samples": len(data)}


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
