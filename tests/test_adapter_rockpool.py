"""Rockpool adapter: the same 2-layer network as in snnTorch (same weights, hand-mapped
dynamics) gives identical spikes and counts. Runs in its own venv
(scripts/adapter_checks.sh); skipped where Rockpool is not installed."""

from __future__ import annotations

import math
import os

import pytest
import torch
from batch_independence import assert_batch_independent, mixed_data
from framework_equivalence import X, assert_same_counts, linear_layers, snntorch_twin
from torch import nn

from neuromark.models.rockpool_model import RockpoolModel

if os.environ.get("NEUROMARK_REQUIRE_FRAMEWORK") == "rockpool":
    import rockpool.nn.modules as rm
else:
    rm = pytest.importorskip("rockpool.nn.modules", reason="Rockpool is not installed (its own "
                                                           "venv: scripts/adapter_checks.sh rockpool)")
from rockpool.nn.combinators import Sequential  # noqa: E402

DT, TAUS = 1e-3, (2e-3, 4e-3)  # seconds: alpha = exp(-dt / tau_mem)
POSITIVE_SUM = 1.2  # < 2 - beta for both layers (beta 0.61 and 0.78)


def rockpool_net() -> nn.Module:
    # v = alpha v + I, one spike at most per step (v >= 1), v -= 1 at once: snnTorch Leaky,
    # subtract reset, reset_delay=False (the reset in the same step), beta = alpha
    def lif(n: int, tau: float) -> nn.Module:
        return rm.LIFNeuronTorch(n, tau_mem=tau, threshold=1.0, dt=DT, max_spikes_per_dt=1.0)

    return Sequential(rm.LinearTorch((6, 5), has_bias=False), lif(5, TAUS[0]),
                      rm.LinearTorch((5, 3), has_bias=False), lif(3, TAUS[1]))


def twin_of(net: nn.Module) -> nn.Module:
    """The snnTorch twin with the seeded weights, copied into Rockpool's (in, out) weights.

    Each neuron's positive input weights are scaled to sum to at most POSITIVE_SUM, so that
    with inputs of 0/1 a potential after the reset stays below the threshold (it is below
    beta + POSITIVE_SUM - 1 < 1). Above it, snnTorch's same-step reset
    (``reset_delay=False``) subtracts the threshold again in the next step while Rockpool
    does not: the two neurons differ there by design, not by the adapter."""
    linears = [m for _, m in net.named_modules() if isinstance(m, rm.LinearTorch)]
    proxy = nn.Sequential(*(nn.Linear(m.size_in, m.size_out, bias=True) for m in linears))
    betas = tuple(math.exp(-DT / tau) for tau in TAUS)
    twin = snntorch_twin(proxy, betas=betas, reset="subtract", reset_delay=False)
    with torch.no_grad():
        for rock, theirs in zip(linears, linear_layers(twin)):
            theirs.bias.zero_()
            positive = theirs.weight.clamp(min=0).sum(1, keepdim=True)
            theirs.weight.mul_((POSITIVE_SUM / positive).clamp(max=1.0))
            rock.weight.copy_(theirs.weight.T)
    return twin


def test_same_counts_as_snntorch():
    net = rockpool_net()
    twin = twin_of(net)
    adapter = RockpoolModel(net)
    assert_same_counts(adapter, twin)
    names = {layer.name for layer in adapter.neuron_layers()}
    assert set(adapter.state()) == {f"{name}.vmem" for name in names}
    assert [layer.cost for layer in adapter.neuron_layers()] == [4.0, 4.0]


def synaptic_net() -> nn.Module:
    """LIFTorch (a synaptic current) with recurrent weights, then LIFTorch."""
    torch.manual_seed(3)
    return Sequential(rm.LinearTorch((6, 5)), rm.LIFTorch(5, tau_mem=4e-3, tau_syn=2e-3, dt=DT,
                                                          has_rec=True),
                      rm.LinearTorch((5, 3)), rm.LIFTorch(3, tau_mem=4e-3, tau_syn=2e-3, dt=DT))


@pytest.mark.parametrize("kind", ["lif_neuron", "lif_synaptic_recurrent"])
def test_stepping_gives_rockpool_own_sequence_output_per_sample(kind):
    if kind == "lif_neuron":
        net = rockpool_net()
        twin_of(net)
    else:
        net = synaptic_net()
        with torch.no_grad():
            for _, module in net.named_modules():
                if isinstance(module, rm.LinearTorch):
                    module.weight.mul_(4.0)
    with torch.no_grad():
        adapter = RockpoolModel(net)
        adapter.reset_state()
        stepped = adapter(X)
        # Rockpool runs a whole (1, T, F) sequence itself; one sample at a time, since it
        # keeps only the first sample's state between calls
        for i in range(len(X)):
            adapter.reset_state()  # Rockpool's reset_state() and the held states dropped
            direct = net(X[i:i + 1])  # the torch API, set by the adapter
            assert torch.equal(stepped[i:i + 1], direct)
    assert stepped.sum() > 10
    costs = [layer.cost for layer in adapter.neuron_layers()]
    assert costs == ([4.0, 4.0] if kind == "lif_neuron" else [6.0, 6.0])


def test_figures_independent_of_the_batch():
    # footprint (per-sample neuron state), synaptic operations (per-sample MAC/AC split on
    # half-binary, half-analog data) and activation sparsity at batch 1, 32 and 120
    torch.manual_seed(0)
    net = rockpool_net()
    with torch.no_grad():  # LinearTorch (in, out) weights, counted by interception
        for linear in (m for m in net.modules() if isinstance(m, rm.LinearTorch)):
            linear.weight.mul_(3.0)
    found = assert_batch_independent(RockpoolModel(net), mixed_data(6))
    ops = found["synaptic_operations"]
    assert ops["Effective_ACs"] > 0 and ops["Effective_MACs"] > 0
    assert 0 < found["activation_sparsity"] < 1


def test_recurrent_weights_dense_hand_counted():
    # synaptic_net: LinearTorch (6, 5), LIFTorch(5) with w_rec (5 x 5) once per step,
    # LinearTorch (5, 3), LIFTorch(3); X has 30 steps
    from framework_equivalence import dense_synops
    assert dense_synops(RockpoolModel(synaptic_net())) == 30 * (6 * 5 + 5 * 5 + 5 * 3)


# -- recurrent weights: Dense and effective counts by hand ------------------------------------
HIDDEN, OUT, STEPS, BATCH = 4, 3, 6, 2


@pytest.mark.parametrize("kind", ["LIFTorch", "LIFBitshiftTorch"])
@pytest.mark.parametrize("max_spikes", [1.0, 2.0 ** 16])
def test_recurrent_weights_hand_counted(kind, max_spikes):
    # LinearTorch (4, 4) weights 20 on binary x (sample 0's input 0 off at even steps: 45
    # non-zeros), the neuron with w_rec (4 x 4, all 0.001: Rockpool keeps the diagonal),
    # LinearTorch (4, 3), LIFTorch(3). Inputs of 60 or 80 fire every hidden neuron at every
    # step. Rockpool's one reset is subtractive; max_spikes_per_dt 1 gives binary spikes,
    # 2^16 spike counts (hundreds here), so w_rec and the readout then take MACs. Per sample:
    # Dense per step 16 + 16 + 12; input ACs 45 x 4 over the batch; w_rec on the last
    # step's spikes (none before step 0): 5 x 16; the readout 6 x 12.
    lif = getattr(rm, kind)(HIDDEN, has_rec=True, max_spikes_per_dt=max_spikes, dt=DT)
    first = rm.LinearTorch((HIDDEN, HIDDEN), has_bias=False)
    readout = rm.LinearTorch((HIDDEN, OUT), has_bias=False)
    net = Sequential(first, lif, readout, rm.LIFTorch(OUT, dt=DT))
    with torch.no_grad():
        first.weight.fill_(20.0)
        lif.w_rec.fill_(0.001)
        readout.weight.fill_(0.1)
    x = torch.ones(BATCH, STEPS, HIDDEN)
    x[0, ::2, 0] = 0.0
    from neuromark import Benchmark
    from neuromark.metrics.complexity import SynapticOperations
    res = Benchmark(RockpoolModel(net), [(x, torch.zeros(BATCH))],
                    metrics=[SynapticOperations()], quiet=True).run()
    got = res["synaptic_operations"]
    driven = (STEPS - 1) * HIDDEN * HIDDEN + STEPS * HIDDEN * OUT  # 80 + 72
    assert got["Dense"] == STEPS * (2 * HIDDEN * HIDDEN + HIDDEN * OUT) == 264
    assert got["Effective_ACs"] == pytest.approx(45 * HIDDEN / BATCH
                                                 + (driven if max_spikes == 1.0 else 0))
    assert got["Effective_MACs"] == (0.0 if max_spikes == 1.0 else driven)


def test_neuron_with_unheld_state_refused_by_name():
    # aLIFTorch's iahp was not held per sample (the first sample's carried into all) and
    # its element-wise w_ahp feedback counted nowhere
    from neuromark.errors import UnsupportedLayerError
    net = Sequential(rm.LinearTorch((2, 3)), rm.aLIFTorch(3))
    with pytest.raises(UnsupportedLayerError, match=r"\(aLIFTorch\).*\['iahp'\]"):
        RockpoolModel(net)
