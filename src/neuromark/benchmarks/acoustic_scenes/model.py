"""Reference CPU pipeline for acoustic scene classification (NeuroBench system track, ASC).

Like the paper's Arduino baseline: Mel-filterbank energies (:mod:`neuromark.processors.mel`)
into a small CNN of two conv layers, each with batch norm, ReLU and 2×2 max pooling, then
a linear classifier over the 4 scenes. ``quantize_int8`` gives the int8 variant through
PyTorch's eager-mode post-training static quantization (``torch.ao.quantization``: fuse,
prepare, calibrate, convert; https://pytorch.org/docs/stable/quantization.html).

Input: MFE of shape (batch, 1, n_mels, frames), e.g. (B, 1, 40, 63) for 1 s at 8 kHz.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from neuromark.errors import ConfigError
from neuromark.io_atomic import claim_output_file


class AscCNN(nn.Module):
    """conv(1→c1, 3×3)-BN-ReLU-maxpool2 → conv(c1→c2, 3×3)-BN-ReLU-maxpool2 → linear."""

    def __init__(self, n_mels: int = 40, frames: int = 63, n_classes: int = 4,
                 channels: tuple[int, int] = (8, 16)) -> None:
        super().__init__()
        c1, c2 = channels
        self.quant = torch.ao.quantization.QuantStub()
        self.conv1 = nn.Conv2d(1, c1, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c1)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c2)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(c2 * (n_mels // 4) * (frames // 4), n_classes)
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 1, n_mels, frames) MFE -> (B, n_classes) logits."""
        x = self.quant(x)
        x = self.pool1(self.relu1(self.bn1(self.conv1(x))))
        x = self.pool2(self.relu2(self.bn2(self.conv2(x))))
        return self.dequant(self.fc(self.flatten(x)))


@dataclass(frozen=True)
class TrainRecipe:
    """Adam, cross-entropy, a fixed number of epochs; features are standardised beforehand."""

    epochs: int = 20
    lr: float = 1e-3
    batch_size: int = 64
    weight_decay: float = 1e-4
    seed: int = 0


def train(model: AscCNN, features: torch.Tensor, labels: torch.Tensor,
          recipe: TrainRecipe = TrainRecipe()) -> list[float]:
    """Train in place on (N, 1, n_mels, frames) features and (N,) int labels; returns the
    mean loss of each epoch. Shuffling uses a seeded ``torch.Generator``."""
    gen = torch.Generator().manual_seed(recipe.seed)
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    model.train()
    for _ in range(recipe.epochs):
        order = torch.randperm(len(labels), generator=gen)
        total = 0.0
        for start in range(0, len(order), recipe.batch_size):
            idx = order[start:start + recipe.batch_size]
            opt.zero_grad()
            loss = loss_fn(model(features[idx]), labels[idx])
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(order))
    model.eval()
    return losses


def quantize_int8(model: AscCNN, calibration: Iterable[torch.Tensor], engine: str | None = None) -> nn.Module:
    """An int8 copy of ``model`` (eager post-training static quantization): conv+BN+ReLU and
    the classifier run in int8; ``calibration`` batches set the activation ranges."""
    import copy

    engine = engine or ("qnnpack" if torch.backends.cpu.get_cpu_capability() == "NONE" else "x86")
    if engine not in torch.backends.quantized.supported_engines:
        engine = torch.backends.quantized.supported_engines[-1]
    torch.backends.quantized.engine = engine
    q = copy.deepcopy(model).eval()
    torch.ao.quantization.fuse_modules(q, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"]],
                                       inplace=True)
    q.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(q, inplace=True)
    with torch.inference_mode():
        for batch in calibration:
            q(batch)
    torch.ao.quantization.convert(q, inplace=True)
    return q


def build(seed: int = 0, **kwargs: Any) -> AscCNN:
    """A seeded, untrained :class:`AscCNN` in eval mode."""
    torch.manual_seed(seed)
    return AscCNN(**kwargs).eval()


def features_of(dataset: Any, mfe: Any, chunk: int = 512) -> tuple[torch.Tensor, torch.Tensor]:
    """MFE of every slice of ``dataset`` as (N, 1, n_mels, frames) float32, labels (N,)."""
    import numpy as np

    feats, labels = [], []
    for start in range(0, len(dataset), chunk):
        items = [dataset[i] for i in range(start, min(start + chunk, len(dataset)))]
        feats.append(mfe.features(np.stack([a for a, _ in items]))[:, None])
        labels += [y for _, y in items]
    return torch.cat(feats), torch.as_tensor(labels)


def main(argv: list[str] | None = None) -> int:
    """Train on the TAU 2020 train split (seeded validation carve-out) and save weights.

    ``python -m neuromark.benchmarks.acoustic_scenes.model --root ROOT --out asc_cnn.pt [--epochs 20]``
    writes ``{"model": state_dict, "mean", "std", "n_mels", "frames", "val_accuracy"}``,
    the file that a system config's ``sut.weights`` loads.
    """
    import argparse

    from neuromark.benchmarks.acoustic_scenes.dcase import DcaseASC, validation_split
    from neuromark.processors.mel import MelFilterbankEnergies

    parser = argparse.ArgumentParser(description="Train the ASC reference CNN on TAU 2020 Mobile.")
    parser.add_argument("--root", required=True, help="folder with audio/ and evaluation_setup/")
    parser.add_argument("--out", required=True, help="weights file to write (.pt); an existing "
                        "file is not replaced without --overwrite")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    parser.add_argument("--epochs", type=int, default=TrainRecipe.epochs)
    parser.add_argument("--val", type=float, default=0.1, help="validation fraction of train")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-mels", type=int, default=40)
    args = parser.parse_args(argv)
    try:  # before any work: the weights file never replaces a file it did not write
        claim_output_file(args.out, overwrite=args.overwrite, flag="--out")
    except ConfigError as exc:
        parser.error(str(exc))
    torch.manual_seed(args.seed)
    mfe = MelFilterbankEnergies(n_mels=args.n_mels)
    x, y = features_of(DcaseASC(args.root, "train"), mfe)
    tr, va = validation_split(len(y), args.val, args.seed)
    mean, std = float(x[tr].mean()), float(x[tr].std()) or 1.0
    x = (x - mean) / std
    model = build(args.seed, n_mels=args.n_mels, frames=mfe.frames(8000))
    losses = train(model, x[tr], y[tr], TrainRecipe(epochs=args.epochs, seed=args.seed))
    with torch.inference_mode():
        val_acc = float((model(x[va]).argmax(1) == y[va]).float().mean())
    torch.save({"model": model.state_dict(), "mean": mean, "std": std, "n_mels": args.n_mels,
                "frames": mfe.frames(8000), "val_accuracy": val_acc, "losses": losses}, args.out)
    print(f"trained {args.epochs} epochs on {len(tr)} slices; validation accuracy {val_acc:.4f} "
          f"on {len(va)} slices; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
