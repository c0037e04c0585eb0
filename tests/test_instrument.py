"""The fused counting kernels and the probes' fast paths against plain torch references."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import CountingLIF
from torch import nn

from neuromark import Benchmark
from neuromark.errors import MetricError, UnsupportedLayerError
from neuromark.instrument.kernels import (
    NO_STATE,
    as_array,
    column_counts_array,
    linear_counts,
    neuron_counts,
)
from neuromark.instrument.wrapping import ForwardWrapper
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel


def torch_linear_reference(x: torch.Tensor, col_nnz: torch.Tensor) -> tuple[float, bool]:
    """(effective ops, spike input) by the definition, in float64 torch ops."""
    x = x.double()
    effective = float(((x != 0).double().reshape(-1, x.shape[-1]).sum(0) * col_nnz.double()).sum())
    return effective, bool(((x == 0) | (x.abs() == 1)).all())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["binary", "signed", "graded"])
def test_linear_kernel_matches_the_definition(dtype, kind):
    gen = torch.Generator().manual_seed(3)
    x = (torch.rand(37, 53, generator=gen) < 0.2).to(dtype)
    if kind == "signed":
        x = x * torch.randint(0, 2, x.shape, generator=gen).to(dtype).mul(2).sub(1)
    elif kind == "graded":
        x = x * torch.rand(x.shape, generator=gen, dtype=dtype)
    col_nnz = torch.randint(0, 9, (53,), generator=gen).double()
    effective, residual = linear_counts(as_array(x).reshape(-1, 1, 53), 0,
                                        column_counts_array(col_nnz, 53 * 8))
    expected, spikes = torch_linear_reference(x, col_nnz)
    assert effective == expected
    assert (residual == 0.0) == spikes == (kind != "graded")


@pytest.mark.parametrize("value", [1.0 - 2.0**-24, 1.0 + 2.0**-23, 2.0**-149, -(1.0 + 2.0**-23),
                                   float("inf"), 3.0e38])
def test_linear_kernel_spike_test_is_exact_at_the_edges(value):
    x = torch.tensor([[1.0, 0.0, value, -1.0]])
    effective, residual = linear_counts(as_array(x)[:, None], 0,
                                        column_counts_array(torch.ones(4), 4))
    assert effective == 3
    assert residual > 0.0  # not a spike input, and not reported as NaN


def test_linear_kernel_reports_nan():
    x = torch.tensor([[1.0, float("nan")]])
    _, residual = linear_counts(as_array(x)[:, None], 0, column_counts_array(torch.ones(2), 2))
    assert residual != residual


def test_linear_kernel_is_exact_beyond_float32_row_sums():
    # a row sum of 3 * 2**23 + 1 is not representable in float32: float64 column counts
    col_nnz = torch.tensor([2.0**23, 2.0**23, 2.0**23 + 1])
    operand = column_counts_array(col_nnz, 2**25)
    assert operand.dtype == np.float64
    effective, _ = linear_counts(np.ones((1, 1, 3), np.float32), 0, operand)
    assert effective == 3 * 2**23 + 1


def test_linear_kernel_reads_strided_rows_and_time_steps():
    gen = torch.Generator().manual_seed(0)
    batch = (torch.rand(5, 7, 11, generator=gen) < 0.3).float()
    col_nnz = torch.arange(11).double()
    operand = column_counts_array(col_nnz, 11 * 10)
    whole = as_array(batch)
    for t in range(7):
        strided = as_array(batch[:, t])  # rows 7 * 11 elements apart
        assert not strided.flags.c_contiguous
        expected, _ = torch_linear_reference(batch[:, t], col_nnz)
        assert linear_counts(whole, t, operand)[0] == expected
        assert linear_counts(strided[:, None], 0, operand)[0] == expected


def test_neuron_kernel_counts_outputs_and_changed_states():
    out = np.array([0.0, 1.0, 0.0, 2.0], np.float32)
    before = np.array([0.5, 0.0, np.nan, 1.0], np.float32)
    after = np.array([0.5, 0.1, np.nan, 1.0], np.float32)
    assert neuron_counts(out, after, before) == (2, 2)  # NaN never equals itself
    assert neuron_counts(out, after, NO_STATE) == (2, 4)  # fresh state: all updated
    assert neuron_counts(NO_STATE, NO_STATE, NO_STATE) == (0, 0)


def test_as_array_declines_what_numpy_cannot_view():
    assert as_array(torch.ones(2, dtype=torch.bfloat16)) is None
    assert as_array(torch.ones(2, dtype=torch.int64)) is None
    assert as_array(torch.ones(2, dtype=torch.complex64).conj()) is None
    assert as_array(torch.ones(2)).dtype == np.float32


class StepLoop(nn.Module):
    """A net stepped by an explicit time loop inside the module (no adapter time steps)."""

    def __init__(self, net: nn.Module, first: bool = True) -> None:
        super().__init__()
        self.net = net
        self.first = first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [self.net(x_t) for x_t in x.unbind(1)]
        return torch.stack([o[0] if self.first else o for o in outs], 1)


def snn(dtype: torch.dtype = torch.float32) -> nn.Module:
    snntorch = pytest.importorskip("snntorch")
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(12, 9), snntorch.Leaky(beta=0.8, init_hidden=True),
                        nn.Linear(9, 4), snntorch.Leaky(beta=0.8, init_hidden=True, output=True))
    with torch.no_grad():
        net[0].weight.mul_(3)
        net[0].weight[:, :3] = 0
    return net.to(dtype)


def complexity(model, data: torch.Tensor) -> dict:
    metrics = [SynapticOperations(), ActivationSparsity(), MembraneUpdates()]
    res = dict(Benchmark(model, [(data, torch.zeros(len(data)))], metrics=metrics,
                         quiet=True).run())
    return {key: res[key] for key in ("synaptic_operations", "activation_sparsity",
                                      "membrane_updates")}


def test_time_steps_announced_by_the_adapter_count_like_any_other_input():
    data = (torch.rand(6, 10, 12, generator=torch.Generator().manual_seed(1)) < 0.3).float()
    net = snn()
    announced = complexity(SNNTorchModel(net), data)
    looped = complexity(TorchModel(StepLoop(net)), data)
    assert announced == looped
    assert announced["synaptic_operations"]["Effective_ACs"] > 0


def lif_net(dtype: torch.dtype) -> nn.Module:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(12, 9), CountingLIF(), nn.Linear(9, 4), nn.ReLU())
    with torch.no_grad():
        net[0].weight.mul_(3)
        net[0].weight[:, :3] = 0
    return StepLoop(net.to(dtype), first=False)


def brute_force(net: nn.Module, data: torch.Tensor) -> dict:
    """The three complexity figures of ``net`` by the definitions, with plain torch hooks."""
    ops, zeros, total, updates = [0.0], [0], [0], [0]

    def linear(mod, args, out):
        x = args[0].float()
        ops[0] += float(((x != 0).float().sum(0) * (mod.weight != 0).float().sum(0)).sum())

    def activation(mod, args, out):
        zeros[0] += int((out == 0).sum())
        total[0] += out.numel()

    def before(mod, args):
        mod.previous = mod.mem

    def after(mod, args, out):
        same_shape = mod.previous.shape == mod.mem.shape
        updates[0] += int((mod.mem != mod.previous).sum()) if same_shape else mod.mem.numel()

    handles = []
    for mod in net.modules():
        if isinstance(mod, nn.Linear):
            handles.append(mod.register_forward_hook(linear))
        if isinstance(mod, (CountingLIF, nn.ReLU)):
            handles.append(mod.register_forward_hook(activation))
        if isinstance(mod, CountingLIF):
            handles += [mod.register_forward_pre_hook(before), mod.register_forward_hook(after)]
            mod.reset_state()
    with torch.inference_mode():
        net(data)
    for handle in handles:
        handle.remove()
    n = len(data)
    return {"Effective_ACs": ops[0] / n, "activation_sparsity": zeros[0] / total[0],
            "membrane_updates": updates[0] / n}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])  # kernel and torch paths
def test_complexity_counts_by_the_definitions(dtype):
    # numpy cannot view bfloat16 tensors, so there every probe takes its torch path
    data = (torch.rand(6, 10, 12, generator=torch.Generator().manual_seed(1)) < 0.3).to(dtype)
    net = lif_net(dtype)
    ours = complexity(net, data)
    expected = brute_force(net, data)
    assert ours["synaptic_operations"]["Effective_ACs"] == expected["Effective_ACs"] > 0
    assert ours["synaptic_operations"]["Effective_MACs"] == 0.0
    assert ours["activation_sparsity"] == expected["activation_sparsity"]
    assert ours["membrane_updates"] == expected["membrane_updates"] > 0
    assert complexity(net, data) == ours  # counting is deterministic


class Plastic(nn.Module):
    """Zeroes the first input column of its weight, in place, after its second call."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1, bias=False)
        nn.init.ones_(self.fc.weight)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.stack([self.fc(x_t) for x_t in x.unbind(1)], 1)
        return out

    def step(self) -> None:
        self.calls += 1
        if self.calls == 2:
            self.fc.weight[0, 0] = 0.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])  # kernel and torch paths
def test_weights_changed_in_place_during_a_run_are_followed(dtype):
    net = Plastic().to(dtype)
    net.fc.register_forward_hook(lambda *_: net.step())
    ops = dict(Benchmark(net, [(torch.ones(1, 4, 2, dtype=dtype), torch.zeros(1))],
                         metrics=[SynapticOperations()], quiet=True).run())["synaptic_operations"]
    # calls 1-2 see two non-zero weights, calls 3-4 one: 2 + 2 + 1 + 1
    assert ops["Effective_ACs"] == 6.0


def test_weight_storage_replaced_during_a_batch_is_an_error():
    net = Plastic()
    calls = []

    def swap(*_: object) -> None:  # ``.data =`` does not bump the weight's version
        calls.append(1)
        if len(calls) == 2:
            net.fc.weight.data = torch.zeros(1, 2)

    net.fc.register_forward_hook(swap)
    with pytest.raises(MetricError, match="weight storage of connection layer 'fc' was replaced"):
        Benchmark(net, [(torch.ones(1, 4, 2), torch.zeros(1))], metrics=[SynapticOperations()],
                  quiet=True).run()


def test_wrappers_keep_user_hooks_and_are_removed_after_the_run():
    net = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    seen = []
    net[0].register_forward_hook(lambda mod, args, out: seen.append(out.shape))
    own = net[1].forward
    net[1].__dict__["forward"] = own  # an instance-level forward set by the user
    Benchmark(net, [(torch.ones(4, 3), torch.zeros(4))],
              metrics=[SynapticOperations(), ActivationSparsity()], quiet=True).run()
    assert seen == [torch.Size([4, 2])]
    assert "forward" not in net[0].__dict__
    assert net[1].__dict__["forward"] is own


def test_scripted_modules_are_refused_by_name():
    scripted = torch.jit.script(nn.Linear(2, 2))
    with pytest.raises(UnsupportedLayerError, match="TorchScript"):
        ForwardWrapper(scripted, lambda forward: forward)


class PassedState(nn.Module):
    """snnTorch with ``init_hidden=False``: the loop passes ``mem`` in, by position or name."""

    def __init__(self, by_keyword: bool) -> None:
        super().__init__()
        snntorch = pytest.importorskip("snntorch")
        torch.manual_seed(0)
        self.fc = nn.Linear(5, 4)
        with torch.no_grad():  # neurons 0 and 1 get no input: their membranes stay 0
            self.fc.weight[:2] = 0
            self.fc.bias[:2] = 0
        self.lif = snntorch.Leaky(beta=0.5, init_hidden=False)
        self.by_keyword = by_keyword
        self.seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, 5)
        mem = self.lif.init_leaky()
        outs = []
        for x_t in x.unbind(1):
            cur = self.fc(x_t) * 2
            before = mem
            spk, mem = self.lif(cur, mem=mem) if self.by_keyword else self.lif(cur, mem)
            self.seen.append((before, mem))
            outs.append(spk)
        return torch.stack(outs, 1)


@pytest.mark.parametrize("by_keyword", [False, True])
def test_membrane_passed_in_is_the_state_entering_the_step(by_keyword):
    net = PassedState(by_keyword)
    data = torch.rand(3, 6, 5, generator=torch.Generator().manual_seed(2))
    # its forward loops over time itself: said explicitly (a bare looping net is refused, #45)
    ours = complexity(TorchModel(net), data)["membrane_updates"]
    expected = sum(int((after != before).sum()) if before.shape == after.shape else after.numel()
                   for before, after in net.seen) / len(data)
    assert ours == expected > 0
    assert expected < 6 * 4  # neurons 0 and 1 kept their state: a real comparison was made


def test_only_true_time_slices_are_read_from_the_batch():
    from neuromark.instrument.steps import StepIndex

    data = torch.rand(4, 3, 5)
    index = StepIndex()
    index.announce(data, data.unbind(1), 1)
    assert sorted(index.index.values()) == [0, 1, 2]
    index.announce(data, [s.clone() for s in data.unbind(1)], 1)  # copies, not slices
    assert index.index == {}
    index.announce(data, data.unbind(1)[::-1], 1)  # slices in the wrong order
    assert index.index == {}
    index.announce(data.transpose(0, 1), data.transpose(0, 1).unbind(1), 1)  # not contiguous
    assert index.index == {}


def test_snntorch_adapter_feeds_the_linear_probe_from_the_batch():
    from neuromark.instrument.probes import Instrument

    model = SNNTorchModel(snn())
    data = (torch.rand(2, 4, 12) < 0.5).float()
    hits = []
    with Instrument(model, {"synops"}) as probe, torch.inference_mode():
        model.module[0].register_forward_pre_hook(
            lambda mod, args: hits.append(id(args[0]) in probe._steps.index))
        model(data)
        probe.collect()
    assert hits == [True] * 4
    assert model.step_listeners == []  # detached with the probes


def test_compiled_kernels_are_reused_from_numba_disk_cache(tmp_path):
    import os
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from neuromark.instrument import kernels as K\n"
            "K.linear_counts(np.ones((2, 1, 3), np.float32), 0, np.ones(3, np.float32))\n"
            "K.neuron_counts(*[np.ones((2, 3), np.float32)] * 3)\n"
            "print(sum(len(k.stats.cache_hits) for k in K.compiled()))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert runs == ["0", "2"]  # compiled by the first process, loaded by the second


def test_empty_inputs_count_nothing():
    layer = nn.Linear(3, 2)  # called on (2, 0, 3): two samples of zero rows each
    ops = dict(Benchmark(TorchModel(layer), [(torch.ones(2, 0, 3), torch.zeros(2))],
                         metrics=[SynapticOperations()], quiet=True).run())
    assert ops["synaptic_operations"] == {"Effective_MACs": 0.0, "Effective_ACs": 0.0, "Dense": 0.0}


def test_neuron_kernel_counts_across_chunks():
    from neuromark.instrument._compiled import CHUNK

    rng = np.random.default_rng(0)
    size = 3 * CHUNK + 5  # partial sums per chunk, then a ragged last chunk
    out = (rng.random(size) < 0.4).astype(np.float32)
    before = rng.random(size).astype(np.float32)
    after = before.copy()
    after[rng.random(size) < 0.3] += 1
    assert neuron_counts(out.reshape(-1, 5) if size % 5 == 0 else out, after, before) == (
        int(np.count_nonzero(out)), int(np.count_nonzero(after != before)))


def test_wrappers_are_removed_when_the_model_fails():
    class Failing(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.act = nn.ReLU()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.act(self.fc(x))
            raise RuntimeError("model failed")

    net = Failing()
    with pytest.raises(RuntimeError, match="model failed"):
        Benchmark(net, [(torch.ones(1, 2), torch.zeros(1))],
                  metrics=[SynapticOperations(), ActivationSparsity()], quiet=True).run()
    assert "forward" not in net.fc.__dict__ and "forward" not in net.act.__dict__


def conv_mask_reference(conv: nn.Module, x: torch.Tensor) -> tuple[float, float]:
    """(effective, dense) ops of ``conv`` on ``x`` per sample, by convolving the masks
    forward (an independent computation from the probes' input-side maps)."""
    fn = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d,
          3: torch.nn.functional.conv3d}[len(conv.kernel_size)]
    geometry = (conv.stride, conv.padding, conv.dilation, conv.groups)
    x = x.double()
    effective = fn((x != 0).double(), (conv.weight != 0).double(), None, *geometry).sum()
    dense = fn(torch.ones_like(x), torch.ones_like(conv.weight, dtype=torch.float64), None,
               *geometry).sum()
    return float(effective) / len(x), float(dense) / len(x)


@pytest.mark.parametrize("conv", [
    nn.Conv1d(4, 6, 3, stride=2, padding=1),
    nn.Conv2d(4, 6, 3, padding="same", dilation=2, groups=2),
    nn.Conv2d(4, 4, (2, 3), stride=(2, 1), padding=(1, 0), groups=4),
    nn.Conv3d(4, 2, 2, stride=1, padding=1),
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])  # kernel and torch paths
def test_convolutions_match_the_mask_convolution(conv, dtype):
    gen = torch.Generator().manual_seed(5)
    with torch.no_grad():
        conv.weight.mul_(torch.rand(conv.weight.shape, generator=gen) > 0.5)
    spatial = (7,) * (len(conv.kernel_size))
    x = (torch.rand(3, 4, *spatial, generator=gen) < 0.3).float()
    effective, dense = conv_mask_reference(conv, x)
    ops = dict(Benchmark(conv.to(dtype), [(x.to(dtype), torch.zeros(3))],
                         metrics=[SynapticOperations()], quiet=True).run())["synaptic_operations"]
    assert ops == {"Effective_MACs": 0.0, "Effective_ACs": effective, "Dense": dense}
    graded = x * 0.5
    ops = dict(Benchmark(conv, [(graded.to(dtype), torch.zeros(3))],
                         metrics=[SynapticOperations()], quiet=True).run())["synaptic_operations"]
    assert ops["Effective_MACs"] == effective and ops["Effective_ACs"] == 0.0


def test_conv_snn_time_steps_from_the_batch_count_like_a_loop():
    snntorch = pytest.importorskip("snntorch")
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), snntorch.Leaky(beta=0.9, init_hidden=True),
                        nn.Conv2d(4, 4, 3, stride=2), snntorch.Leaky(beta=0.9, init_hidden=True),
                        nn.Flatten(), nn.Linear(4 * 3 * 3, 3),
                        snntorch.Leaky(beta=0.9, init_hidden=True, output=True))
    data = (torch.rand(5, 6, 2, 8, 8, generator=torch.Generator().manual_seed(3)) < 0.3).float()
    announced = complexity(SNNTorchModel(net), data)
    looped = complexity(TorchModel(StepLoop(net)), data)
    assert announced == looped
    assert announced["synaptic_operations"]["Effective_ACs"] > 0
    torch.manual_seed(0)
    batched = complexity(TorchModel(nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU())), data[:, 0])
    unbatched = complexity(TorchModel(UnbatchedConv()), data[:, 0])  # samples as (C, H, W)
    assert unbatched["synaptic_operations"] == batched["synaptic_operations"]
    assert batched["synaptic_operations"]["Effective_ACs"] > 0


class UnbatchedConv(nn.Module):
    """Feeds each sample to a Conv2d unbatched, as (C, H, W)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(2, 3, 3)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([self.act(self.conv(sample)) for sample in x])


def test_conv_padding_modes_other_than_zeros_are_refused_by_name():
    net = nn.Sequential(nn.Conv2d(1, 1, 3, padding=1, padding_mode="reflect"))
    with pytest.raises(UnsupportedLayerError, match="'0' with padding_mode='reflect'"):
        Benchmark(net, [(torch.ones(1, 1, 4, 4), torch.zeros(1))],
                  metrics=[SynapticOperations()], quiet=True).run()


def test_linear_on_multidimensional_time_steps_counts_every_row():
    layer = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    data = (torch.rand(2, 5, 6, 4, generator=torch.Generator().manual_seed(4)) < 0.4).float()
    # steps of (2, 6, 4): not read from the batch (rows are not the batch's rows)
    stepped = dict(Benchmark(SNNTorchModel(layer), [(data, torch.zeros(2))],
                             metrics=[SynapticOperations()], quiet=True).run())["synaptic_operations"]
    expected = torch_linear_reference(data, (layer[0].weight != 0).sum(0).double())[0] / 2
    assert stepped == {"Effective_MACs": 0.0, "Effective_ACs": expected, "Dense": 5 * 6 * 4 * 3.0}


class CellLoop(nn.Module):
    """Steps a cell over (B, T, in), passing the hidden state (and cell state) back in."""

    def __init__(self, cell: nn.Module, unbatched: bool = False) -> None:
        super().__init__()
        self.cell = cell
        self.unbatched = unbatched
        self.seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        samples = x.unbind(0) if self.unbatched else [x]
        outs = []
        for sample in samples:
            state = None
            for x_t in sample.unbind(-2):
                h = None if state is None else (state[0] if isinstance(state, tuple) else state)
                self.seen.append((x_t, h))
                state = self.cell(x_t, state)
            outs.append(state[0] if isinstance(state, tuple) else state)
        return torch.stack(outs) if self.unbatched else outs[0]


def matrix_ops(x: torch.Tensor, weight: torch.Tensor) -> float:
    x = x.float().reshape(-1, weight.shape[1])
    return float(((x != 0).float().sum(0) * (weight != 0).float().sum(0)).sum())


@pytest.mark.parametrize("kind", [nn.RNNCell, nn.GRUCell, nn.LSTMCell])
@pytest.mark.parametrize("dtype,unbatched", [(torch.float32, False), (torch.float32, True),
                                             (torch.bfloat16, False)])
def test_cells_count_both_matrices_by_brute_force(kind, dtype, unbatched):
    torch.manual_seed(0)
    cell = kind(5, 3)
    with torch.no_grad():
        cell.weight_ih.mul_(torch.rand(cell.weight_ih.shape) > 0.4)
    net = CellLoop(cell, unbatched).to(dtype)
    data = (torch.rand(4, 6, 5, generator=torch.Generator().manual_seed(2)) < 0.4).to(dtype)
    ops = dict(Benchmark(net, [(data, torch.zeros(4))], metrics=[SynapticOperations()],
                         quiet=True).run())["synaptic_operations"]
    acs = sum(matrix_ops(x, cell.weight_ih) for x, _ in net.seen)
    macs = sum(matrix_ops(h, cell.weight_hh) for _, h in net.seen if h is not None)
    dense = sum((x.numel() // 5) * (cell.weight_ih.numel() + cell.weight_hh.numel())
                for x, _ in net.seen)
    assert ops == {"Effective_ACs": acs / 4, "Effective_MACs": macs / 4, "Dense": dense / 4}
    assert macs > 0
