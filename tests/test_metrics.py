"""Correctness, static and activity metrics on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import CountingLIF
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.base import Step
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates
from neuromark.metrics.correctness import MSE, R2, SMAPE, ClassificationAccuracy
from neuromark.metrics.functional.correctness import smape_terms
from neuromark.metrics.static import ConnectionSparsity, Footprint, ParameterCount
from neuromark.models import as_adapter


def feed(metric, pairs):
    metric.reset()
    for i, (p, t) in enumerate(pairs):
        metric.update(Step(i, torch.as_tensor(p), torch.as_tensor(t), len(t)))
    return metric.compute()


def test_accuracy_from_counts_with_standard_error():
    score = feed(ClassificationAccuracy(), [([1, 2, 3], [1, 2, 0]), ([0], [0])])
    assert score.value == 0.75
    # per-sample values 1,1,0,1: sample sd = 0.5, se = 0.5 / 2
    assert score.error == pytest.approx(0.25)


def test_mse_and_smape_hand_computed():
    # squared errors 1, 4 | 0, 4: per-sample means 2.5 and 2.0
    assert feed(MSE(), [([[1.0, 2.0]], [[0.0, 0.0]]), ([[3.0, 3.0]], [[3.0, 1.0]])]).value == 2.25
    smape = feed(SMAPE(), [([[1.0], [0.0]], [[3.0], [0.0]])])
    # 200*|3-1|/(3+1) = 100 and 0/0 -> 0: mean 50
    assert smape.value == pytest.approx(50.0)
    assert smape.error == pytest.approx(50.0)


def test_smape_nan_counts_as_bound():
    terms = smape_terms(torch.tensor([float("nan"), float("inf"), 2.0]),
                        torch.tensor([1.0, 1.0, -2.0]))
    assert terms.tolist() == [200.0, 200.0, 200.0]
    assert feed(SMAPE(), [([[float("nan")]], [[5.0]])]).value == 200.0
    f64 = torch.float64
    huge = smape_terms(torch.tensor([1e308, -1e308, 1e-320], dtype=f64),
                       torch.tensor([-1e308, 1.0, 0.0], dtype=f64))
    assert huge.tolist() == [200.0, 200.0, 200.0]
    assert smape_terms(torch.tensor([3.0, 0.0]), torch.tensor([1.0, 0.0])).tolist() == [100.0, 0.0]


def test_r2_per_dimension_averaged():
    y = np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 50.0]])
    p = np.array([[1.5, 12.0], [2.0, 18.0], [2.5, 33.0], [4.0, 45.0]])
    expected = np.mean([1 - ((y[:, d] - p[:, d]) ** 2).sum() / ((y[:, d] - y[:, d].mean()) ** 2).sum()
                        for d in range(2)])
    score = feed(R2(), [(p[:2], y[:2]), (p[2:], y[2:])])
    assert score.value == pytest.approx(expected, rel=1e-12)


def test_shape_mismatch_is_reported():
    with pytest.raises(ValueError, match=r"predictions of shape \(2, 1\) do not fit targets of "
                                         r"shape \(2,\)"):
        feed(MSE(), [([[1.0], [2.0]], [1.0, 2.0])])


def test_static_metrics_hand_computed():
    net = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1, bias=False))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
        net[2].weight.copy_(torch.tensor([[0.0, 1.0]]))
    adapter = as_adapter(net)
    assert ParameterCount().compute(adapter).value == 6 + 2 + 2
    assert ConnectionSparsity().compute(adapter).value == pytest.approx(4 / 8)
    assert Footprint().compute(adapter).value == 10 * 4


@pytest.mark.parametrize("metric", [Footprint, ParameterCount, ConnectionSparsity])
def test_static_metrics_refuse_a_bare_module_and_name_as_adapter(metric):
    with pytest.raises(TypeError, match=r"got Linear \(a bare nn\.Module\); wrap the network "
                                        r"with neuromark\.models\.as_adapter"):
        metric().compute(nn.Linear(2, 1))


def test_static_metrics_take_any_object_with_the_adapter_api():
    class Duck:  # duck-typed: no ModelAdapter base class needed
        module = nn.Linear(2, 1, bias=False)
        last_batch_size = None

        def state(self):
            return {}

        def connection_layers(self):
            return [("0", self.module)]

    assert ParameterCount().compute(Duck()).value == 2
    assert Footprint().compute(Duck()).value == 2 * 4
    assert ConnectionSparsity().compute(Duck()).value == 0.0


def test_activation_sparsity_relu_net_by_layer():
    net = nn.Sequential(nn.Linear(2, 2, bias=False), nn.ReLU(), nn.Sequential(nn.Tanh()))
    with torch.no_grad():
        net[0].weight.copy_(torch.eye(2))
    data = torch.tensor([[1.0, -1.0], [-2.0, -3.0]])
    res = Benchmark(net, [(data, torch.zeros(2))], metrics=[ActivationSparsity()], quiet=True).run()
    # ReLU outputs [[1,0],[0,0]] -> 3/4 zero; Tanh of those -> same zeros 3/4
    assert res["activation_sparsity"] == pytest.approx(0.75)
    assert res["activation_sparsity_by_layer"] == {"1": 0.75, "2.0": 0.75}


class InPlaceLIF(CountingLIF):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mem.shape != x.shape:
            self.mem = torch.zeros_like(x)
        self.mem.mul_(0.5).add_(x)
        spk = (self.mem >= 1).float()
        self.mem.sub_(spk)
        return spk


class Loop(nn.Module):
    def __init__(self, neuron: nn.Module) -> None:
        super().__init__()
        self.neuron = neuron

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, T, N)
        return torch.stack([self.neuron(x_t) for x_t in x.unbind(1)], dim=1)


@pytest.mark.parametrize("neuron", [CountingLIF, InPlaceLIF])
def test_membrane_updates_count_changed_neurons(neuron):
    # one sample, 3 steps, 2 neurons; neuron 1 gets no input and keeps mem 0
    x = torch.tensor([[[0.6, 0.0], [0.0, 0.0], [0.9, 0.0]]])
    net = Loop(neuron())
    res = Benchmark(net, [(x, torch.zeros(1)), (x, torch.zeros(1))],
                    metrics=[MembraneUpdates(), ActivationSparsity()], quiet=True).run()
    # step 1 from fresh scalar state: both counted (2) in each batch (reset to a
    # scalar zero). mem0: 0.6, 0.3, 1.05 -> spike -> 0.05: changes each step.
    # step 2: neuron 0 changes, neuron 1 stays 0 -> 1; step 3: 1. Total 4 per sample.
    assert res["membrane_updates"] == 4.0
    assert res["activation_sparsity"] == pytest.approx(5 / 6)


def test_footprint_does_not_depend_on_batch_size():
    snn = pytest.importorskip("snntorch")
    from neuromark.models.snntorch_model import SNNTorchModel

    def footprint(batch: int) -> int:
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(4, 3), snn.Leaky(beta=0.9, init_hidden=True))
        data = torch.rand(8, 5, 4)
        res = Benchmark(SNNTorchModel(net), [(data[i:i + batch], torch.zeros(len(data[i:i + batch])))
                                              for i in range(0, 8, batch)],
                        metrics=[Footprint()], quiet=True).run()
        return res["footprint"]

    small, large = footprint(2), footprint(8)
    assert small == large
    # 15 float32 parameters, Leaky's scalar buffers beta, threshold, graded_spikes_factor
    # (float32) and reset_mechanism_val (int64), and mem for one sample: 3 neurons x 4 bytes
    assert large == 15 * 4 + (3 * 4 + 8) + 3 * 4


def test_mean_error_is_none_for_one_sample():
    assert feed(ClassificationAccuracy(), [([1], [1])]).error is None
    assert math.isclose(feed(ClassificationAccuracy(), [([1, 0], [1, 1])]).error, 0.5)


def _leaky_net(snn):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), snn.Leaky(beta=0.9, init_hidden=True))


def test_footprint_never_multiplies_by_the_batch_outside_the_runner():
    snn = pytest.importorskip("snntorch")
    from neuromark.models.snntorch_model import SNNTorchModel
    from neuromark.models.torch_model import TorchModel

    net = _leaky_net(snn)
    fixed = 15 * 4 + (3 * 4 + 8)  # parameters, Leaky's scalar buffers
    # never ran: snnTorch's fresh mem is empty -> not measured, never a batch figure
    fresh = Footprint().compute(TorchModel(net))
    assert fresh.raw["neuron_state"] is None and fresh.value == fixed
    # example_input measures it: one sample of 3 neurons
    measured = Footprint(example_input=torch.rand(5, 4)).compute(TorchModel(net))
    assert measured.raw["neuron_state"] == 3 * 4 and measured.value == fixed + 3 * 4
    # after a batch-256 run elsewhere: a new adapter and a bare module's adapter agree
    Benchmark(SNNTorchModel(net), [(torch.rand(256, 2, 4), torch.zeros(256))],
              metrics=[Footprint()], quiet=True).run()
    assert net[1].mem.shape == (256, 3)
    assert Footprint().compute(TorchModel(net)).value == fixed + 3 * 4
    assert Footprint().compute(as_adapter(net)).value == fixed + 3 * 4


def test_footprint_of_unbatched_input_counts_the_whole_state():
    snn = pytest.importorskip("snntorch")
    from neuromark.models.torch_model import TorchModel

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(20, 20), snn.Leaky(beta=0.9, init_hidden=True))
    adapter = TorchModel(net)
    with torch.inference_mode():
        adapter(torch.rand(20))  # one sample of shape (20,): state (20,)
    assert adapter.last_batch_size == 1 and adapter.last_batched is False
    assert Footprint().compute(adapter).raw["neuron_state"] == 20 * 4  # not 20 * 4 / 20


class LSTMStep(nn.Module):
    """neurobench's cell tests feed ``[x, (h, c)]``."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.LSTMCell(3, 2)

    def forward(self, batch):
        x, state = batch
        return self.cell(x, state)[0]


def test_torch_model_passes_any_batch_structure_through_and_counting_finds_the_tensors():
    from neuromark.metrics.complexity import SynapticOperations
    from neuromark.models.torch_model import TorchModel

    model = TorchModel(LSTMStep())
    data = [torch.ones(4, 3), (torch.zeros(4, 2), torch.zeros(4, 2))]
    res = Benchmark(model, [(data, torch.zeros(4))], metrics=[SynapticOperations()],
                    quiet=True).run()
    assert model.last_batch_size == 4
    # W_ih (8 x 3) on all-ones input; W_hh (8 x 2) on zeros: dense only
    assert res["synaptic_operations"]["Dense"] == 8 * 3 + 8 * 2
    assert res["synaptic_operations"]["Effective_ACs"] == 8 * 3
    structured = TorchModel(nn.Identity())
    structured({"a": (torch.ones(7, 2),)})
    assert structured.last_batch_size == 7
