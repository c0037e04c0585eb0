"""NeHAR baselines on WISDM windows (40 steps x 6 channels, 7 classes).

- ``nehar_scnn``: the SCNN of neurobench 2.3.0 ``examples/nehar/SCNN.py`` (the ``main``
  variant; NOT the notebook's ``MaxPool2d`` one of 30,255 parameters): per time step the 6
  channels are the channels of a length-1 signal: Conv1d(6, 200, k=2, padding=4) ->
  MaxPool1d(2) -> Leaky(beta 0.4, threshold 0.002) -> Conv1d(200, 256, k=1) -> MaxPool1d(2)
  -> Leaky(0.3, 0.001) -> flatten (512) -> Linear(512, 7) -> Leaky(0.5, 0.001); 57,647
  parameters; spike-count readout (``ChooseMaxCount``). NeuroBench trains it with Adam
  1e-3, batch 256, 100 epochs, cross-entropy on the spike count.
- ``nehar_ffsnn``: the notebook's FFSNN shape: Linear(6, 32) -> Leaky -> Linear(32, 250) ->
  Synaptic -> Linear(250, 7) -> Synaptic, 10,231 parameters; its decay constants are not
  stated in the facts we have, so ``beta``/``alpha`` are options (ours: 0.9 / 0.8).
- ``nehar_ann``: a small ANN (ours): flatten (240) -> Linear 128 -> ReLU -> Linear 7.
- ``window_stats``: the classical reference (ours): per-channel mean and standard
  deviation of the window (12 features) -> linear discriminant analysis (scikit-learn,
  fitted in closed form), run as a torch module (statistics, then one Linear layer).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field
from torch import nn

from neuromark.benchmarks.activity.wisdm import CITATION
from neuromark.config import StrictModel
from neuromark.networks.lif import ReadoutStack
from neuromark.networks.series_family import SeriesFamily, SeriesTrain
from neuromark.training.recipe import BatchSize, Epochs


class SCNN(nn.Module):
    """One time step (B, 6) -> output spikes (B, classes) (see the module docstring)."""

    def __init__(self, inputs: int = 6, classes: int = 7, **_: Any) -> None:
        super().__init__()
        import snntorch as snn

        self.conv1 = nn.Conv1d(inputs, 200, kernel_size=2, padding=4)
        self.conv2 = nn.Conv1d(200, 256, kernel_size=1)
        self.pool = nn.MaxPool1d(2)
        self.lif1 = snn.Leaky(beta=0.4, threshold=0.002, init_hidden=True)
        self.lif2 = snn.Leaky(beta=0.3, threshold=0.001, init_hidden=True)
        self.fc = nn.Linear(512, classes)
        self.lif_out = snn.Leaky(beta=0.5, threshold=0.001, init_hidden=True, output=True)

    def forward(self, x: Any) -> Any:
        x = self.lif1(self.pool(self.conv1(x.unsqueeze(-1))))
        x = self.lif2(self.pool(self.conv2(x)))
        return self.lif_out(self.fc(x.flatten(1)))[0]


class FFSNN(ReadoutStack):
    """One time step (B, 6) -> output spikes (B, classes), or membranes (``readout="membrane"``)."""

    chain = ("fc1", "lif1", "fc2", "syn2", "fc3", "syn3")

    def __init__(self, inputs: int = 6, classes: int = 7, beta: float = 0.9, alpha: float = 0.8,
                 readout: str = "spikes", **_: Any) -> None:
        super().__init__(readout, "nehar_ffsnn")
        import snntorch as snn

        self.fc1, self.fc2, self.fc3 = nn.Linear(inputs, 32), nn.Linear(32, 250), nn.Linear(250, classes)
        self.lif1 = snn.Leaky(beta=beta, init_hidden=True)
        self.syn2 = snn.Synaptic(alpha=alpha, beta=beta, init_hidden=True)
        self.syn3 = self.output_layer(
            lambda: snn.Synaptic(alpha=alpha, beta=beta, init_hidden=True, output=True), classes, beta)


class WindowANN(nn.Module):
    """A window (B, steps, inputs) -> logits (B, classes)."""

    def __init__(self, inputs: int = 6, steps: int = 40, classes: int = 7, hidden: int = 128,
                 **_: Any) -> None:
        super().__init__()
        self.fc1, self.act = nn.Linear(inputs * steps, hidden), nn.ReLU()
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: Any) -> Any:
        return self.fc2(self.act(self.fc1(x.flatten(1))))


class WindowStats(nn.Module):
    """A window (B, steps, inputs) -> per-channel mean and std (B, 2 inputs) -> Linear
    (LDA's decision function, the feature scaling folded in) -> (B, classes)."""

    def __init__(self, inputs: int = 6, classes: int = 7, **_: Any) -> None:
        super().__init__()
        self.fc = nn.Linear(2 * inputs, classes)

    def forward(self, x: Any) -> Any:
        import torch

        return self.fc(torch.cat([x.mean(1), x.std(1, unbiased=False)], 1))


def window_features(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x.mean(1), x.std(1)], 1)


def fit_window_stats(config: dict[str, Any], x: np.ndarray, y: np.ndarray, *, seed: int = 0) -> WindowStats:
    """LDA (scikit-learn, ``lsqr`` solver with shrinkage) on the window statistics."""
    import torch
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(window_features(x), y)
    net = WindowStats(config["inputs"], config["classes"])
    with torch.no_grad():
        net.fc.weight.copy_(torch.as_tensor(lda.coef_, dtype=torch.float32))
        net.fc.bias.copy_(torch.as_tensor(lda.intercept_, dtype=torch.float32))
    return net.eval()


class NoOptions(StrictModel):
    """No options."""


class FFSNNOptions(StrictModel):
    beta: float = Field(0.9, gt=0, le=1)
    alpha: float = Field(0.8, gt=0, le=1)
    readout: Literal["spikes", "membrane"] = Field(
        "spikes", description="spikes: the notebook's Synaptic output layer, spike count; "
        "membrane (ours): 7 leaky integrators, membrane mean over time (decode with "
        "eval.postprocessor: mean_over_time)")


class ANNOptions(StrictModel):
    hidden: int = Field(128, ge=1)


class NeharTrain(SeriesTrain):
    """NeuroBench's NeHAR recipe: Adam 1e-3, batch 256 (epochs: 100 there)."""

    epochs: Epochs = 100
    batch_size: BatchSize = 256


NEHAR_SCNN = SeriesFamily("nehar_scnn", "step", SCNN, NoOptions, CITATION, True, NeharTrain)
NEHAR_FFSNN = SeriesFamily("nehar_ffsnn", "step", FFSNN, FFSNNOptions, CITATION, True, NeharTrain)
NEHAR_ANN = SeriesFamily("nehar_ann", "window", WindowANN, ANNOptions, CITATION, False, NeharTrain)
WINDOW_STATS = SeriesFamily("window_stats", "closed_form", WindowStats, NoOptions, CITATION, False,
                            NeharTrain, fit_arrays=fit_window_stats)
