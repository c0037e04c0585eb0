"""Sinabs adapter: the same 2-layer network as in snnTorch (same weights, hand-mapped
dynamics) gives identical spikes and counts. Runs in its own venv
(scripts/adapter_checks.sh); skipped where Sinabs is not installed."""

from __future__ import annotations

import os

import pytest
import torch
from batch_independence import assert_batch_independent, mixed_data
from framework_equivalence import X, assert_same_counts, seeded_weights, snntorch_twin
from torch import nn

from neuromark.models.sinabs_model import SinabsModel

if os.environ.get("NEUROMARK_REQUIRE_FRAMEWORK") == "sinabs":
    import sinabs.layers as sl
else:
    sl = pytest.importorskip("sinabs.layers", reason="Sinabs is not installed (its own venv: "
                                                     "scripts/adapter_checks.sh sinabs)")
from sinabs.activation import MembraneReset, SingleSpike  # noqa: E402


def sinabs_net() -> nn.Module:
    # v = alpha v + I (norm_input=False), spike v >= 1, reset to 0 at once: snnTorch Leaky
    # (zero reset) with beta = alpha = exp(-1 / tau_mem)
    def lif(tau: float) -> nn.Module:
        return sl.LIF(tau_mem=tau, norm_input=False, spike_fn=SingleSpike,
                      reset_fn=MembraneReset())

    return nn.Sequential(nn.Linear(6, 5), lif(2.0), nn.Linear(5, 3), lif(4.0))


def test_same_counts_as_snntorch():
    net = sinabs_net()
    betas = tuple(float(net[i].alpha_mem_calculated.detach()) for i in (1, 3))
    adapter = SinabsModel(net)
    assert_same_counts(adapter, snntorch_twin(net, betas=betas))
    assert set(adapter.state()) == {"1.v_mem", "3.v_mem"}
    assert [layer.cost for layer in adapter.neuron_layers()] == [4.0, 4.0]


def test_stepping_gives_sinabs_own_sequence_output():
    net = sinabs_net()
    seeded_weights(net)
    with torch.no_grad():
        for layer in (net[1], net[3]):
            layer.reset_states()
        direct = net(X)  # Sinabs runs the whole (B, T, F) sequence itself
        adapter = SinabsModel(net)
        adapter.reset_state()
        assert torch.equal(adapter(X), direct)
    assert direct.sum() > 10


def test_figures_independent_of_the_batch():
    # footprint (per-sample neuron state), synaptic operations (per-sample MAC/AC split on
    # half-binary, half-analog data) and activation sparsity at batch 1, 32 and 120
    net = sinabs_net()
    seeded_weights(net, (3.0, 3.0))
    found = assert_batch_independent(SinabsModel(net), mixed_data(6))
    ops = found["synaptic_operations"]
    assert ops["Effective_ACs"] > 0 and ops["Effective_MACs"] > 0
    assert 0 < found["activation_sparsity"] < 1


@pytest.mark.parametrize("reset", ["subtract", "zero"])
def test_recurrent_layer_dense_hand_counted(reset):
    # IAFRecurrent with rec_connect Linear(5, 5) once per step; Linear(6, 5) before,
    # Linear(5, 3) after; X has 30 steps. The reset function changes no connection.
    from framework_equivalence import dense_synops
    from sinabs.activation import MembraneSubtract
    reset_fn = MembraneSubtract() if reset == "subtract" else MembraneReset()
    net = nn.Sequential(nn.Linear(6, 5),
                        sl.IAFRecurrent(rec_connect=nn.Linear(5, 5, bias=False),
                                        reset_fn=reset_fn),
                        nn.Linear(5, 3), sl.IAF(reset_fn=reset_fn))
    assert dense_synops(SinabsModel(net)) == 30 * (6 * 5 + 5 * 5 + 5 * 3)
