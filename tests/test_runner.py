"""The runner: the API on several model kinds, error reporting, normalisation."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from neuromark import Benchmark
from neuromark.config import parse_yaml
from neuromark.errors import ConfigError, MetricError, ModelOutputError
from neuromark.metrics.base import WorkloadMetric
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.metrics.correctness import MSE, R2, ClassificationAccuracy
from neuromark.metrics.names import build_metrics
from neuromark.metrics.static import ConnectionSparsity, Footprint, ParameterCount
from neuromark.processors.decoding import Argmax


def loader(data: torch.Tensor, targets: torch.Tensor, batch: int = 4, drop_last: bool = False):
    return DataLoader(TensorDataset(data, targets), batch_size=batch, drop_last=drop_last)


ALL = [Footprint, ParameterCount, ConnectionSparsity, ActivationSparsity, SynapticOperations,
       MembraneUpdates]


class GRUClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(3, 8, batch_first=True)
        self.head = nn.Linear(8, 4)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(x)
        return self.head(self.act(out[:, -1]))


class LSTMRegressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(2, 6, num_layers=2, batch_first=True)
        self.head = nn.Linear(6, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.lstm(x)[0][:, -1])


def test_api_on_mlp_cnn_gru_relu():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    cnn = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Flatten(),
                        nn.Linear(2 * 4 * 4, 3))
    cases = [(mlp, torch.randn(10, 6), 6 * 5 + 5 * 3),
             # conv: valid taps per output row/col 2,3,3,2 -> 10*10 per channel pair, x2 channels
             (cnn, torch.randn(10, 1, 4, 4), 2 * 10 * 10 + 32 * 3),
             (GRUClassifier(), torch.randn(10, 5, 3), 5 * (3 * 8 * 3 + 3 * 8 * 8) + 8 * 4)]
    for net, data, dense in cases:
        targets = torch.randint(0, 3, (10,))
        res = Benchmark(net, loader(data, targets), [], [Argmax()],
                        [m() for m in ALL] + [ClassificationAccuracy()], quiet=True).run()
        ops = res["synaptic_operations"]
        assert 0 < ops["Effective_MACs"] <= ops["Dense"]
        assert ops["Dense"] == dense
        assert res["membrane_updates"] == 0.0  # no neuron has a membrane
        assert 0.0 <= res["activation_sparsity"] <= 1.0
        assert res.scores["classification_accuracy"].error is not None


def test_lstm_regressor_with_r2_and_mse():
    torch.manual_seed(0)
    data, targets = torch.randn(12, 4, 2), torch.randn(12, 2)
    res = Benchmark(LSTMRegressor(), loader(data, targets), [], [],
                    [MSE(), R2(), SynapticOperations()], quiet=True).run()
    assert res["MSE"] > 0 and res["r2"] < 1
    # dense per sample: layer 0 4*(4*6*2 + 4*6*6), layer 1 4*(4*6*6*2), head 6*2
    assert res["synaptic_operations"]["Dense"] == 4 * (24 * 2 + 24 * 6) + 4 * (24 * 6 * 2) + 12


def test_snntorch_reset_state_with_init_hidden_false():
    snn = pytest.importorskip("snntorch")
    from neuromark.models.snntorch_model import SNNTorchModel

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.lif = snn.Leaky(beta=0.95, init_hidden=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            spk, _ = self.lif(self.fc(x) * 3)  # mem kept inside the neuron between calls
            return spk

    torch.manual_seed(0)
    model = SNNTorchModel(Net())
    batch = torch.rand(2, 6, 3)
    with torch.inference_mode():
        first = model(batch)
        model.reset_state()
        assert torch.count_nonzero(model.module.lif.mem) == 0
        again = model(batch)
    assert torch.equal(first, again)
    drifted = model(batch)  # without a reset the state carries over
    assert not torch.equal(first, drifted)


def test_targets_after_preprocessing_and_drop_last():
    data = torch.arange(10.0).reshape(10, 1)
    targets = torch.zeros(10, dtype=torch.long)
    net = nn.Linear(1, 2, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[1.0], [-1.0]]))

    def relabel(batch):
        x, _ = batch
        return x, (x[:, 0] > 0).long() * 0  # class 0 always after preprocessing

    res = Benchmark(net, loader(data, targets + 1, batch=4, drop_last=True), [relabel], [Argmax()],
                    [ClassificationAccuracy(), SynapticOperations()], quiet=True).run()
    # preprocessed targets are all 0; the net predicts 0 for x > 0 and class 0 for x == 0
    assert res["classification_accuracy"] == 1.0
    assert res.details["samples"] == 8
    assert res["synaptic_operations"]["Dense"] == 2.0  # per sample, 8 samples seen


class Exploding(WorkloadMetric):
    name = "exploding"

    def reset(self) -> None:
        pass

    def update(self, step) -> None:
        raise RuntimeError("boom")

    def compute(self):
        return 0.0


def test_failing_metric_is_named_and_not_zeroed():
    with pytest.raises(MetricError, match="metric 'exploding' failed on batch 0: boom"):
        Benchmark(nn.Linear(1, 1), [(torch.ones(2, 1), torch.ones(2, 1))],
                  metrics=[Exploding()], quiet=True).run()


def test_nan_output_names_the_batch():
    class NaNOnSecond(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * float("nan") if x[0, 0] > 1 else x

    batches = [(torch.ones(2, 1), torch.ones(2, 1)), (torch.full((2, 1), 2.0), torch.ones(2, 1))]
    with pytest.raises(ModelOutputError, match="batch 1: model output contains NaN"):
        Benchmark(NaNOnSecond(), batches, metrics=[MSE()], quiet=True).run()
    from neuromark.metrics.correctness import SMAPE

    res = Benchmark(NaNOnSecond(), batches, metrics=[SMAPE()], quiet=True).run()
    assert res["sMAPE"] == 100.0  # batch 0 perfect, batch 1 NaN -> 200


def test_prediction_shape_mismatch():
    with pytest.raises(ModelOutputError, match=r"batch 0: postprocessed predictions of shape "
                                               r"\(1,\) do not fit targets of shape \(3,\)"):
        Benchmark(nn.Linear(2, 2), [(torch.ones(3, 2), torch.zeros(3))], [],
                  [lambda out: out.sum(0, keepdim=True)[:, 0]], [ClassificationAccuracy()],
                  quiet=True).run()


def test_unknown_metric_name_in_config():
    cfg = parse_yaml("task: x\nmetrics:\n  - footprint\n  - synaptic_operation\n")
    with pytest.raises(ConfigError, match=r"<config>:4: metrics\[1\]: unknown metric "
                                          r"'synaptic_operation'; did you mean 'synaptic_operations'"):
        build_metrics(cfg.data["metrics"], cfg)
    assert [m.name for m in build_metrics(["footprint", "r2"])] == ["footprint", "r2"]


#: Figures measured with neurobench 2.3.0 on the reference set-up (source:
#: tests/data/reference/neurobench_2_3_0_reference.json, "per_sample" and "static").
NEUROBENCH_FIGURES = {"Effective_ACs": 463011.171875, "Effective_MACs": 0.0, "Dense": 9216000.0,
                      "activation_sparsity": 0.9485391152871622, "membrane_updates": 14800.0,
                      "parameter_count": 92308, "footprint_fresh_bytes": 369272}


def test_reference_network_matches_neurobench_figures():
    """Our counts on the reference set-up equal neurobench 2.3.0's."""
    pytest.importorskip("snntorch")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from reference_net import REFERENCE_JSON, build_reference, reference_figures

    from neuromark.models.snntorch_model import SNNTorchModel
    from neuromark.processors.decoding import ChooseMaxCount

    if REFERENCE_JSON.is_file():  # the embedded figures are the shared file's
        ref = reference_figures()
        assert {**ref["per_sample"], **ref["static"]} | NEUROBENCH_FIGURES == \
            {**ref["per_sample"], **ref["static"]}
    net, data = build_reference()
    res = Benchmark(SNNTorchModel(net), data, [], [ChooseMaxCount()],
                    [m() for m in ALL] + [ClassificationAccuracy()], quiet=True).run()
    ops = res["synaptic_operations"]
    for key in ("Effective_ACs", "Effective_MACs", "Dense"):
        assert ops[key] == pytest.approx(NEUROBENCH_FIGURES[key], rel=1e-6, abs=1e-9)
    for key in ("activation_sparsity", "membrane_updates"):
        assert res[key] == pytest.approx(NEUROBENCH_FIGURES[key], rel=1e-6)
    assert res["parameter_count"] == NEUROBENCH_FIGURES["parameter_count"]
    # fresh footprint + one sample's membrane state (128 + 20 float32 neurons)
    assert res["footprint"] == NEUROBENCH_FIGURES["footprint_fresh_bytes"] + (128 + 20) * 4
