"""ThorEEGMI baselines on EEG trials (250 steps x 62 channels, 2 classes).

- ``eeg_snn``: the challenge's ``EEG_SNN`` (neurobench 2.3.0 ``examples/eeg_mi/model.py``):
  Linear 62 -> 256 -> Leaky -> Linear 256 -> 128 -> Leaky -> Linear 128 -> 2 -> Leaky, all
  ``beta`` 0.9 with the fast-sigmoid surrogate (slope 25); one 62-channel sample per step
  for 250 steps; 49,282 parameters; spike-count readout (``ChooseMaxCount``). The
  challenge trains it with Adam 1e-4, batch 64, 120 epochs, cross-entropy on the spike
  count, seed 42, keeping the best validation epoch. Option ``readout: membrane`` (ours)
  replaces the spiking output layer by two non-spiking leaky integrators (decay ``beta``),
  trained and decoded by their membrane averaged over time, as Cramer et al. (2020) and
  NeuroBench's SNN examples read out SNN classifiers: the output spike count is zero for
  every class at initialisation, so every trial ties and the surrogate gradient of the
  spike-count loss is small; the membrane is graded from the first step (docs/eeg_mi.md).
- ``csp_lda``: the classical reference: common spatial patterns (MNE's ``CSP``,
  ``n_components`` filters, log of the average power) and linear discriminant analysis
  (scikit-learn), fitted on the training trials; run as a torch module (spatial filters,
  log mean power over the trial, one Linear layer).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field
from torch import nn

from neuromark.benchmarks.eeg_mi.reader import CITATION
from neuromark.config import StrictModel
from neuromark.networks.lif import ReadoutStack
from neuromark.networks.series_family import SeriesFamily, SeriesTrain
from neuromark.training.recipe import BatchSize, Epochs, LearningRate


class EEGSNN(ReadoutStack):
    """One time step (B, 62) -> output spikes (B, 2) (``readout="spikes"``) or the leaky
    integrators' membranes (B, 2) (``readout="membrane"``)."""

    chain = ("fc1", "lif1", "fc2", "lif2", "fc3", "lif3")

    def __init__(self, inputs: int = 62, classes: int = 2, hidden: int = 256, beta: float = 0.9,
                 readout: str = "spikes", **_: Any) -> None:
        super().__init__(readout, "eeg_snn")
        import snntorch as snn
        from snntorch import surrogate

        grad = surrogate.fast_sigmoid(slope=25)
        self.fc1, self.fc2 = nn.Linear(inputs, hidden), nn.Linear(hidden, 128)
        self.fc3 = nn.Linear(128, classes)
        self.lif1, self.lif2 = (snn.Leaky(beta=beta, spike_grad=grad, init_hidden=True) for _ in range(2))
        self.lif3 = self.output_layer(
            lambda: snn.Leaky(beta=beta, spike_grad=grad, init_hidden=True, output=True), classes, beta)


class CSPLDA(nn.Module):
    """A trial (B, steps, channels) -> CSP filters (Linear, no bias) -> log mean power
    over time (B, components) -> LDA's decision (Linear) -> logits (B, classes)."""

    def __init__(self, inputs: int = 62, classes: int = 2, n_components: int = 6, **_: Any) -> None:
        super().__init__()
        self.spatial = nn.Linear(inputs, n_components, bias=False)
        self.lda = nn.Linear(n_components, 1 if classes == 2 else classes)

    def forward(self, x: Any) -> Any:
        import torch

        score = self.lda(torch.log(self.spatial(x).pow(2).mean(1)))
        return torch.cat([-score, score], 1) / 2 if score.shape[1] == 1 else score


def fit_csp_lda(config: dict[str, Any], x: np.ndarray, y: np.ndarray, *, seed: int = 0) -> CSPLDA:
    """MNE's CSP (``log=True``) then scikit-learn's LDA on the training trials (B, T, C)."""
    import torch
    from mne.decoding import CSP
    from mne.utils import use_log_level
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    trials = np.ascontiguousarray(x.transpose(0, 2, 1), dtype=np.float64)  # MNE: (trials, channels, times)
    csp = CSP(n_components=config["n_components"], log=True, reg=config.get("reg"))
    with use_log_level("WARNING"):
        features = csp.fit_transform(trials, y)
    lda = LinearDiscriminantAnalysis().fit(features, y)
    net = CSPLDA(config["inputs"], config["classes"], config["n_components"])
    with torch.no_grad():
        net.spatial.weight.copy_(torch.as_tensor(csp.filters_[:config["n_components"]], dtype=torch.float32))
        net.lda.weight.copy_(torch.as_tensor(lda.coef_, dtype=torch.float32))
        net.lda.bias.copy_(torch.as_tensor(lda.intercept_, dtype=torch.float32))
    return net.eval()


class SNNOptions(StrictModel):
    hidden: int = Field(256, ge=1)
    beta: float = Field(0.9, gt=0, le=1)
    readout: Literal["spikes", "membrane"] = Field(
        "spikes", description="spikes: the challenge's LIF output, spike count; membrane: leaky "
        "integrators, membrane mean over time (decode with eval.postprocessor: mean_over_time)")


class CSPOptions(StrictModel):
    n_components: int = Field(6, ge=2, le=62)
    reg: float | None = Field(None, ge=0, le=1, description="covariance shrinkage of MNE's CSP")


class ThorTrain(SeriesTrain):
    """The challenge's recipe: Adam 1e-4, batch 64, 120 epochs, best validation epoch."""

    epochs: Epochs = 120
    batch_size: BatchSize = 64
    lr: LearningRate = 1e-4


EEG_SNN = SeriesFamily("eeg_snn", "step", EEGSNN, SNNOptions, CITATION, True, ThorTrain)
CSP_LDA = SeriesFamily("csp_lda", "closed_form", CSPLDA, CSPOptions, CITATION, False, ThorTrain,
                       fit_arrays=fit_csp_lda)
