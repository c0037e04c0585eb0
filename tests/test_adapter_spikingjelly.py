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
