"""The first layer's one pass per batch (``LinearCounter._add_from_batch``): a Linear
layer reading the adapter's announced time steps is counted for the whole batch at its
first step, and each step is then looked up; it must give the counts of one kernel pass
per call in every case, the ones where the pass no longer applies included."""

from __future__ import annotations

import pytest
import torch
from conftest import CountingLIF
from test_instrument import matrix_ops
from torch import nn

from neuromark import Benchmark
from neuromark.errors import MetricError
from neuromark.instrument import linear_counter
from neuromark.metrics.complexity import SynapticOperations
from neuromark.models.snntorch_model import SNNTorchModel


class Scales(nn.Module):
    """Multiplies its step input in place before (``when="before"``) or after
    (``"after"``) the Linear layer reads it; zeroes one weight in place at step 2
    (``"weight"``); records what the layer read, and its weight then."""

    def __init__(self, when: str) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc, self.lif, self.out = nn.Linear(6, 4), CountingLIF(), nn.Linear(4, 2)
        with torch.no_grad():
            self.fc.weight.mul_(3)
            self.fc.weight[:, 0] = 0
        self.when = when
        self.step = 0
        self.read: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.spikes: list[torch.Tensor] = []

    def reset_state(self) -> None:
        self.step = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.when == "before" and self.step % 2:
            x.mul_(2)  # graded values: MACs from here
        if self.when == "weight" and self.step == 2:
            with torch.no_grad():
                self.fc.weight[1, 1] = 0.0
        self.read.append((x.clone(), self.fc.weight.detach().clone()))
        hidden = self.fc(x)
        if self.when == "after":
            x.mul_(3)  # after the read: the counts must not see it
        self.step += 1
        spikes = self.lif(hidden)
        self.spikes.append(spikes.clone())
        return self.out(spikes)


def expected_ops(net: Scales, data: torch.Tensor) -> dict:
    """Effective ops per sample by the definition (per sample and step: ACs when the row
    read holds only -1, 0 and 1), over the run's last batch: ``net.fc`` on what it read,
    with its weight then, and ``net.out`` on the spikes."""
    acs = macs = 0.0
    steps = data.shape[1]
    reads = [(x, w) for x, w in net.read[-steps:]]
    reads += [(s, net.out.weight.detach()) for s in net.spikes[-steps:]]
    for x, weight in reads:
        for row in x:
            ops = matrix_ops(row, weight)
            binary = bool(((row == 0) | (row.abs() == 1)).all())
            acs, macs = (acs + ops, macs) if binary else (acs, macs + ops)
    return {"acs": acs / len(data), "macs": macs / len(data)}


def count(net: nn.Module, data: torch.Tensor) -> dict:
    model = SNNTorchModel(net)
    results = Benchmark(model, [(data, torch.zeros(len(data)))], metrics=[
        SynapticOperations()], quiet=True).run()
    ops = results["synaptic_operations"]
    return {"acs": ops["Effective_ACs"], "macs": ops["Effective_MACs"]}


def spikes(*shape: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(3)
    return (torch.rand(*shape, generator=gen) < 0.4).float()


@pytest.mark.parametrize("when", ["none", "before", "after", "weight"])
def test_the_batch_pass_counts_what_each_step_read(when, monkeypatch):
    calls = {"pass": 0, "step": 0}
    step_rows, linear_rows = linear_counter.compiled()[2], linear_counter.compiled()[0]

    def counted_pass(*args):
        calls["pass"] += 1
        return step_rows(*args)

    def counted_step(*args):
        calls["step"] += 1
        return linear_rows(*args)

    original = linear_counter.LinearCounter.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self._step_kernel, self._kernel = counted_pass, counted_step

    monkeypatch.setattr(linear_counter.LinearCounter, "__init__", init)
    data = spikes(3, 5, 6)
    net = Scales(when)
    ops = count(net, data.clone())
    assert ops == expected_ops(net, data)
    assert ops["acs"] > 0
    if when == "before":
        assert ops["macs"] > 0
    assert calls["pass"] == 1  # one pass for the batch, made at its first step
    # per-step calls: the second layer's 5, plus the first layer's once the pass is off
    fallback = {"none": 0, "before": 4, "after": 4, "weight": 3}[when]
    assert calls["step"] == 5 + fallback


def test_an_inference_batch_is_counted_step_by_step_the_same():
    data = spikes(3, 5, 6)
    expected = count(Scales("none"), data.clone())
    with torch.inference_mode():
        frozen = data.clone()  # an inference tensor: no version counter to check
    net = Scales("none")
    assert count(net, frozen) == expected == expected_ops(net, data)


def test_the_pass_holds_no_batch_past_the_batch():
    net = Scales("none")
    model = SNNTorchModel(net)
    bench = Benchmark(model, [(spikes(2, 4, 6), torch.zeros(2))] * 2,
                      metrics=[SynapticOperations()], quiet=True)
    bench.run()
    counters = [c for c in bench._instrument._matrices.values()
                if isinstance(c, linear_counter.LinearCounter)]
    assert counters and all(c._batch is None and c._batch_counts is None for c in counters)


def test_nan_in_one_step_of_the_batch_is_reported_naming_the_layer():
    data = spikes(2, 4, 6)
    data[1, 2, 3] = float("nan")
    with pytest.raises(MetricError, match="batch 0: connection layer 'fc' received NaN"):
        count(Scales("none"), data)
