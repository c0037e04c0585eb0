"""SpikingJelly adapter: the same 2-layer network as in snnTorch (same weights, hand-mapped
dynamics) gives identical spikes and counts. Runs in its own venv
(scripts/adapter_checks.sh); skipped where SpikingJelly is not installed."""

from __future__ import annotations

import os

import pytest
import torch
from batch_independence import assert_batch_independent, mixed_data
from framework_equivalence import X, assert_same_counts, seeded_weights, snntorch_twin
from torch import nn

from neuromark.models.spikingjelly_model import SpikingJellyModel

if os.environ.get("NEUROMARK_REQUIRE_FRAMEWORK") == "spikingjelly":
    import spikingjelly.activation_based as sj
else:
    sj = pytest.importorskip("spikingjelly.activation_based",
                             reason="SpikingJelly is not installed (its own venv: "
                                    "scripts/adapter_checks.sh spikingjelly)")
from spikingjelly.activation_based import functional, layer, neuron  # noqa: E402


def sj_net(step_mode: str = "s") -> nn.Module:
    # LIF with decay_input=False, hard reset to 0: H = V - V/tau + X, V = H (1 - S):
    # snnTorch Leaky with beta = 1 - 1/tau, reset to zero (tau 2 and 4: beta 0.5 and 0.75)
    net = nn.Sequential(layer.Linear(6, 5), neuron.LIFNode(tau=2.0, decay_input=False,
                                                           v_threshold=1.0, v_reset=0.0),
                        layer.Linear(5, 3), neuron.LIFNode(tau=4.0, decay_input=False,
                                                           v_threshold=1.0, v_reset=0.0))
    functional.set_step_mode(net, step_mode)
    return net


def test_same_counts_as_snntorch():
    net = sj_net()
    twin = snntorch_twin(net, betas=(0.5, 0.75))
    assert_same_counts(SpikingJellyModel(net), twin)


def test_multi_step_network_stepped_with_the_same_outputs():
    net = sj_net("m")
    seeded_weights(net)
    functional.reset_net(net)
    with torch.no_grad():
        direct = net(X.transpose(0, 1)).transpose(0, 1)  # [T, B, F] in, [T, B, F] out
    adapter = SpikingJellyModel(net)
    adapter.reset_state()
    with torch.no_grad():
        assert torch.equal(adapter(X), direct)
    assert direct.sum() > 10
    assert_same_counts(adapter, snntorch_twin(net, betas=(0.5, 0.75)))


def test_state_is_the_post_reset_potential():
    adapter = SpikingJellyModel(sj_net())
    adapter.reset_state()
    with torch.no_grad():
        adapter(X)
    assert set(adapter.state()) == {"1.v", "3.v"}
    assert [layer.cost for layer in adapter.neuron_layers()] == [4.0, 4.0]


def test_figures_independent_of_the_batch():
    # footprint (per-sample neuron state), synaptic operations (per-sample MAC/AC split on
    # half-binary, half-analog data) and activation sparsity at batch 1, 32 and 120
    net = sj_net()
    seeded_weights(net, (3.0, 3.0))
    found = assert_batch_independent(SpikingJellyModel(net), mixed_data(6))
    ops = found["synaptic_operations"]
    assert ops["Effective_ACs"] > 0 and ops["Effective_MACs"] > 0
    assert 0 < found["activation_sparsity"] < 1


@pytest.mark.parametrize("v_reset", [None, 0.0])  # soft (subtract) and hard (zero) reset
def test_recurrent_container_dense_hand_counted(v_reset):
    # LinearRecurrentContainer: rc = Linear(5 + 5, 5) on cat(x[t], y[t-1]) once per step;
    # Linear(6, 5) before, Linear(5, 3) after; X has 30 steps
    from framework_equivalence import dense_synops
    recurrent = layer.LinearRecurrentContainer(neuron.LIFNode(tau=2.0, v_reset=v_reset),
                                               in_features=5, out_features=5)
    net = nn.Sequential(layer.Linear(6, 5), recurrent, layer.Linear(5, 3),
                        neuron.LIFNode(tau=4.0, v_reset=v_reset))
    assert dense_synops(SpikingJellyModel(net)) == 30 * (6 * 5 + 10 * 5 + 5 * 3)


# -- recurrent containers: Dense and effective counts by hand, for every reset ---------------
HIDDEN, OUT, STEPS, BATCH = 4, 3, 6, 2
RESETS = [(None, False), (None, True), (0.0, False), (0.0, True)]  # (v_reset, detach_reset)


def _binary_x() -> torch.Tensor:
    """(BATCH, STEPS, HIDDEN) ones, sample 0's input 0 off at even steps: 45 non-zeros."""
    x = torch.ones(BATCH, STEPS, HIDDEN)
    x[0, ::2, 0] = 0.0
    return x


def _synops(net: nn.Module, x: torch.Tensor) -> dict[str, float]:
    from neuromark import Benchmark
    from neuromark.metrics.complexity import SynapticOperations
    res = Benchmark(SpikingJellyModel(net), [(x, torch.zeros(len(x)))],
                    metrics=[SynapticOperations()], quiet=True).run()
    return res["synaptic_operations"]


def _hidden_spikes(net: nn.Module, x: torch.Tensor, upto: int) -> list[int]:
    """Spikes of the first ``upto`` modules' output per step."""
    functional.reset_net(net)
    with torch.no_grad():
        out = [int(net[:upto](x_t).sum()) for x_t in x.unbind(1)]
    functional.reset_net(net)
    return out


@pytest.mark.parametrize("v_reset,detach_reset", RESETS)
def test_linear_recurrent_container_hand_counted_for_every_reset(v_reset, detach_reset):
    # rc = Linear(HIDDEN + HIDDEN, HIDDEN) on cat(x[t], y[t-1]): the x half 20 (each neuron
    # gets 60 or 80, far above threshold 1: all fire every step, soft or hard reset), the y
    # half 0.001, bias 0; then Linear(HIDDEN, OUT), LIFNode. Per sample: Dense per step
    # 2 HIDDEN x HIDDEN + HIDDEN x OUT; ACs (binary x and spikes): 45 x HIDDEN input ops
    # over the batch, HIDDEN x HIDDEN from y[t-1] after the first step, HIDDEN x OUT.
    lif = neuron.LIFNode(tau=2.0, v_reset=v_reset, detach_reset=detach_reset)
    recurrent = layer.LinearRecurrentContainer(lif, in_features=HIDDEN, out_features=HIDDEN)
    with torch.no_grad():
        recurrent.rc.weight.fill_(0.001)
        recurrent.rc.weight[:, :HIDDEN] = 20.0
        recurrent.rc.bias.zero_()
    net = nn.Sequential(recurrent, layer.Linear(HIDDEN, OUT),
                        neuron.LIFNode(tau=4.0, v_reset=v_reset))
    x = _binary_x()
    assert _hidden_spikes(net, x, 1) == [BATCH * HIDDEN] * STEPS
    got = _synops(net, x)
    assert got["Dense"] == STEPS * (2 * HIDDEN * HIDDEN + HIDDEN * OUT) == 264
    assert got["Effective_ACs"] == pytest.approx(
        45 * HIDDEN / BATCH + (STEPS - 1) * HIDDEN * HIDDEN + STEPS * HIDDEN * OUT)  # 242
    assert got["Effective_MACs"] == 0.0


@pytest.mark.parametrize("v_reset,detach_reset", RESETS)
def test_element_wise_recurrent_container_adds_no_synapse(v_reset, detach_reset):
    # ElementWiseRecurrentContainer(LIFNode, y[t-1] + x[t]) has no weights: only the Linear
    # layers around it count. Linear(HIDDEN, HIDDEN) with weights 20 on binary x, the
    # container (all fire every step), Linear(HIDDEN, OUT), LIFNode. Per sample: Dense
    # STEPS x (16 + 12); ACs 45 x HIDDEN over the batch + STEPS x 12.
    lif = neuron.LIFNode(tau=2.0, v_reset=v_reset, detach_reset=detach_reset)
    recurrent = layer.ElementWiseRecurrentContainer(lif, element_wise_function=lambda y, x: y + x)
    net = nn.Sequential(layer.Linear(HIDDEN, HIDDEN), recurrent, layer.Linear(HIDDEN, OUT),
                        neuron.LIFNode(tau=4.0, v_reset=v_reset))
    with torch.no_grad():
        net[0].weight.fill_(20.0)
        net[0].bias.zero_()
    x = _binary_x()
    assert _hidden_spikes(net, x, 2) == [BATCH * HIDDEN] * STEPS
    got = _synops(net, x)
    assert got["Dense"] == STEPS * (HIDDEN * HIDDEN + HIDDEN * OUT) == 168
    assert got["Effective_ACs"] == pytest.approx(45 * HIDDEN / BATCH + STEPS * HIDDEN * OUT)
    assert got["Effective_MACs"] == 0.0


@pytest.mark.parametrize("kind", ["SpikingLSTM", "SpikingGRU", "SpikingVanillaRNN"])
def test_whole_sequence_spiking_rnns_refused_by_name(kind):
    # they take (T, B, F): fed one (B, F) step at a time they took the batch for time
    from spikingjelly.activation_based import rnn

    from neuromark.errors import UnsupportedLayerError
    net = nn.Sequential(getattr(rnn, kind)(3, 2, num_layers=1))
    with pytest.raises(UnsupportedLayerError, match=rf"'0' \({kind}\).*use {kind}Cell"):
        SpikingJellyModel(net)
