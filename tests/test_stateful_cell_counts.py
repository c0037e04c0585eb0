"""Synaptic operations of snnTorch's stateful cells with connections of their own (RLeaky,
RSynaptic with a recurrent Linear or with the element-wise recurrence of ``all_to_all=False``,
SLSTM, SConv2dLSTM), hand counted, for every reset mechanism, ``init_hidden`` on and off,
``output=True`` and RLeaky's ``reset_delay=False``: the reset mechanism changes no
connection, so Dense and the effective counts must not depend on it (snnTorch's reset to
zero evaluates the state update twice; each connection is counted once per step,
:func:`neuromark.models.base.find_state_updates`).

The inputs drive every hidden neuron above threshold at every step under every reset (input
100 per neuron, threshold 1, recurrent weights 0.001, one-to-one V 0.5), so the spike
trains, and with them the effective counts, are the same for all three resets and can be
counted by hand."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.complexity import SynapticOperations
from neuromark.models.base import find_state_updates
from neuromark.models.snntorch_model import SNNTorchModel

snn = pytest.importorskip("snntorch")

IN, HIDDEN, OUT, STEPS, BATCH = 5, 4, 3, 6, 2
RESETS = ("subtract", "zero", "none")
#: RLeaky/RSynaptic with all_to_all=False: one recurrent weight V per neuron (x * V)
ONE_TO_ONE = ("RLeaky_one_to_one", "RSynaptic_one_to_one")


class Net(nn.Module):
    """IN -> Linear (weights 1) -> stateful cell -> Linear -> Leaky; states passed by hand
    when ``init_hidden`` is off."""

    def __init__(self, cell: nn.Module, init_hidden: bool) -> None:
        super().__init__()
        self.fc_in, self.cell, self.fc_out = nn.Linear(IN, HIDDEN), cell, nn.Linear(HIDDEN, OUT)
        self.out = snn.Leaky(beta=0.5, init_hidden=True, output=True)
        self.init_hidden, self.state = init_hidden, None
        with torch.no_grad():
            self.fc_in.weight.fill_(20.0)
            self.fc_in.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        current = self.fc_in(x)
        if self.init_hidden:
            out = self.cell(current)
        else:
            out = self.cell(current, *self.state) if self.state is not None else self.cell(current)
            # RLeaky (spk, mem), RSynaptic (spk, syn, mem) take all back; SLSTM (syn, mem)
            self.state = tuple(out[1:]) if isinstance(self.cell, snn.SLSTM) else tuple(out)
        spikes = out[0] if isinstance(out, tuple) else out
        return self.out(self.fc_out(spikes))[0]


def _cell(kind: str, reset: str, init_hidden: bool, output: bool,
          reset_delay: bool = True) -> nn.Module:
    # SLSTM's output h = o tanh(c) stays below 1: a lower threshold makes it fire every step
    kw = {"threshold": 0.1 if kind == "SLSTM" else 1.0, "reset_mechanism": reset,
          "init_hidden": init_hidden}
    if init_hidden:
        kw["output"] = output
    if not reset_delay:
        kw["reset_delay"] = False
    # the one-to-one recurrence: V = 0.5 for all neurons (a per-neuron tensor)
    one_to_one = {"all_to_all": False, "V": torch.full((HIDDEN,), 0.5)}
    if kind == "RLeaky":
        cell = snn.RLeaky(beta=0.5, linear_features=HIDDEN, **kw)
    elif kind == "RSynaptic":
        cell = snn.RSynaptic(alpha=0.5, beta=0.5, linear_features=HIDDEN, **kw)
    elif kind == "RLeaky_one_to_one":
        cell = snn.RLeaky(beta=0.5, **one_to_one, **kw)
    elif kind == "RSynaptic_one_to_one":
        cell = snn.RSynaptic(alpha=0.5, beta=0.5, **one_to_one, **kw)
    else:
        cell = snn.SLSTM(HIDDEN, HIDDEN, **kw)
    with torch.no_grad():  # small nonzero weights (zero weights are not effective ops)
        for name, p in cell.named_parameters():
            if name.startswith(("recurrent", "lstm_cell")):
                p.fill_(0.001)
        if kind == "SLSTM":  # the cell gate g (rows 2H..3H) follows the input: c, h > 0
            cell.lstm_cell.weight_ih[2 * HIDDEN:3 * HIDDEN] += torch.eye(HIDDEN)
    return cell


def _synops(net: nn.Module) -> dict[str, float]:
    x = torch.ones(BATCH, STEPS, IN)
    x[0, ::2, 0] = 0.0  # sample 0: input 0 off at even steps
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = Benchmark(SNNTorchModel(net), [(x, torch.zeros(BATCH))],
                        metrics=[SynapticOperations()], quiet=True).run()
    return res["synaptic_operations"]


def _hand(kind: str, reset: str, reset_delay: bool = True) -> dict[str, float]:
    """Per sample: input nonzeros (IN per step, IN - 1 on sample 0's even steps) x HIDDEN;
    the recurrent layer: HIDDEN x HIDDEN dense per step, effective from the previous step's
    spikes (none before the first step), as ACs; the one-to-one recurrence
    (``all_to_all=False``): one synapse per neuron, HIDDEN dense per step, effective
    HIDDEN on the steps after a firing one, as ACs; the LSTM cell (MACs: real-valued h and c):
    4 HIDDEN x (HIDDEN + HIDDEN) per step; the readout: HIDDEN x OUT per step, effective on
    the steps the hidden layer fires. All HIDDEN neurons fire together: at every step, except
    under snnTorch's delayed reset to zero (``reset_delay=True``, the default), which zeroes
    the membrane on the step after a spike: they fire at steps 0, 2, 4 only. With
    ``reset_delay=False`` the reset comes in the spike's own step, and the next input (100
    per neuron) fires them again: every step."""
    fires = [t % 2 == 0 for t in range(STEPS)] if reset == "zero" and reset_delay \
        else [True] * STEPS
    x_nonzeros = BATCH * STEPS * IN - STEPS // 2
    acs_in, dense_in = x_nonzeros * HIDDEN, STEPS * IN * HIDDEN
    dense_out, acs_out = STEPS * HIDDEN * OUT, sum(fires) * HIDDEN * OUT
    if kind == "SLSTM":
        dense_cell = STEPS * 4 * HIDDEN * (HIDDEN + HIDDEN)
        # the input part at every step (real-valued currents: MACs); the hidden part where
        # the last step left h nonzero (not at the first step; h is zeroed where it is reset)
        macs = BATCH * (STEPS + sum(fires[:-1])) * 4 * HIDDEN * HIDDEN
        return {"Dense": dense_in + dense_cell + dense_out,
                "Effective_ACs": (acs_in + BATCH * acs_out) / BATCH,
                "Effective_MACs": macs / BATCH}
    per_step = HIDDEN if kind in ONE_TO_ONE else HIDDEN * HIDDEN
    dense_rec = STEPS * per_step
    acs_rec = sum(fires[:-1]) * per_step
    return {"Dense": dense_in + dense_rec + dense_out,
            "Effective_ACs": (acs_in + BATCH * (acs_rec + acs_out)) / BATCH,
            "Effective_MACs": 0.0}


@pytest.mark.parametrize("kind", ["RLeaky", "RSynaptic", "SLSTM", *ONE_TO_ONE])
@pytest.mark.parametrize("reset", RESETS)
@pytest.mark.parametrize("hidden", ["init_hidden", "init_hidden+output", "explicit_state"])
def test_cell_counts_equal_the_hand_count_for_every_reset(kind, reset, hidden):
    init_hidden = hidden != "explicit_state"
    net = Net(_cell(kind, reset, init_hidden, output=hidden.endswith("output")), init_hidden)
    got = _synops(net)
    want = _hand(kind, reset)
    assert got["Dense"] == want["Dense"], (kind, reset, hidden, got)
    assert got["Effective_ACs"] == pytest.approx(want["Effective_ACs"]), (kind, reset, got)
    assert got["Effective_MACs"] == pytest.approx(want["Effective_MACs"]), (kind, reset, got)


@pytest.mark.parametrize("kind", ["RLeaky", "RLeaky_one_to_one"])
@pytest.mark.parametrize("reset", RESETS)
@pytest.mark.parametrize("init_hidden", [True, False])
def test_reset_without_delay_counts_equal_the_hand_count(kind, reset, init_hidden):
    # reset_delay=False: RLeaky resets in the spike's own step; every neuron fires every
    # step under all three resets. (RSynaptic's reset_delay=False raises inside snnTorch
    # 1.0 itself with init_hidden=True: it reads the `spk` argument, None there.)
    net = Net(_cell(kind, reset, init_hidden, output=False, reset_delay=False), init_hidden)
    got = _synops(net)
    want = _hand(kind, reset, reset_delay=False)
    assert got["Dense"] == want["Dense"], (kind, reset, got)
    assert got["Effective_ACs"] == pytest.approx(want["Effective_ACs"]), (kind, reset, got)
    assert got["Effective_MACs"] == 0.0


def test_one_to_one_recurrence_is_one_synapse_per_neuron():
    # the element-wise recurrence of RLeaky(all_to_all=False) was not counted at all
    # (Dense 192 = input 120 + readout 72, without the recurrence's 6 x 4 = 24): V is a
    # neuron parameter and x * V no connection layer. Per sample: HIDDEN synapses a step,
    # not HIDDEN x HIDDEN.
    got = _synops(Net(_cell("RLeaky_one_to_one", "subtract", True, False), True))
    assert got["Dense"] == STEPS * IN * HIDDEN + STEPS * HIDDEN + STEPS * HIDDEN * OUT == 216
    # a zero weight V applies no synapse (effective), while dense stays one per neuron
    cell = _cell("RLeaky_one_to_one", "subtract", True, False)
    with torch.no_grad():
        cell.V[:2] = 0.0
    got = _synops(Net(cell, True))
    want = _hand("RLeaky_one_to_one", "subtract")
    assert got["Dense"] == 216
    assert got["Effective_ACs"] == pytest.approx(want["Effective_ACs"] - (STEPS - 1) * 2)


def test_one_to_one_scalar_weight_counted_per_neuron():
    # V a number (the default 1.0, stored as a 0-d tensor): still one synapse per neuron
    cell = snn.RLeaky(beta=0.5, all_to_all=False, init_hidden=True, learn_recurrent=False)
    got = _synops(Net(cell, True))
    assert got["Dense"] == 216
    assert got["Effective_ACs"] == pytest.approx(_hand("RLeaky_one_to_one",
                                                       "subtract")["Effective_ACs"])


@pytest.mark.parametrize("reset", RESETS)
def test_sconv2dlstm_effective_counts_equal_the_hand_count(reset):
    # 1 -> 2 channels on a 3x3 map, kernel 3 (padding 1), input all ones: the conv on
    # cat(x, h) applies per step 49 taps inside the map (2 + 3 + 2 per axis, squared) x 8
    # gate outputs x (1 input channel + 2 hidden channels) where h is non-zero; all weights
    # 0.001, the g gate's centre tap from x 1.0, so c and h > 0 everywhere. Threshold 0.1:
    # every position fires every step, but under the delayed reset to zero (steps 0, 2, 4).
    # A step whose h entering it is 0 (the first; after a reset to zero) sees cat(x, 0),
    # binary: 49 x 8 x 1 ACs; the others see a real-valued h: 49 x 8 x 3 MACs.
    cell = snn.SConv2dLSTM(1, 2, 3, reset_mechanism=reset, init_hidden=True, threshold=0.1)
    with torch.no_grad():
        cell.conv.weight.fill_(0.001)
        cell.conv.bias.zero_()
        cell.conv.weight[6:8, 0, 1, 1] += 1.0  # out channels 6, 7: the g gate (i, f, o, g)
    x = torch.ones(1, STEPS, 1, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = Benchmark(SNNTorchModel(nn.Sequential(cell)), [(x, torch.zeros(1))],
                        metrics=[SynapticOperations()], quiet=True).run()
    fires = [t % 2 == 0 for t in range(STEPS)] if reset == "zero" else [True] * STEPS
    h_in = [False] + fires[:-1]  # h entering step t is non-zero when step t - 1 fired
    got = res["synaptic_operations"]
    assert got["Dense"] == STEPS * 49 * 8 * 3 == 7056
    assert got["Effective_ACs"] == sum(not h for h in h_in) * 49 * 8 * 1
    assert got["Effective_MACs"] == sum(h_in) * 49 * 8 * 3


@pytest.mark.parametrize("reset", RESETS)
def test_sconv2dlstm_dense_independent_of_reset(reset):
    # 1 -> 2 channels on a 3x3 map, kernel 3 (padding 1): the conv on cat(x, h) (3 channels)
    # -> 4 x 2 gates: per step 9 positions x 8 outputs x 3 x 9 weights, all counted once
    cell = snn.SConv2dLSTM(1, 2, 3, reset_mechanism=reset, init_hidden=True, threshold=1.0)
    net = nn.Sequential(cell)
    x = torch.ones(1, STEPS, 1, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = Benchmark(SNNTorchModel(net), [(x, torch.zeros(1))],
                        metrics=[SynapticOperations()], quiet=True).run()
    dense_per_step = sum(  # zero padding: only the taps inside the map
        min(r + 1, 2) - max(r - 1, 0) + 1 for r in range(3)) ** 2 * 8 * 3
    assert res["synaptic_operations"]["Dense"] == STEPS * dense_per_step


def test_state_updates_found_only_for_cells_with_connections():
    # the element-wise recurrence (all_to_all=False) is a connection: x * V, one synapse a
    # neuron, counted once per state update like the others
    net = nn.Sequential(snn.Leaky(beta=0.5), snn.RLeaky(beta=0.5, linear_features=2),
                        snn.RLeaky(beta=0.5, all_to_all=False), snn.SLSTM(2, 2))
    assert [name for name, _, _ in find_state_updates(net)] == ["1", "2", "3"]


@pytest.mark.parametrize("kind", ["RLeaky", "RSynaptic"])
@pytest.mark.parametrize("reset", RESETS)
def test_convolutional_recurrence_dense_independent_of_reset(kind, reset):
    # conv2d_channels=2, kernel 3 (same padding) on a 3x3 map: the recurrent Conv2d(2, 2)
    # applies, per step, 2 x 2 x (the taps inside the map: 2 + 3 + 2 per axis, squared)
    kw = {"conv2d_channels": 2, "kernel_size": 3, "reset_mechanism": reset,
          "init_hidden": True, "threshold": 1.0}
    cell = snn.RLeaky(beta=0.5, **kw) if kind == "RLeaky" else \
        snn.RSynaptic(alpha=0.5, beta=0.5, **kw)
    x = torch.ones(1, STEPS, 2, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = Benchmark(SNNTorchModel(nn.Sequential(cell)), [(x, torch.zeros(1))],
                        metrics=[SynapticOperations()], quiet=True).run()
    assert res["synaptic_operations"]["Dense"] == STEPS * 2 * 2 * (2 + 3 + 2) ** 2
