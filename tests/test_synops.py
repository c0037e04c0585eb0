"""Synaptic operations against hand-computed values and brute-force loop counts."""

from __future__ import annotations

import itertools

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.errors import MetricError, UnsupportedLayerError
from neuromark.metrics.complexity import SynapticOperations
from neuromark.models.torch_model import TorchModel


def run_synops(module: nn.Module, data: torch.Tensor, targets: torch.Tensor | None = None) -> dict:
    targets = torch.zeros(len(data)) if targets is None else targets
    return dict(Benchmark(module, [(data, targets)], metrics=[SynapticOperations()],
                          quiet=True).run())["synaptic_operations"]


def test_linear_hand_computed():
    layer = nn.Linear(3, 2, bias=True)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]]))
    # column non-zeros: [1, 0, 2]; spikes in {0, 1}
    spikes = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    ops = run_synops(layer, spikes)
    # sample 0: x0 (1 weight) + x1 (0) = 1; sample 1: x0 (1) + x2 (2) = 3; mean = 2
    assert ops == {"Effective_MACs": 0.0, "Effective_ACs": 2.0, "Dense": 6.0}
    analog = torch.tensor([[0.5, 1.0, 0.0], [1.0, 0.0, -2.0]])
    assert run_synops(layer, analog) == {"Effective_MACs": 2.0, "Effective_ACs": 0.0, "Dense": 6.0}
    signed = torch.tensor([[-1.0, 0.0, 1.0]])
    assert run_synops(layer, signed)["Effective_ACs"] == 3.0


def test_binary_check_is_exact_near_one():
    layer = nn.Linear(2, 1, bias=False)
    almost = torch.tensor([[1.0, 1.0 - 2.0 ** -24]])
    assert run_synops(layer, almost)["Effective_MACs"] == 2.0
    bool_in = torch.tensor([[True, False]])
    assert run_synops(layer, bool_in.float())["Effective_ACs"] == 1.0


def brute_conv2d(x: torch.Tensor, w: torch.Tensor, stride: int, padding: int) -> tuple[int, int]:
    """Count multiplications of a conv2d by explicit loops (groups=1, dilation=1)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out_h = (h + 2 * padding - kh) // stride + 1
    out_w = (wd + 2 * padding - kw) // stride + 1
    eff = dense = 0
    for b, oc, i, j, ic, di, dj in itertools.product(range(n), range(o), range(out_h),
                                                      range(out_w), range(c), range(kh), range(kw)):
        r, s = i * stride - padding + di, j * stride - padding + dj
        if 0 <= r < h and 0 <= s < wd:
            dense += 1
            eff += int(x[b, ic, r, s] != 0 and w[oc, ic, di, dj] != 0)
    return eff, dense


@pytest.mark.parametrize("stride,padding", [(1, 0), (1, 1), (2, 1)])
def test_conv2d_matches_brute_force(stride, padding):
    gen = torch.Generator().manual_seed(1)
    conv = nn.Conv2d(2, 3, 3, stride=stride, padding=padding)
    with torch.no_grad():
        conv.weight.mul_(torch.rand(conv.weight.shape, generator=gen) > 0.4)
    x = (torch.rand(2, 2, 6, 5, generator=gen) > 0.6).float()
    eff, dense = brute_conv2d(x, conv.weight, stride, padding)
    ops = run_synops(conv, x)
    assert ops["Effective_ACs"] == eff / 2 and ops["Dense"] == dense / 2
    assert ops["Effective_MACs"] == 0.0


def brute_matrix(x: torch.Tensor, w: torch.Tensor) -> int:
    """Effective multiplications of w (out, in) applied to each row of x (rows, in)."""
    return int(sum((x[:, j] != 0).sum() * (w[:, j] != 0).sum() for j in range(w.shape[1])))


def replay_rnn(module: nn.RNNBase, x: torch.Tensor) -> tuple[int, int]:
    """Effective and dense ops of a time-major RNN by stepping its cells by hand."""
    cell_type = {nn.LSTM: nn.LSTMCell, nn.GRU: nn.GRUCell, nn.RNN: nn.RNNCell}[type(module)]
    directions = 2 if module.bidirectional else 1
    eff = dense = 0
    layer_in = x
    for layer in range(module.num_layers):
        outs = []
        for d in range(directions):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            cell = cell_type(layer_in.shape[-1], module.hidden_size)
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                setattr(cell, kind, getattr(module, kind + sfx))
            h = torch.zeros(x.shape[1], module.hidden_size)
            c = torch.zeros_like(h)
            steps = range(x.shape[0]) if d == 0 else reversed(range(x.shape[0]))
            seq = [None] * x.shape[0]
            for t in steps:
                eff += brute_matrix(layer_in[t], cell.weight_ih) + brute_matrix(h, cell.weight_hh)
                dense += h.shape[0] * (cell.weight_ih.numel() + cell.weight_hh.numel())
                if isinstance(cell, nn.LSTMCell):
                    h, c = cell(layer_in[t], (h, c))
                else:
                    h = cell(layer_in[t], h)
                seq[t] = h
            outs.append(torch.stack(seq))
        layer_in = torch.cat(outs, dim=-1)
    return eff, dense


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU, nn.RNN])
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True)])
def test_full_recurrent_layers_match_cell_replay(kind, layers, bidirectional):
    torch.manual_seed(0)
    rnn = kind(4, 5, num_layers=layers, bidirectional=bidirectional, batch_first=True)
    with torch.no_grad():
        rnn.weight_hh_l0.mul_(torch.rand(rnn.weight_hh_l0.shape) > 0.5)
    x = torch.relu(torch.randn(3, 6, 4))  # batch-first, with zeros
    eff, dense = replay_rnn(rnn, x.transpose(0, 1))
    ops = run_synops(rnn, x)
    assert ops["Effective_MACs"] + ops["Effective_ACs"] == pytest.approx(eff / 3, rel=1e-12)
    assert ops["Dense"] == dense / 3


def test_cells_count_both_matrices():
    cell = nn.GRUCell(3, 2)
    x = torch.tensor([[1.0, 0.0, 1.0]])
    ops = run_synops(cell, x)  # h0 = zeros: no effective hidden ops
    assert ops["Effective_ACs"] == 2 * 6 and ops["Effective_MACs"] == 0
    assert ops["Dense"] == 6 * 3 + 6 * 2


def test_a_layer_without_a_wrapper_is_counted_by_interception():
    # ConvTranspose2d (was: UnsupportedLayerError): every input element meets every weight
    net = nn.Sequential(nn.ConvTranspose2d(1, 2, 2))
    ops = run_synops(net, torch.ones(1, 1, 3, 3))
    assert ops == {"Effective_MACs": 0.0, "Effective_ACs": 9 * 2 * 2 * 2.0, "Dense": 72.0}


def test_strict_connection_layers_still_name_an_unknown_weight_layer():
    net = nn.Sequential(nn.ConvTranspose2d(1, 1, 2))
    with pytest.raises(UnsupportedLayerError, match=r"'0' \(ConvTranspose2d\)"):
        TorchModel(net).connection_layers()


def test_nan_input_to_a_layer_is_reported():
    with pytest.raises(MetricError, match="batch 0: connection layer 'Linear' received NaN"):
        Benchmark(nn.Linear(2, 1), [(torch.tensor([[float("nan"), 1.0]]), torch.zeros(1))],
                  metrics=[SynapticOperations()], quiet=True).run()


class ReusedBuffer(nn.Module):
    """Feeds every timestep through ONE preallocated input buffer, changed in place."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, 3)
        buf = torch.empty_like(x[:, 0])
        outs = []
        for x_t in x.unbind(1):
            buf.copy_(x_t)
            outs.append(self.fc(buf))
        buf.zero_()
        return torch.stack(outs, 1)


def test_calls_are_counted_one_by_one_even_with_a_reused_input_buffer():
    net = ReusedBuffer()
    # step 0 spikes (2 non-zeros), step 1 analog (3 non-zeros), step 2 all zero
    x = torch.tensor([[[1.0, 0.0, 1.0], [0.5, 2.0, -1.0], [0.0, 0.0, 0.0]]])
    ops = run_synops(net, x)
    assert ops == {"Effective_ACs": 2 * 2.0, "Effective_MACs": 3 * 2.0, "Dense": 3 * 6.0}


class CellStep(nn.Module):
    """One cell step on ``[x, h]`` (an LSTM cell's h is ``(h, c)``), as neurobench's tests."""

    def __init__(self, cell: nn.Module) -> None:
        super().__init__()
        self.cell = cell

    def forward(self, batch):
        x, h = batch
        out = self.cell(x, h)
        return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("cell, gates, ours, neurobench", [
    # input 25, hidden 5; x analog, h all ones (spikes); every weight non-zero
    (nn.LSTMCell(25, 5), 4, (500, 100), 615),  # 4*5*25 + 4*5*5 + 3 gate products * 5
    (nn.GRUCell(25, 5), 3, (375, 75), 465),  # 3*5*25 + 3*5*5 + 3 * 5
    (nn.RNNCell(25, 5), 1, (125, 25), 150),  # 5*25 + 5*5, no gate products
])
def test_recurrent_cells_both_ways(cell, gates, ours, neurobench):
    x = torch.rand(1, 25, generator=torch.Generator().manual_seed(0)) + 0.1
    h = torch.ones(1, 5)
    data = [x, (h, h) if isinstance(cell, nn.LSTMCell) else h]

    def count(**options) -> dict:
        res = Benchmark(TorchModel(CellStep(cell)), [(data, torch.zeros(1))],
                        metrics=[SynapticOperations(**options)], quiet=True).run()
        return dict(res)["synaptic_operations"]

    # ours: per matrix (x analog -> MACs, h spikes -> ACs); no gate products
    assert count() == {"Effective_MACs": ours[0], "Effective_ACs": ours[1],
                       "Dense": gates * 5 * 25 + gates * 5 * 5}
    # neurobench 2.3.0: gate products counted, MAC/AC for the whole cell from x alone
    nb = count(recurrent_gates=True, cell_mac_rule="input")
    assert nb["Effective_MACs"] == neurobench and nb["Effective_ACs"] == 0
    with pytest.raises(ValueError, match="cell_mac_rule"):
        SynapticOperations(cell_mac_rule="x")


def test_connection_sparsity_recurrent_biases_option():
    from neuromark.metrics.static import ConnectionSparsity

    cell = nn.RNNCell(2, 2)
    with torch.no_grad():
        cell.weight_ih.zero_()
        cell.bias_ih.fill_(1.0)
        cell.bias_hh.fill_(1.0)
    adapter = TorchModel(cell)
    assert ConnectionSparsity().compute(adapter).value == 4 / 8
    assert ConnectionSparsity(recurrent_biases=True).compute(adapter).value == 4 / 12
