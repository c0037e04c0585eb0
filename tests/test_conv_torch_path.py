"""Convolutions on the torch counting path (forced on CPU): what each call derives once
(the weight-count maps, dense ops, row width) is derived again when the weight or the
input shape moves, and a neuron output reshaped by ``nn.Flatten`` shares its copy."""

from __future__ import annotations

import pytest
import torch
from conftest import CountingLIF
from torch import nn
from torch.nn.utils import prune

from neuromark import Benchmark
from neuromark.instrument.conv_counter import ConvCounter
from neuromark.instrument.deferred import Copies
from neuromark.instrument.probes import Instrument
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel


def ops(model, batches: list[torch.Tensor], path: str) -> dict:
    """The complexity figures of a run over ``batches`` counted on ``path``."""
    metrics = [SynapticOperations()]
    if any(isinstance(m, CountingLIF) for m in model.module.modules()):
        metrics += [ActivationSparsity(), MembraneUpdates()]
    Instrument.counting_path = path
    try:
        return dict(Benchmark(model, [(x, torch.zeros(len(x))) for x in batches],
                              metrics=metrics, quiet=True).run())
    finally:
        Instrument.counting_path = None


class ChangesItsWeight(nn.Module):
    """A 1x1 Conv1d of weight 1 stepped over (B, T, 1, L); before step 2 its weight is
    zeroed in place, replaced (``weight.data = ...``) or masked (a pruned weight's mask
    zeroed in place): the steps from 2 on count no ops."""

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        self.conv = nn.Conv1d(1, 1, 1, bias=False)
        nn.init.ones_(self.conv.weight)
        if how == "mask":
            prune.identity(self.conv, "weight")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for t, x_t in enumerate(x.unbind(1)):
            if t == 2:
                with torch.no_grad():
                    if self.how == "in place":
                        self.conv.weight.zero_()
                    elif self.how == "replaced":
                        self.conv.weight.data = torch.zeros_like(self.conv.weight)
                    else:
                        self.conv.weight_mask.zero_()
            outs.append(self.conv(x_t))
        return torch.stack(outs, 1)


@pytest.mark.parametrize("how", ["in place", "replaced", "mask"])
def test_a_conv_weight_changed_during_the_batch_is_seen_at_the_next_call(how):
    data = torch.ones(2, 4, 1, 3)
    for path in ("torch", "auto"):
        figures = ops(TorchModel(ChangesItsWeight(how)), [data], path)["synaptic_operations"]
        # per sample: steps 0 and 1 meet 3 weights each, steps 2 and 3 none
        assert figures == {"Effective_MACs": 0.0, "Effective_ACs": 6.0, "Dense": 12.0}, path


class MixedShapes(nn.Module):
    """One Conv2d called on the batch, on one sample unbatched (C, H, W) and on a crop."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        with torch.no_grad():
            self.conv.weight.mul_(torch.rand(self.conv.weight.shape) > 0.5)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        whole = self.act(self.conv(x))
        self.conv(x[0])
        self.conv(x[:, :, 1:, :-2])
        return whole


def test_input_shapes_changing_between_calls_count_like_the_kernels():
    # the crop is a non-contiguous view held by reference: it was once reshaped at the
    # call (a copy, made in inference mode: no version counter to check at the reduction)
    gen = torch.Generator().manual_seed(2)
    data = (torch.rand(5, 2, 6, 6, generator=gen) < 0.3).float()
    batches = [data[:2], data[2:4], data[4:]]  # a smaller last batch too
    torch_path = ops(TorchModel(MixedShapes()), batches, "torch")
    assert torch_path == ops(TorchModel(MixedShapes()), batches, "auto")
    assert torch_path["synaptic_operations"]["Effective_ACs"] > 0
    snn = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), CountingLIF(), nn.Conv2d(3, 2, 2, stride=2),
                        CountingLIF(), nn.Flatten(), nn.Linear(2 * 3 * 3, 3), CountingLIF())
    steps = (torch.rand(5, 4, 2, 6, 6, generator=gen) < 0.3).float()
    batches = [steps[:3], steps[3:]]
    assert ops(SNNTorchModel(snn), batches, "torch") == ops(SNNTorchModel(snn), batches, "auto")


def test_conv_maps_are_derived_once_per_weight_and_shape_on_the_torch_path(monkeypatch):
    derived: list[tuple[int, ...]] = []
    maps = ConvCounter.maps

    def counted(self, sample_shape):
        derived.append(sample_shape)
        return maps(self, sample_shape)

    monkeypatch.setattr(ConvCounter, "maps", counted)
    torch.manual_seed(0)
    snn = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), CountingLIF(), nn.Conv2d(3, 2, 2, stride=2),
                        CountingLIF())
    data = (torch.rand(3, 6, 2, 6, 6, generator=torch.Generator().manual_seed(1)) < 0.3).float()
    ops(SNNTorchModel(snn), [data[:2], data[2:]], "torch")  # 2 batches x 6 steps x 2 layers
    assert derived == [(2, 6, 6), (3, 6, 6)] * 2  # the last batch has another shape


def test_a_reshaped_view_of_the_last_copy_shares_it():
    copies = Copies()
    with torch.inference_mode():  # inference tensors are copied, not held by reference
        out = torch.rand(2, 3, 4, 4)
        held = copies.hold(out)
        assert held.version == -1 and torch.equal(held.tensor, out)
        assert copies.hold(out) is held
        assert copies.hold(out.flatten(1)) is held  # nn.Flatten's view: the same elements
        assert copies.hold(out.view(2, 48)) is held
        # other elements, or the same in another order or type: copied
        for other in (out[1:], out.transpose(2, 3), out.view(torch.int32), out.flatten()[1:]):
            assert copies.hold(other) is not held
