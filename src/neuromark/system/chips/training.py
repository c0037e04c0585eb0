"""Quick, seeded training of the small float models the chip SUTs deploy (untimed, at build).

Full-batch Adam on the training split; the models are tiny (a few thousand weights) so a
run takes seconds on one CPU thread. The figures are functions of the data, the options
and the seed only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuromark.results import Score


def train_mlp(x: np.ndarray, y: np.ndarray, *, hidden: int, classes: int, epochs: int, lr: float,
              seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """A ReLU MLP ``inputs -> hidden -> classes`` fitted to ``x`` (N, F) float, ``y`` (N,);
    returns ``[(weight (in, out), bias (out,)), ...]`` as float64 arrays."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, classes))
    with torch.no_grad():
        for p in net.parameters():
            p.uniform_(-1.0, 1.0, generator=gen).mul_(1.0 / np.sqrt(p.shape[-1]))
    xt, yt = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=1e-4)
    for _ in range(epochs):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(xt), yt).backward()
        opt.step()
    return [(m.weight.detach().double().numpy().T.copy(), m.bias.detach().double().numpy().copy())
            for m in net if isinstance(m, torch.nn.Linear)]


def mlp_forward(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> np.ndarray:
    """Float logits (N, classes) of ``layers`` (ReLU between them) on ``x`` (N, F)."""
    h: Any = np.asarray(x, dtype=np.float64)
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        if i < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h


def accuracy(scores: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of rows whose argmax is the label."""
    return float(np.mean(np.argmax(scores, axis=-1) == labels))


def float_accuracy_score(value: float, samples: int) -> Score:
    """The float model's accuracy as a :class:`~neuromark.results.Score` beside the mapped
    model's ``classification_accuracy`` (standard error ``sqrt(p (1 - p) / (n - 1))``, as the
    accuracy pass reports it)."""
    error = float(np.sqrt(value * (1.0 - value) / (samples - 1))) if samples > 1 else None
    return Score(value, error=error, unit="", higher_is_better=True)
