"""The torch counting path (``instrument/deferred.py``), forced on CPU: equal to the numba
kernels in float32/float64, to brute force in float16/bfloat16, exact in the in-place
cases, and the same under the memory-budget fallback."""

from __future__ import annotations

import warnings

import pytest
import torch
from conftest import CountingLIF
from test_instrument import CellLoop, brute_force, lif_net, matrix_ops
from torch import nn

from neuromark import Benchmark
from neuromark.errors import MetricError
from neuromark.instrument.deferred import resolve_budget, resolve_counting_path
from neuromark.instrument.probes import Instrument
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def run(model, data: torch.Tensor, path: str = "auto", budget: int | None = None,
        cell_rule: bool = False, split: bool = True) -> dict:
    """The complexity figures of one run over two batches (one unless ``split``), counted
    on ``path``; synaptic operations only, with neurobench's cell rule (and its per-call
    MAC/AC rule), when ``cell_rule`` (a model of cells without neuron layers)."""
    synops = SynapticOperations(recurrent_gates=True, cell_mac_rule="input",
                                mac_rule="per_call") if cell_rule else SynapticOperations()
    metrics = [synops] if cell_rule else [synops, ActivationSparsity(), MembraneUpdates()]
    if not any(isinstance(m, (nn.ReLU, CountingLIF)) for m in model_module(model).modules()):
        metrics = [synops]
    half = len(data) // 2 if split else len(data)
    batches = [(data[:half], torch.zeros(half)), (data[half:], torch.zeros(len(data) - half))]
    batches = batches if split else batches[:1]
    Instrument.counting_path, Instrument.memory_budget = path, budget
    try:
        return dict(Benchmark(model, batches, metrics=metrics, quiet=True).run())
    finally:
        Instrument.counting_path = Instrument.memory_budget = None


def model_module(model) -> nn.Module:
    return model.module if hasattr(model, "module") else model


def spikes(*shape: int, dtype: torch.dtype = torch.float32, graded: bool = False,
           seed: int = 1) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(*shape, generator=gen) < 0.3).double()
    if graded:
        x = x * torch.rand(*shape, generator=gen, dtype=torch.float64) * 2
    return x.to(dtype)


class FullRecurrent(nn.Module):
    """A full RNN/LSTM/GRU of two layers; ``hx`` omitted (zero state)."""

    def __init__(self, kind: type, bidirectional: bool) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.rnn = kind(5, 4, num_layers=2, batch_first=True, bidirectional=bidirectional)
        with torch.no_grad():
            self.rnn.weight_ih_l0.mul_(torch.rand(self.rnn.weight_ih_l0.shape) > 0.4)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.rnn(x)[0])


def conv_snn(dims: int) -> nn.Module:
    conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dims]
    torch.manual_seed(0)
    return nn.Sequential(conv(2, 3, 3, padding=1), CountingLIF(), conv(3, 2, 2, stride=2),
                         CountingLIF(), nn.Flatten(), nn.Linear(2 * 3**dims, 3), CountingLIF())


def linear_snn() -> nn.Module:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(12, 9), CountingLIF(), nn.Linear(9, 4), CountingLIF())
    with torch.no_grad():
        net[0].weight.mul_(3)
    return net


def cases(dtype: torch.dtype) -> dict:
    """(model, data) per counted layer type."""
    made = {
        "linear_snn": (SNNTorchModel(linear_snn().to(dtype)), spikes(6, 7, 12, dtype=dtype)),
        "linear_loop": (TorchModel(lif_net(dtype)), spikes(6, 7, 12, dtype=dtype, graded=True)),
    }
    for dims in (1, 2, 3):
        made[f"conv{dims}d"] = (SNNTorchModel(conv_snn(dims).to(dtype)),
                                spikes(4, 3, 2, *(6,) * dims, dtype=dtype, seed=dims))
    for kind in (nn.RNNCell, nn.GRUCell, nn.LSTMCell):
        torch.manual_seed(0)
        made[kind.__name__] = (TorchModel(CellLoop(kind(5, 3)).to(dtype)),
                               spikes(4, 6, 5, dtype=dtype, graded=kind is nn.GRUCell))
    for kind in (nn.RNN, nn.LSTM, nn.GRU):
        made[kind.__name__] = (TorchModel(FullRecurrent(kind, kind is nn.GRU).to(dtype)),
                               spikes(4, 6, 5, dtype=dtype))
    return made


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_torch_path_equals_the_kernels_for_every_layer_type(dtype):
    for name, (model, data) in cases(dtype).items():
        cell_rule = name.endswith("Cell")
        kernels = run(model, data, "auto", cell_rule=cell_rule)
        forced = run(model, data, "torch", cell_rule=cell_rule)
        assert forced == kernels, name
        assert kernels["synaptic_operations"]["Effective_ACs"] \
            + kernels["synaptic_operations"]["Effective_MACs"] > 0, name


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_torch_path_equals_brute_force_in_half_precision(dtype):
    data = spikes(6, 10, 12, dtype=dtype)
    net = lif_net(dtype)
    ours = run(net, data, "torch", split=False)
    expected = brute_force(net, data)
    assert ours["synaptic_operations"]["Effective_ACs"] == expected["Effective_ACs"] > 0
    assert ours["synaptic_operations"]["Effective_MACs"] == 0.0
    assert ours["activation_sparsity"] == expected["activation_sparsity"]
    assert ours["membrane_updates"] == expected["membrane_updates"] > 0
    graded = spikes(6, 10, 12, dtype=dtype, graded=True)
    cell = CellLoop(nn.GRUCell(12, 3)).to(dtype)
    ops = run(TorchModel(cell), graded, "torch", cell_rule=True)["synaptic_operations"]
    gates = 3 * 3  # gate products per row: 3 x hidden
    assert ops["Effective_MACs"] == sum(
        matrix_ops(x, cell.cell.weight_ih) + len(x) * gates
        + (0 if h is None else matrix_ops(h, cell.cell.weight_hh)) for x, h in cell.seen) / 6


class ReusedBuffers(nn.Module):
    """Copies each step into one input buffer and writes its spikes into one output
    buffer, both rewritten in place every step."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc, self.lif, self.out = nn.Linear(12, 6), CountingLIF(), nn.Linear(6, 2)
        self.buffer = torch.zeros(3, 12)
        self.spikes = torch.zeros(3, 6)
        self.seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for x_t in x.unbind(1):
            self.buffer.copy_(x_t)
            self.spikes.copy_(self.lif(self.fc(self.buffer)))
            self.seen.append((self.buffer.clone(), self.spikes.clone()))
            outs.append(self.out(self.spikes))
        return torch.stack(outs, 1)


def test_reused_buffers_count_every_call_on_its_own():
    net = ReusedBuffers()
    with torch.no_grad():
        net.fc.weight.mul_(4)
    data = spikes(6, 5, 12)
    ops = run(TorchModel(net), data, "torch")["synaptic_operations"]
    expected = sum(matrix_ops(x, net.fc.weight) + matrix_ops(s, net.out.weight)
                   for x, s in net.seen[-10:]) / 6  # the measured run's 2 batches x 5 steps
    assert ops["Effective_ACs"] == expected > 0
    assert run(TorchModel(net), data, "auto") == run(TorchModel(net), data, "torch")


class ZeroesAWeight(nn.Module):
    """Zeroes one weight in place between its second and third step."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for t, x_t in enumerate(x.unbind(1)):
            if t == 2:
                with torch.no_grad():
                    self.fc.weight[0, 0] = 0.0  # in place: the weight's version moves
            outs.append(self.fc(x_t))
        return torch.stack(outs, 1)


@pytest.mark.parametrize("path", ["auto", "torch"])
def test_weights_changed_in_place_are_seen_before_the_next_call(path):
    net = ZeroesAWeight()
    nn.init.ones_(net.fc.weight)
    ops = run(TorchModel(net), torch.ones(2, 4, 2), path)["synaptic_operations"]
    # per sample, the first batch 2 + 2 + 1 + 1; the second one 1 + 1 + 1 + 1
    assert ops["Effective_ACs"] == 5.0


class WritesItsInput(nn.Module):
    """Doubles its input batch in place after the layer read it."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.fc(x)
        x.mul_(2)
        return out


def test_a_kept_tensor_written_later_in_the_batch_is_an_error_not_a_miscount():
    data = spikes(4, 4)
    with pytest.raises(MetricError, match="layer 'fc'.*written in place later"):
        run(TorchModel(WritesItsInput()), data.clone(), "torch")
    # counted as each call happens, the same model is exact
    with pytest.warns(UserWarning, match="memory budget"):
        ops = run(TorchModel(WritesItsInput()), data.clone(), "torch", budget=0)
    assert ops["synaptic_operations"]["Effective_ACs"] > 0


@pytest.mark.parametrize("budget", [0, 200])  # every call over it; some kept, then over
def test_memory_budget_fallback_gives_the_same_counts(budget):
    chosen = ("linear_snn", "linear_loop", "conv2d", "GRUCell", "LSTM")
    for name, (model, data) in cases(torch.float32).items():
        if name not in chosen:
            continue
        cell_rule = name.endswith("Cell")
        batched = run(model, data, "torch", cell_rule=cell_rule)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fallback = run(model, data, "torch", budget=budget, cell_rule=cell_rule)
        assert fallback == batched, name
        said = [w for w in caught if "memory budget" in str(w.message)]
        assert len(said) == 1, name  # said once per run


def test_counting_path_and_budget_settings_are_checked():
    from neuromark.context import RunContext
    from neuromark.errors import ConfigError

    with pytest.raises(ValueError, match=r"counting_path is 'gpu'"):
        resolve_counting_path("gpu")
    assert resolve_counting_path("torch") == "torch"
    assert resolve_counting_path(None) == "auto"
    # the environment defaults are read once, when the run context is built
    with pytest.raises(ConfigError, match=r"\$NEUROMARK_COUNTING_PATH is 'gpu'"):
        RunContext.build(environ={"NEUROMARK_COUNTING_PATH": "gpu"})
    with pytest.raises(ConfigError, match="NEUROMARK_COUNT_BUDGET_MB"):
        RunContext.build(environ={"NEUROMARK_COUNT_BUDGET_MB": "lots"})
    assert RunContext.build(environ={"NEUROMARK_COUNT_BUDGET_MB": "1.5"}).memory_budget == 3 * 2**19
    assert RunContext.build(environ={"NEUROMARK_COUNTING_PATH": "torch"}).counting_path == "torch"
    with pytest.raises(ValueError, match="memory_budget"):
        resolve_budget(-1)


@CUDA
def test_cuda_counts_equal_the_cpu_kernels():
    for name, (model, data) in cases(torch.float32).items():
        cpu = run(model, data, "auto")
        model_module(model).cuda()
        try:
            assert run(model, data.cuda(), "auto") == cpu, name
        finally:
            model_module(model).cpu()
