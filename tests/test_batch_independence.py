"""Figures are functions of model and data only: footprint, synaptic operations and
activation sparsity are identical at evaluation batch 1, 32 and 120 (torch, snnTorch,
NIR, both counting paths, interception), the per-sample MAC/AC split is hand-computed,
and neurobench's per-call rule stays available as ``mac_rule="per_call"``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from batch_independence import assert_batch_independent, figures, mixed_data
from torch import nn
from torch.nn import functional as F

from neuromark import Benchmark
from neuromark.instrument.kernels import linear_sample_counts
from neuromark.metrics.complexity import SynapticOperations
from neuromark.metrics.static import Footprint
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel

snn = pytest.importorskip("snntorch")


def synops(module: nn.Module | object, batches: list[torch.Tensor], **options) -> dict:
    loader = [(x, torch.zeros(len(x))) for x in batches]
    res = Benchmark(module, loader, metrics=[SynapticOperations(**options)], quiet=True).run()
    return dict(res["synaptic_operations"])


def test_per_sample_split_hand_computed():
    layer = nn.Linear(3, 2, bias=False)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))
    # column non-zeros [1, 0, 2]; sample 0 binary: x0 + x2 = 3 ACs; sample 1 analog:
    # x0 + x2 = 3 MACs (x1 meets no weight)
    batch = torch.tensor([[1.0, 0.0, 1.0], [0.5, 2.0, 1.0]])
    assert synops(layer, [batch]) == {"Effective_MACs": 1.5, "Effective_ACs": 1.5,
                                      "Dense": 6.0}
    # neurobench's rule: one analog sample makes the whole call MACs
    assert synops(layer, [batch], mac_rule="per_call") == {
        "Effective_MACs": 3.0, "Effective_ACs": 0.0, "Dense": 6.0}
    # the per-call rule at batch 1 is the per-sample rule
    assert synops(layer, [batch[:1], batch[1:]], mac_rule="per_call") == synops(layer, [batch])


def test_per_sample_split_over_rows_of_a_sample():
    # (B, T, in) into a Linear: a sample is all its T rows, binary only when all are
    layer = nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        layer.weight.fill_(0.5)  # not ternary: the input alone decides AC or MAC
    x = torch.tensor([[[1.0, 0.0], [0.0, 1.0]],     # binary: 2 ACs
                      [[1.0, 1.0], [0.25, 0.0]]])   # one analog row: 3 MACs
    assert synops(layer, [x]) == {"Effective_MACs": 1.5, "Effective_ACs": 1.0, "Dense": 4.0}


def test_kernel_sample_split_hand_computed():
    x = np.array([[1, 0, 1], [0.5, 0, 0], [1, 1, 0], [0, 0, 0], [-1, 0, 2]],
                 np.float32)[:, None]
    counts = np.array([1, 2, 3], np.float32)
    # one row per sample: ACs 4 + 3 + 0, MACs 1 + 4
    acs, macs, per_sample = linear_sample_counts(x, 0, counts, 1)
    assert (acs, macs) == (7, 5)
    assert per_sample[:, 0].tolist() == [4, 1, 3, 0, 4]
    assert (per_sample[:, 1] == 0).tolist() == [True, False, True, True, False]
    with pytest.raises(ValueError, match="5 rows do not split into samples of 2 rows"):
        linear_sample_counts(x, 0, counts, 2)


def test_bad_mac_rule_is_named():
    with pytest.raises(ValueError, match="mac_rule must be one of"):
        SynapticOperations(mac_rule="per_batch")


def rleaky_net(recurrent: str = "RLeaky") -> nn.Module:
    torch.manual_seed(0)
    neuron = getattr(snn, recurrent)
    extra = {"alpha": 0.8} if recurrent in ("RSynaptic", "Synaptic") else {}
    rec = {"linear_features": 8} if recurrent.startswith("R") else {}
    return nn.Sequential(nn.Linear(6, 8), neuron(beta=0.9, init_hidden=True, **extra, **rec),
                         nn.Linear(8, 3), snn.Leaky(beta=0.9, init_hidden=True)).eval()


@pytest.mark.parametrize("kind", ["RLeaky", "RSynaptic", "Leaky", "Synaptic"])
def test_snntorch_figures_independent_of_the_batch(kind):
    net = rleaky_net(kind)
    with torch.no_grad():
        net[0].weight.mul_(3.0)
    found = assert_batch_independent(SNNTorchModel(net), mixed_data(6))
    params = sum(p.numel() for p in net.parameters()) * 4
    state = {"RLeaky": 2 * 8, "RSynaptic": 3 * 8, "Leaky": 8, "Synaptic": 2 * 8}[kind] + 3
    assert found["footprint"] == params + state * 4 + buffers(net, kind)
    assert 0 < found["activation_sparsity"] < 1


def buffers(net: nn.Module, kind: str) -> int:
    """Bytes of the buffers that are not neuron state (beta, threshold, ...)."""
    state = {"mem", "syn", "spk"}
    return sum(b.numel() * b.element_size() for name, b in net.named_buffers()
               if name.rsplit(".", 1)[-1] not in state)


def test_rleaky_per_call_rule_reproduces_the_batch_dependent_figure():
    net = rleaky_net()
    data = mixed_data(6)
    adapter = SNNTorchModel(net)
    one = figures(adapter, data, 1, "per_call")["synaptic_operations"]
    batched = figures(adapter, data, 32, "per_call")["synaptic_operations"]
    per_sample = figures(adapter, data, 32)["synaptic_operations"]
    assert per_sample == one  # per-sample at any batch = per-call at batch 1
    assert batched["Effective_MACs"] > one["Effective_MACs"]  # analog samples in every batch
    assert batched["Effective_MACs"] + batched["Effective_ACs"] == pytest.approx(
        one["Effective_MACs"] + one["Effective_ACs"], rel=1e-12)


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.act = nn.ReLU()
        self.fc = nn.Linear(3 * 4 * 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.act(self.conv(x)).flatten(1))


@pytest.mark.parametrize("path", ["auto", "torch"])
def test_conv_net_independent_of_the_batch(path):
    data = mixed_data(2 * 4 * 4, steps=1).reshape(-1, 2, 4, 4)
    per_sample = assert_batch_independent(TorchModel(ConvNet()), data, counting_path=path)
    ops = per_sample["synaptic_operations"]
    assert ops["Effective_ACs"] > 0 and ops["Effective_MACs"] > 0
    per_call = figures(TorchModel(ConvNet()), data, 32, "per_call", path)
    assert per_call["synaptic_operations"]["Effective_MACs"] > ops["Effective_MACs"]


@pytest.mark.parametrize("path", ["auto", "torch"])
def test_mlp_over_time_both_paths_agree(path):
    net = nn.Sequential(nn.Linear(6, 7), nn.ReLU(), nn.Linear(7, 2))
    torch.manual_seed(2)
    found = assert_batch_independent(TorchModel(net), mixed_data(6), counting_path=path)
    assert found == figures(TorchModel(net), mixed_data(6), 120, counting_path="auto")


class Functional(nn.Module):
    """A weight used through ``F.linear``: counted by interception."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 6, generator=torch.Generator().manual_seed(4)))
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(F.linear(x, self.w))


@pytest.mark.parametrize("path", ["auto", "torch"])
def test_intercepted_weights_independent_of_the_batch(path):
    found = assert_batch_independent(TorchModel(Functional()), mixed_data(6), counting_path=path)
    ops = found["synaptic_operations"]
    assert ops["Effective_ACs"] > 0 and ops["Effective_MACs"] > 0


class CellNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.cell = nn.GRUCell(6, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = None
        for x_t in x.unbind(1):
            h = self.cell(x_t, h)
        return h


@pytest.mark.parametrize("path", ["auto", "torch"])
def test_cells_and_recurrent_layers_independent_of_the_batch(path):
    data = mixed_data(6)
    for options in ({}, {"cell_mac_rule": "input", "recurrent_gates": True}):
        loader_ops = [synops(TorchModel(CellNet()), list(data.split(b)), **options)
                      for b in (1, 32, 120)]
        assert loader_ops[0] == loader_ops[1] == loader_ops[2]
    assert_batch_independent(TorchModel(Recurrent()), data, counting_path=path)


class Recurrent(nn.Module):
    """A full two-layer LSTM (time-major inside the layer) and a ReLU."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(6)
        self.lstm = nn.LSTM(6, 4, num_layers=2, batch_first=True)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.lstm(x)[0])


def test_all_binary_and_all_analog_inputs_unchanged_by_the_rule():
    net = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2))
    torch.manual_seed(7)
    data = mixed_data(6)
    for part in (data[0::2], data[1::2]):  # spikes only; analog only
        batches = list(part.split(32))
        assert synops(net, batches) == synops(net, batches, mac_rule="per_call")


def test_nir_recurrent_state_counted_once_per_sample():
    nir = pytest.importorskip("nir")
    from neuromark.models.nir_model import from_nir

    n = 4
    graph = nir.NIRGraph(
        nodes={"input": nir.Input(np.array([3])),
               "fc": nir.Affine(np.ones((n, 3)) * 0.6, np.zeros(n)),
               "lif": nir.LIF(tau=np.full(n, 2e-3), r=np.ones(n), v_leak=np.zeros(n),
                              v_threshold=np.ones(n)),
               "rec": nir.Linear(np.eye(n) * 0.5),
               "output": nir.Output(np.array([n]))},
        edges=[("input", "fc"), ("fc", "lif"), ("lif", "rec"), ("rec", "lif"),
               ("lif", "output")])
    graph.nodes["rec"].output_type = {"output": np.array([n])}
    adapter = from_nir(graph, dt=1e-3)
    found = assert_batch_independent(adapter, mixed_data(3) * 4)
    state = adapter.state()
    per_sample = Footprint().compute(adapter).raw["neuron_state"]
    # the LIF's mem and spk, one sample each; the recurrent edge carries the LIF's
    # spikes (the same tensor as its spk: counted once)
    assert any(name.endswith(".recurrent") for name in state)
    assert per_sample == 2 * n * 4
    params = sum(p.numel() * p.element_size() for p in adapter.module.parameters())
    others = sum(b.numel() * b.element_size() for b in adapter.module.buffers())
    assert found["footprint"] == params + others + per_sample
