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


# -- recurrent cells: Dense and effective counts by hand, for two reset values each --------
IN, HIDDEN, OUT, STEPS, BATCH = 5, 4, 3, 6, 2
EVERY = (True,) * STEPS


def _recurrent_cell(kind: str, reset: float) -> nn.Module:
    """A Norse recurrent cell (IN -> HIDDEN) with reset value ``reset`` (``v_reset``;
    Izhikevich: ``c``); refractory cells with one refractory step (``rho_reset`` 1)."""
    v, one = torch.tensor(reset), torch.tensor(1.0)
    if kind == "LIF":
        return nt.LIFRecurrentCell(IN, HIDDEN, p=nt.LIFParameters(v_reset=v))
    if kind == "LSNN":
        return nt.LSNNRecurrentCell(IN, HIDDEN, p=nt.LSNNParameters(v_reset=v))
    if kind == "LIFEx":
        return nt.LIFExRecurrentCell(IN, HIDDEN, p=nt.LIFExParameters(v_reset=v))
    if kind == "LIFAdEx":
        return nt.LIFAdExRecurrentCell(IN, HIDDEN, p=nt.LIFAdExParameters(v_reset=v))
    if kind == "LIFRefrac":
        p = nt.LIFRefracParameters(lif=nt.LIFParameters(v_reset=v), rho_reset=one)
        return nt.LIFRefracRecurrentCell(IN, HIDDEN, p=p)
    if kind == "LIFAdExRefrac":
        p = nt.LIFAdExRefracParameters(lif_adex=nt.LIFAdExParameters(v_reset=v), rho_reset=one)
        return nt.LIFAdExRefracRecurrentCell(IN, HIDDEN, p=p)
    if kind == "LIFMC":
        return nt.LIFMCRecurrentCell(IN, HIDDEN, p=nt.LIFParameters(v_reset=v))
    if kind == "LIFMCRefrac":
        p = nt.LIFRefracParameters(lif=nt.LIFParameters(v_reset=v), rho_reset=one)
        return nt.LIFMCRefracRecurrentCell(IN, HIDDEN, p=p)
    from norse.torch.functional.izhikevich import create_izhikevich_spiking_behavior
    behaviour = create_izhikevich_spiking_behavior(0.02, 0.2, reset, 6.0, -70.0, -70.0)
    return nt.IzhikevichRecurrentCell(IN, HIDDEN, spiking_method=behaviour)


#: kind -> (two reset values, input weight, the steps at which all HIDDEN neurons of both
#: samples fire under both). LIF, LIFEx, LIFAdEx: the input current (20 x 4 or 5 per step)
#: lifts v far above threshold each step; LSNN adds the input current after the voltage
#: update, so nothing fires at step 0; refractory cells rest one step after each spike
#: (LIFMCRefrac's multi-compartment update starts one step later); Izhikevich (c: the
#: reset potential) needs a stronger input to fire every step.
RECURRENT = {
    "LIF": ((0.0, -0.5), 20.0, EVERY),
    "LSNN": ((0.0, -0.5), 20.0, (False,) + (True,) * (STEPS - 1)),
    "LIFEx": ((0.0, -0.5), 20.0, EVERY),
    "LIFAdEx": ((0.0, -0.5), 20.0, EVERY),
    "LIFRefrac": ((0.0, -0.5), 20.0, (True, False) * (STEPS // 2)),
    "LIFAdExRefrac": ((0.0, -0.5), 20.0, (True, False) * (STEPS // 2)),
    "LIFMCRefrac": ((0.0, -0.5), 20.0, (False, True) * (STEPS // 2)),
    "Izhikevich": ((-65.0, -50.0), 2000.0, EVERY),
}


def _recurrent_x() -> torch.Tensor:
    """(BATCH, STEPS, IN) ones, sample 0's input 0 off at even steps (57 non-zeros)."""
    x = torch.ones(BATCH, STEPS, IN)
    x[0, ::2, 0] = 0.0
    return x


def _recurrent_net(kind: str, reset: float, coupling: float = 0.0) -> nn.Module:
    """The cell (input weights as in RECURRENT, recurrent weights 0.001 off the diagonal:
    Norse zeroes the autapses), Linear(HIDDEN, OUT), LIFCell."""
    cell = _recurrent_cell(kind, reset)
    with torch.no_grad():
        cell.input_weights.fill_(RECURRENT[kind][1] if kind in RECURRENT else 20.0)
        cell.recurrent_weights.fill_(0.001)
        cell.recurrent_weights.fill_diagonal_(0.0)
        if hasattr(cell, "g_coupling"):
            cell.g_coupling.fill_(coupling)
    return nt.SequentialState(cell, nn.Linear(HIDDEN, OUT), nt.LIFCell())


def _fires(net: nn.Module, x: torch.Tensor) -> list[bool]:
    """Per step: whether all HIDDEN neurons of all samples fire (asserting all or none)."""
    state, fires = None, []
    with torch.no_grad():
        for x_t in x.unbind(1):
            z, state = net[0](x_t, state)
            assert int(z.sum()) in (0, z.numel()), z
            fires.append(bool(z.sum()))
    return fires


def _recurrent_synops(net: nn.Module, x: torch.Tensor) -> dict[str, float]:
    from neuromark import Benchmark
    from neuromark.metrics.complexity import SynapticOperations
    res = Benchmark(NorseModel(net), [(x, torch.zeros(len(x)))],
                    metrics=[SynapticOperations()], quiet=True).run()
    return res["synaptic_operations"]


def _recurrent_hand(fires: tuple[bool, ...], coupling_dense: int = 0) -> dict[str, float]:
    """Per sample: Dense, per step, IN x HIDDEN input weights + HIDDEN x HIDDEN recurrent
    weights (the zeroed diagonal included) + HIDDEN x OUT readout (+ the coupling). ACs
    (binary inputs and spikes): the 57 input non-zeros x HIDDEN over the batch; the
    recurrent weights from the last step's spikes, HIDDEN x (HIDDEN - 1) non-zero weights
    (no autapses) on each step after a firing one; the readout HIDDEN x OUT on firing steps."""
    dense = STEPS * (IN * HIDDEN + HIDDEN * HIDDEN + HIDDEN * OUT) + coupling_dense
    acs = (57 * HIDDEN / BATCH + sum(fires[:-1]) * HIDDEN * (HIDDEN - 1)
           + sum(fires) * HIDDEN * OUT)
    return {"Dense": dense, "Effective_ACs": acs, "Effective_MACs": 0.0}


@pytest.mark.parametrize("kind", sorted(RECURRENT))
@pytest.mark.parametrize("which", [0, 1])
def test_recurrent_cell_counts_hand_counted_for_each_reset(kind, which):
    resets, _, fires = RECURRENT[kind]
    net = _recurrent_net(kind, resets[which])
    x = _recurrent_x()
    assert tuple(_fires(net, x)) == fires, kind  # the same spike train under both resets
    got = _recurrent_synops(net, x)
    # LIFMCRefrac: g_coupling (HIDDEN x HIDDEN, zero here) on v per step: dense only
    want = _recurrent_hand(fires, STEPS * HIDDEN * HIDDEN if kind == "LIFMCRefrac" else 0)
    assert got["Dense"] == want["Dense"], (kind, got)
    assert got["Effective_ACs"] == pytest.approx(want["Effective_ACs"]), (kind, got)
    assert got["Effective_MACs"] == 0.0, (kind, got)


@pytest.mark.parametrize("v_reset", [0.0, -0.5])
def test_multicompartment_coupling_counted_on_the_membrane(v_reset):
    # LIFMCRecurrentCell: after lif_step, v += dt g_coupling v (HIDDEN x HIDDEN, all 0.001
    # here) on the reset membrane of every step: MACs where v != 0. All neurons fire every
    # step, so v is v_reset after each step: 6 x 16 MACs per sample at v_reset -0.5, none
    # at 0. The spikes' counts do not depend on the reset.
    net = _recurrent_net("LIFMC", v_reset, coupling=0.001)
    x = _recurrent_x()
    assert _fires(net, x) == list(EVERY)
    got = _recurrent_synops(net, x)
    want = _recurrent_hand(EVERY, STEPS * HIDDEN * HIDDEN)
    assert got["Dense"] == want["Dense"]
    assert got["Effective_ACs"] == pytest.approx(want["Effective_ACs"])
    assert got["Effective_MACs"] == (STEPS * HIDDEN * HIDDEN if v_reset else 0.0)


def test_recurrent_cells_are_neuron_layers():
    # a recurrent cell is a neuron layer (activation sparsity, membrane state): it was left
    # out (only SNNCell), so a network of one LIFRecurrentCell had no neuron layer at all
    from neuromark import Benchmark
    from neuromark.metrics.complexity import ActivationSparsity
    net = _recurrent_net("LIF", 0.0)
    adapter = NorseModel(nt.SequentialState(net[0]))
    assert [layer.name for layer in adapter.neuron_layers()] == ["0"]
    res = Benchmark(adapter, [(_recurrent_x(), torch.zeros(BATCH))],
                    metrics=[ActivationSparsity()], quiet=True).run()
    assert res["activation_sparsity"] == 0.0  # all HIDDEN neurons fire at every step
    assert set(adapter.state()) == {"0.v", "0.i"}


def test_multi_step_recurrent_modules_refused_by_name():
    # LIFRecurrent takes (T, B, F): fed one (B, F) step it took the batch for time, silently
    with pytest.raises(UnsupportedLayerError, match=r"'0' \(LIFRecurrent\).*use LIFRecurrentCell"):
        NorseModel(nt.SequentialState(nt.LIFRecurrent(2, 2)))


def test_bare_module_with_recurrent_cells_refused_naming_the_adapter():
    from neuromark.models.stepped import stepped_adapter

    class Bare(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cell = nt.LIFRecurrentCell(2, 2)

        def forward(self, x):
            return self.cell(x)[0]

    with pytest.raises(UnsupportedLayerError, match="NorseModel"):
        stepped_adapter(Bare())
