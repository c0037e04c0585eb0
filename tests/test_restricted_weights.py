"""Issue 31.2: multiplications by weights restricted to {-1, 0, 1} count as accumulates,
and by powers of two when ``shift_as_ac`` says so; hand counts on both counting paths."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.instrument.probes import Instrument
from neuromark.instrument.weight_values import combine, value_kind
from neuromark.metrics.complexity import SynapticOperations


def tiny_net() -> nn.Module:
    """fc1 3->2 ternary [[1, 0, -1], [0, 1, 1]], fc2 2->1 powers of two [[0.5, -2]]."""
    net = nn.Sequential(nn.Linear(3, 2, bias=False), nn.Linear(2, 1, bias=False))
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[1.0, 0.0, -1.0], [0.0, 1.0, 1.0]]))
        net[1].weight.copy_(torch.tensor([[0.5, -2.0]]))
    return net


#: One sample x = [0.5, 2, 0] (real-valued, not spikes). fc1: x0 meets 1 weight (column 0),
#: x1 one (column 1), x2 is zero: 2 effective ops of 6 dense; its output [0.5, 2] meets
#: both fc2 weights: 2 of 2. By the input rule alone all 4 are MACs.
X = torch.tensor([[0.5, 2.0, 0.0]])


def figures(path: str, **options) -> dict:
    Instrument.counting_path = path
    try:
        metric = SynapticOperations(**options)
        results = Benchmark(tiny_net(), [(X, torch.zeros(1))], metrics=[metric],
                            quiet=True).run()
        return {**results["synaptic_operations"], "details": metric.details()}
    finally:
        Instrument.counting_path = None


@pytest.mark.parametrize("path", ["auto", "torch"])
def test_ternary_layer_counts_accumulates_on_both_paths(path):
    old = figures(path, ternary_as_ac=False)  # neurobench 2.3.0: the input decides
    assert (old["Effective_MACs"], old["Effective_ACs"], old["Dense"]) == (4, 0, 8)
    new = figures(path)
    assert (new["Effective_MACs"], new["Effective_ACs"], new["Dense"]) == (2, 2, 8)
    assert new["details"]["restricted_weights"] == {
        "ternary_as_ac": True, "shift_as_ac": False, "layers_counted_as_ac": {"0": "ternary"}}
    shifted = figures(path, shift_as_ac=True)
    assert (shifted["Effective_MACs"], shifted["Effective_ACs"]) == (0, 4)
    assert shifted["details"]["restricted_weights"]["layers_counted_as_ac"] == {
        "0": "ternary", "1": "power_of_two"}


def test_a_weight_moved_off_ternary_is_seen_at_the_next_batch():
    net = tiny_net()
    metric = SynapticOperations()

    class Move:
        def __iter__(self):
            yield X, torch.zeros(1)
            with torch.no_grad():
                net[0].weight[0, 0] = 0.7  # in place: fc1 is no longer ternary
            yield X, torch.zeros(1)

    ops = Benchmark(net, Move(), metrics=[metric], quiet=True).run()["synaptic_operations"]
    # batch 1: fc1 2 ACs, fc2 2 MACs; batch 2: 4 MACs; per sample over 2 samples
    assert (ops["Effective_MACs"], ops["Effective_ACs"]) == (3, 1)


def test_value_kinds():
    assert value_kind(torch.tensor([-1.0, 0.0, 1.0])) == "ternary"
    assert value_kind(torch.tensor([0.25, -8.0, 0.0, 1.0])) == "power_of_two"
    assert value_kind(torch.tensor([3, -1])) is None  # integers: 3 is no power of two
    assert value_kind(torch.tensor([0.3, 1.0])) is None
    assert value_kind(torch.tensor([float("nan"), 1.0])) is None
    # beyond the first values read for an early answer: the last value decides
    for last, kind in ((1.0, "ternary"), (0.5, "power_of_two"), (3.0, None), (float("nan"), None)):
        w = torch.tensor([-1.0, 0.0, 1.0] * 400 + [last])
        assert value_kind(w) == kind
        assert value_kind(w.reshape(1201, 1).t()) == kind  # not contiguous
    assert value_kind(torch.tensor([0.3] + [1.0] * 100)) is None
    assert combine(["ternary", "power_of_two"]) == "power_of_two"
    assert combine(["ternary", None]) is None and combine([]) is None


def test_an_intercepted_functional_weight_is_classified_by_its_name():
    class Functional(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.tensor([[1.0, 0.0, -1.0], [0.0, 1.0, 1.0]]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return nn.functional.linear(x, self.w)

    metric = SynapticOperations()
    ops = Benchmark(Functional(), [(X, torch.zeros(1))], metrics=[metric],
                    quiet=True).run()["synaptic_operations"]
    assert (ops["Effective_MACs"], ops["Effective_ACs"], ops["Dense"]) == (0, 2, 6)
    assert metric.details()["restricted_weights"]["layers_counted_as_ac"] == {"w": "ternary"}


def test_a_ternary_qat_layer_is_declared_by_its_fake_quant_levels():
    from torch.ao.nn.qat import Linear as QATLinear
    from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver, QConfig

    def qconfig(scheme: torch.qscheme) -> QConfig:
        weight = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-1,
                                        quant_max=1, dtype=torch.qint8, qscheme=scheme)
        return QConfig(activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver),
                       weight=weight)

    def count(scheme: torch.qscheme) -> tuple[float, float, float]:
        layer = QATLinear(3, 2, bias=False, qconfig=qconfig(scheme))
        with torch.no_grad():  # latent floats with fc1's non-zero pattern: 2 effective ops
            layer.weight.copy_(torch.tensor([[0.3, 0.0, -0.2], [0.0, 0.7, 0.1]]))
        ops = Benchmark(nn.Sequential(layer), [(X, torch.zeros(1))],
                        metrics=[SynapticOperations()], quiet=True).run()["synaptic_operations"]
        return ops["Effective_MACs"], ops["Effective_ACs"], ops["Dense"]

    assert count(torch.per_tensor_symmetric) == (0, 2, 6)  # s x {-1, 0, 1}: ACs
    # affine: the levels are s x ({-1, 0, 1} - zero point), e.g. {0, s, 2s}: MACs
    assert count(torch.per_tensor_affine) == (2, 0, 6)


def test_weight_kinds_are_read_once_per_run_and_changes_are_seen(monkeypatch):
    """A weight's kind is read once per run, however many batches; an in-place change, new
    storage, or a write through ``.data`` (which moves neither version nor address) between
    runs is seen by the next run."""
    from neuromark.instrument import weight_values

    reads: list[int] = []
    real = weight_values.value_kind

    def counted(weight):
        reads.append(weight.numel())
        return real(weight)

    monkeypatch.setattr(weight_values, "value_kind", counted)
    net = tiny_net()

    def run(batches: int = 1) -> tuple[int, int]:
        ops = Benchmark(net, [(X, torch.zeros(1))] * batches, metrics=[SynapticOperations()],
                        quiet=True).run()["synaptic_operations"]
        return ops["Effective_MACs"], ops["Effective_ACs"]

    assert run(batches=3) == (2, 2) and sorted(reads) == [2, 6]  # fc1 ternary: ACs; fc2: MACs
    with torch.no_grad():
        net[0].weight[0, 0] = 0.7  # in place: the version moves
    assert run() == (4, 0)
    net[0].weight.data = torch.tensor([[1.0, 0.0, -1.0], [0.0, 1.0, 1.0]])  # new storage
    assert run() == (2, 2)
    net[0].weight.data[0, 0] = 0.7  # through .data: neither version nor address moves
    assert run() == (4, 0)
    net[1].weight.data.zero_()  # fc2's column counts: no effective ops left there
    ops = Benchmark(net, [(X, torch.zeros(1))], metrics=[SynapticOperations()],
                    quiet=True).run()["synaptic_operations"]
    assert ops["Effective_MACs"] + ops["Effective_ACs"] == 2
