"""Norse adapter: the same 2-layer network as in snnTorch (same weights, hand-mapped
dynamics) gives identical spikes and counts. Runs in its own venv
(scripts/adapter_checks.sh); skipped where Norse is not installed."""

from __future__ import annotations

import os

import pytest
import torch
from batch_independence import assert_batch_independent, mixed_data
from framework_equivalence import X, assert_same_counts, seeded_weights, snntorch_twin
from torch import nn

from neuromark.errors import UnsupportedLayerError
from neuromark.models.norse_model import NorseModel

if os.environ.get("NEUROMARK_REQUIRE_FRAMEWORK") == "norse":
    import norse.torch as nt
else:
    nt = pytest.importorskip("norse.torch", reason="Norse is not installed (its own venv: "
                                                   "scripts/adapter_checks.sh norse)")


def norse_net() -> nn.Module:
    # LIFBox: v' = v + dt/tau (I - v), z = v' > 1, reset to 0 at once. With dt/tau = 1 - beta:
    # v' = beta v + (1 - beta) I, i.e. snnTorch Leaky (zero reset) with inputs x (1 - beta)
    def cell(rate: float) -> nn.Module:
        return nt.LIFBoxCell(nt.LIFBoxParameters(tau_mem_inv=torch.tensor(rate / 1e-3)), dt=1e-3)

    return nt.SequentialState(nn.Linear(6, 5), cell(0.5), nn.Linear(5, 3), cell(0.25))


def test_same_counts_as_snntorch():
    net = norse_net()
    twin = snntorch_twin(net, betas=(0.5, 0.75), input_scale=(0.5, 0.25),
                         weight_scale=(3.0, 5.0))
    adapter = NorseModel(net)
    assert_same_counts(adapter, twin)
    assert set(adapter.state()) == {"1.v", "3.v"}
    assert [layer.cost for layer in adapter.neuron_layers()] == [4.0, 4.0]


def test_state_is_threaded_explicitly():
    net = norse_net()
    adapter = NorseModel(net)
    with torch.no_grad():
        out = adapter(X)
        state, steps = None, []
        for x_t in X.unbind(1):
            z, state = net(x_t, state)
            steps.append(z)
    assert torch.equal(out, torch.stack(steps, 1))


def test_multi_step_modules_refused_by_name():
    with pytest.raises(UnsupportedLayerError, match=r"'1' \(LIF\).*use LIFCell"):
        NorseModel(nt.SequentialState(nn.Linear(2, 2), nt.LIF()))


def test_figures_independent_of_the_batch():
    # footprint (per-sample neuron state), synaptic operations (per-sample MAC/AC split on
    # half-binary, half-analog data) and activation sparsity at batch 1, 32 and 120
    net = norse_net()
    seeded_weights(net, (3.0, 3.0))
    found = assert_batch_independent(NorseModel(net), mixed_data(6))
    ops = found["synaptic_operations"]
    assert ops["Effective_ACs"] > 0 and ops["Effective_MACs"] > 0
    assert 0 < found["activation_sparsity"] < 1


@pytest.mark.parametrize("v_reset", [0.0, -0.5])
def test_recurrent_cell_dense_hand_counted(v_reset):
    # LIFRecurrentCell(6, 5): input (5 x 6) and recurrent (5 x 5) weights once per step, then
    # Linear(5, 3); X has 30 steps. The reset value changes no connection.
    from framework_equivalence import dense_synops
    params = nt.LIFParameters(v_reset=torch.tensor(v_reset))
    net = nt.SequentialState(nt.LIFRecurrentCell(6, 5, p=params), nn.Linear(5, 3),
                             nt.LIFCell())
    assert dense_synops(NorseModel(net)) == 30 * (6 * 5 + 5 * 5 + 5 * 3)
