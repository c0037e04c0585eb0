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


# -- recurrent layers: Dense and effective counts by hand, for both reset functions ----------
HIDDEN, OUT, STEPS, BATCH = 4, 3, 6, 2


def _reset_fn(reset: str):
    from sinabs.activation import MembraneSubtract
    return MembraneSubtract() if reset == "subtract" else MembraneReset()


def _recurrent(kind: str, reset: str, weight: float) -> nn.Module:
    """LIFRecurrent (tau_mem 2) or IAFRecurrent with rec_connect Linear(HIDDEN, HIDDEN)
    (weights ``weight``, no bias), one spike at most per step, no input normalisation."""
    rec = nn.Linear(HIDDEN, HIDDEN, bias=False)
    with torch.no_grad():
        rec.weight.fill_(weight)
    kw = {"rec_connect": rec, "spike_fn": SingleSpike, "reset_fn": _reset_fn(reset)}
    if kind == "LIFRecurrent":
        return sl.LIFRecurrent(tau_mem=2.0, norm_input=False, **kw)
    return sl.IAFRecurrent(**kw)


def _synops(net: nn.Module, x: torch.Tensor) -> dict[str, float]:
    from neuromark import Benchmark
    from neuromark.metrics.complexity import SynapticOperations
    res = Benchmark(SinabsModel(net), [(x, torch.zeros(len(x)))],
                    metrics=[SynapticOperations()], quiet=True).run()
    return res["synaptic_operations"]


@pytest.mark.parametrize("kind", ["LIFRecurrent", "IAFRecurrent"])
@pytest.mark.parametrize("reset", ["subtract", "zero"])
def test_recurrent_layer_counts_hand_counted_for_each_reset(kind, reset):
    # Linear(HIDDEN, HIDDEN) weights 20 on binary x (sample 0's input 0 off at even steps:
    # 45 non-zeros), the recurrent layer (rec_connect weights 0.001; inputs of 60 or 80 fire
    # every neuron every step under both resets), Linear(HIDDEN, OUT), IAF. Sinabs applies
    # rec_connect to each step's spikes at the end of that step (the last step's too).
    # Per sample: Dense per step 16 + 16 + 12; ACs 45 x 4 over the batch + 6 x 16 + 6 x 12.
    net = nn.Sequential(nn.Linear(HIDDEN, HIDDEN, bias=False), _recurrent(kind, reset, 0.001),
                        nn.Linear(HIDDEN, OUT, bias=False), sl.IAF(reset_fn=_reset_fn(reset)))
    with torch.no_grad():
        net[0].weight.fill_(20.0)
    x = torch.ones(BATCH, STEPS, HIDDEN)
    x[0, ::2, 0] = 0.0
    hidden = SinabsModel(net[:2])
    hidden.reset_state()
    with torch.no_grad():
        assert hidden(x).sum() == BATCH * STEPS * HIDDEN  # all fire at every step
    got = _synops(net, x)
    assert got["Dense"] == STEPS * (HIDDEN * HIDDEN * 2 + HIDDEN * OUT) == 264
    assert got["Effective_ACs"] == pytest.approx(45 * HIDDEN / BATCH + STEPS * HIDDEN * HIDDEN
                                                 + STEPS * HIDDEN * OUT)  # 258
    assert got["Effective_MACs"] == 0.0


@pytest.mark.parametrize("kind", ["LIFRecurrent", "IAFRecurrent"])
@pytest.mark.parametrize("reset", ["subtract", "zero"])
def test_recurrence_carried_from_step_to_step(kind, reset):
    # input 1.5 at step 0 only; rec_connect weights 0.3: every later step gets 4 x 0.3 = 1.2
    # from the last spikes, above threshold 1 under both resets, so all neurons fire at all
    # 6 steps (Sinabs' own whole-sequence output). Sinabs starts each call's recurrent input
    # from zero: fed one step per call, the recurrence was lost (1 spike per neuron, not 6)
    # and rec_connect counted 1 x 16 ACs per sample, not 6 x 16.
    layer = _recurrent(kind, reset, 0.3)
    x = torch.zeros(BATCH, STEPS, HIDDEN)
    x[:, 0] = 1.5
    with torch.no_grad():
        layer.reset_states()
        own = layer(x)
        adapter = SinabsModel(nn.Sequential(layer))
        adapter.reset_state()
        stepped = adapter(x)
    assert own.sum() == BATCH * STEPS * HIDDEN
    assert torch.equal(stepped, own)
    net = nn.Sequential(layer, nn.Linear(HIDDEN, OUT, bias=False), sl.IAF())
    got = _synops(net, x)
    assert got["Dense"] == STEPS * (HIDDEN * HIDDEN + HIDDEN * OUT) == 168
    assert got["Effective_ACs"] == STEPS * (HIDDEN * HIDDEN + HIDDEN * OUT) == 168


@pytest.mark.parametrize("kind", ["ALIF", "ALIFRecurrent", "LIFSqueeze", "IAFSqueeze"])
def test_layers_not_stepped_refused_by_name(kind):
    # ALIF (not a LIF subclass) was neither reset nor recorded; its rec_connect still counted
    from neuromark.errors import UnsupportedLayerError
    if kind == "ALIFRecurrent":
        layer = sl.ALIFRecurrent(tau_mem=2.0, tau_adapt=4.0, rec_connect=nn.Linear(2, 2))
    elif kind == "ALIF":
        layer = sl.ALIF(tau_mem=2.0, tau_adapt=4.0)
    elif kind == "LIFSqueeze":
        layer = sl.LIFSqueeze(tau_mem=2.0, batch_size=1)
    else:
        layer = sl.IAFSqueeze(batch_size=1)
    with pytest.raises(UnsupportedLayerError, match=rf"'1' \({kind}\)"):
        SinabsModel(nn.Sequential(nn.Linear(2, 2), layer))
