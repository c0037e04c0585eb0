"""Non-spiking references of Cramer et al. (2020): a linear SVM on spike counts and an LSTM
on binned spikes.

Cramer, Stradmann, Schemmel and Zenke, IEEE TNNLS 2022, doi:10.1109/TNNLS.2020.3044364,
Sec. IV-A (linear SVM on per-channel spike counts) and IV-C (LSTM on binned spike trains).

Both are evaluated by the harness as torch modules: the SVM becomes a
:class:`SpikeCountLinear` (sum over time, then one ``nn.Linear`` holding the SVM's weights
with the feature standardisation folded in), so footprint and operations are counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from neuromark.errors import require


class SumOverTime(nn.Module):
    """(B, T, C) -> (B, C): spike counts per channel."""

    neuromark_no_synapses = True

    def forward(self, x: Tensor) -> Tensor:
        return x.sum(dim=1)


class SpikeCountLinear(nn.Module):
    """Linear classifier on spike counts: (B, T, C) -> logits (B, 1, K).

    The output has a time axis of length 1 so that the same post-processing
    (maximum over time, then argmax) serves every model.
    """

    def __init__(self, inputs: int, classes: int) -> None:
        super().__init__()
        self.count = SumOverTime()
        self.linear = nn.Linear(inputs, classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear(self.count(x)).unsqueeze(1)

    def checkpoint(self) -> dict[str, Any]:
        return {"kind": "svm", "config": {"inputs": self.linear.in_features,
                                          "classes": self.linear.out_features},
                "state_dict": self.state_dict()}


def fit_linear_svm_counts(counts: np.ndarray, labels: np.ndarray, classes: int, *, c: float = 1.0,
                          seed: int = 0, max_iter: int = 20_000) -> SpikeCountLinear:
    """Fit a one-vs-rest linear SVM (scikit-learn ``LinearSVC``) on standardised spike counts.

    Args:
        counts: (N, C) spike counts per channel (binned frames summed over time).
        labels: (N,) class indices in 0..classes-1.
    Returns the equivalent :class:`SpikeCountLinear` (standardisation folded into weights).
    """
    svm_mod = require("sklearn.svm", "audio")
    counts = np.asarray(counts).astype(np.float64)
    mean = counts.mean(axis=0)
    std = counts.std(axis=0)
    std[std == 0] = 1.0
    svm = svm_mod.LinearSVC(C=c, random_state=seed, max_iter=max_iter)
    svm.fit((counts - mean) / std, labels)
    coef = np.zeros((classes, counts.shape[1]))
    intercept = np.full(classes, -np.inf)
    if len(svm.classes_) == 2:  # sklearn returns one decision function for two classes
        coef[svm.classes_[1]], intercept[svm.classes_[1]] = svm.coef_[0], svm.intercept_[0]
        coef[svm.classes_[0]], intercept[svm.classes_[0]] = -svm.coef_[0], -svm.intercept_[0]
    else:
        coef[svm.classes_], intercept[svm.classes_] = svm.coef_, svm.intercept_
    weight = coef / std  # w·(x - μ)/σ + b = (w/σ)·x + (b - Σ w μ/σ)
    bias = np.where(np.isfinite(intercept), intercept - (coef * mean / std).sum(axis=1), -1e9)
    model = SpikeCountLinear(counts.shape[1], classes)
    with torch.no_grad():
        model.linear.weight.copy_(torch.as_tensor(weight, dtype=torch.float32))
        model.linear.bias.copy_(torch.as_tensor(bias, dtype=torch.float32))
    return model


@dataclass(frozen=True)
class LSTMConfig:
    """Hyper-parameters of :class:`LSTMClassifier`."""

    inputs: int
    classes: int
    hidden: int = 128


class LSTMClassifier(nn.Module):
    """LSTM over binned spikes, linear readout per step: (B, T, C) -> logits (B, T, K).

    Trained, like the SNN, on the maximum over time of the readout.
    """

    def __init__(self, config: LSTMConfig) -> None:
        super().__init__()
        self.config = config
        self.lstm = nn.LSTM(config.inputs, config.hidden, batch_first=True)
        self.readout = nn.Linear(config.hidden, config.classes)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() != 3 or x.shape[-1] != self.config.inputs:
            raise ValueError(f"expected input (batch, time, {self.config.inputs}), got {tuple(x.shape)}")
        hidden, _ = self.lstm(x)
        return self.readout(hidden)

    def checkpoint(self) -> dict[str, Any]:
        return {"kind": "lstm", "config": asdict(self.config), "state_dict": self.state_dict()}
