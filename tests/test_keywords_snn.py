"""The keyword LIF networks' fused training path (one autograd node per layer) against the
step-by-step module, and the training knobs (slope, init_gain, logit_scale)."""

from __future__ import annotations

import pytest
import torch

import neuromark.benchmarks.keywords.models as keywords
from neuromark.benchmarks.keywords.models import LIFNet, gsc_snn


def _stepwise(lif: keywords.LeakyLIF, current: torch.Tensor) -> torch.Tensor:
    return torch.stack([lif(current[:, t]) for t in range(current.shape[1])], dim=1)


@pytest.mark.parametrize("readout", ["sum", "spikes"])
def test_fused_lif_equals_step_module_forward_and_gradients(readout, monkeypatch):
    torch.manual_seed(0)
    net = LIFNet(20, 7, (32, 24), 0.9, readout, slope=5.0, init_gain=3.0)
    net.train()
    x = torch.randint(-1, 2, (3, 25, 20)).float()
    weights = torch.randn(3, 7)
    runs = []
    for path in (keywords.lif_sequence, _stepwise):
        monkeypatch.setattr(keywords, "lif_sequence", path)
        out = net.logits(x)
        grads = torch.autograd.grad((out * weights).sum(), list(net.parameters()))
        runs.append((out.detach(), grads))
    (fused_out, fused_grads), (step_out, step_grads) = runs
    assert torch.equal(fused_out, step_out)
    assert fused_out.abs().sum() > 0  # the net spiked, so the comparison means something
    for fused, step in zip(fused_grads, step_grads, strict=True):
        torch.testing.assert_close(fused, step, rtol=1e-5, atol=1e-6)
    assert any(g.abs().sum() > 0 for g in fused_grads[:-2])  # gradient reached the hidden layers


def test_eval_path_runs_one_step_per_call():
    net = LIFNet(4, 3, (5,), readout="sum").eval()
    calls = []
    net.lifs[0].register_forward_hook(lambda *args: calls.append(1))
    with torch.no_grad():
        net(torch.ones(2, 6, 4))
    assert len(calls) == 6  # probes of the harness see every step


def test_training_knobs():
    torch.manual_seed(0)
    plain = LIFNet(20, 5, (8,), readout="sum")
    torch.manual_seed(0)
    tuned = LIFNet(20, 5, (8,), readout="sum", init_gain=2.0, logit_scale=10.0, slope=5.0)
    torch.testing.assert_close(tuned.fcs[0].weight, 2 * plain.fcs[0].weight)
    torch.testing.assert_close(tuned.output.weight, plain.output.weight)  # a readout with no LIF
    assert tuned.lifs[0].slope == 5.0
    x = torch.randint(-1, 2, (2, 10, 20)).float()
    tuned.fcs[0].load_state_dict(plain.fcs[0].state_dict())
    torch.testing.assert_close(tuned.logits(x), 10.0 * plain.logits(x))
    spiking = gsc_snn(init_gain=2.0, slope=5.0)
    assert spiking.out_lif is not None and spiking.out_lif.slope == 5.0
    with pytest.raises(ValueError, match="beta"):
        LIFNet(beta=1.0)
    with pytest.raises(ValueError, match="logit_scale"):
        LIFNet(logit_scale=0.0)
