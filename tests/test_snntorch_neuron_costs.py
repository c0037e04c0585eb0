"""Neuron costs of every snnTorch neuron: the breakdown of each update equation by hand, and
NeuronOperations through the runner on tiny layers over 3 steps, counted by hand."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.complexity import MembraneUpdates, SynapticOperations
from neuromark.metrics.functional.neuron_ops import SNNTORCH_COSTS, NeuronCostError, neuron_cost
from neuromark.metrics.functional.snntorch_costs import SNNTORCH_OPS, Ops, snntorch_ops
from neuromark.metrics.neuron_ops import NeuronOperations
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.models.torch_model import TorchModel

snn = pytest.importorskip("snntorch")
neurons = pytest.importorskip("snntorch._neurons")

# one sample, 3 steps, 2 neurons; neuron 1 gets no input and stays at 0; no spikes
X = torch.tensor([[[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]])
# step 1 from a fresh state: both neurons; steps 2, 3: only neuron 0 changes
UPDATES, NEURON_STEPS = 4, 6
QUIET = {"threshold": 100.0, "init_hidden": True}


def _zeroed(module: nn.Module) -> nn.Module:
    with torch.no_grad():
        for p in module.parameters():
            p.zero_()
    return module


def _rleaky(reset: str, **kw) -> nn.Module:
    neuron = snn.RLeaky(beta=0.5, reset_mechanism=reset, **kw, **QUIET)
    if kw.get("all_to_all", True):
        _zeroed(neuron.recurrent)
    return neuron


def _rsynaptic(reset: str, **kw) -> nn.Module:
    neuron = snn.RSynaptic(alpha=0.6, beta=0.5, reset_mechanism=reset, **kw, **QUIET)
    if kw.get("all_to_all", True):
        _zeroed(neuron.recurrent)
    return neuron


def _slstm(reset: str) -> nn.Module:
    # all weights 0 but input 0 -> the cell gate g of hidden unit 0 (LSTMCell rows i, f, g, o):
    # step 1 sets c0 = 0.5 tanh(1); c0 halves (f = 0.5) at steps 2, 3; unit 1 stays at 0
    neuron = snn.SLSTM(2, 2, reset_mechanism=reset, **QUIET)
    _zeroed(neuron)
    with torch.no_grad():
        neuron.lstm_cell.weight_ih[4, 0] = 1.0
    return neuron


# (class, constructor by reset, ops by reset mechanism {subtract, zero, none}: hand counts
# from the update equations in the docstrings, see docs/algorithm_track.md)
STEPPED = {
    "Leaky": (lambda r: snn.Leaky(beta=0.5, reset_mechanism=r, **QUIET),
              {"subtract": Ops(2, 2), "zero": Ops(2, 2), "none": Ops(1, 1)}),
    "Synaptic": (lambda r: snn.Synaptic(alpha=0.6, beta=0.5, reset_mechanism=r, **QUIET),
                 {"subtract": Ops(3, 3), "zero": Ops(4, 4), "none": Ops(2, 2)}),
    "Lapicque": (lambda r: snn.Lapicque(beta=0.5, reset_mechanism=r, **QUIET),
                 {"subtract": Ops(6, 3, 2), "zero": Ops(6, 3, 2), "none": Ops(5, 2, 2)}),
    "Alpha": (lambda r: snn.Alpha(alpha=0.6, beta=0.5, reset_mechanism=r, **QUIET),
              {"subtract": Ops(6, 8, 4), "zero": Ops(6, 10, 8), "none": Ops(3, 5, 4)}),
    "RLeaky": (lambda r: _rleaky(r, linear_features=2),
               {"subtract": Ops(2, 3), "zero": Ops(2, 3), "none": Ops(1, 2)}),
    "RSynaptic": (lambda r: _rsynaptic(r, linear_features=2),
                  {"subtract": Ops(3, 4), "zero": Ops(3, 4), "none": Ops(2, 3)}),
    "SLSTM": (_slstm, {"subtract": Ops(4, 2, 5), "zero": Ops(4, 2, 5), "none": Ops(3, 1, 5)}),
    "DeltaLeaky": (lambda r: snn.DeltaLeaky(beta=0.5, reset_mechanism=r, init_hidden=True),
                   {mode: Ops(1, 2, 1) for mode in ("subtract", "zero", "none")}),
}
RESETS = ("subtract", "zero", "none")


def _run(net: nn.Module, x: torch.Tensor = X, adapter=SNNTorchModel, metrics=None):
    metrics = metrics or [NeuronOperations(), MembraneUpdates()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Benchmark(adapter(net), [(x, torch.zeros(len(x)))], metrics=metrics,
                         quiet=True).run()


def test_every_neuron_class_of_snntorch_has_a_cost():
    classes = {name for name in dir(neurons) if isinstance(getattr(neurons, name), type)}
    assert classes - {"SpikingNeuron", "LIF"} == set(SNNTORCH_OPS)  # bases are not neurons


def test_ops_reproduce_neurobench_2_3_0():
    for kind, table in SNNTORCH_COSTS.items():
        make = STEPPED[kind][0]
        for reset, cost in table.items():
            assert snntorch_ops(make(reset)).total == cost, (kind, reset)


@pytest.mark.parametrize("kind", sorted(STEPPED))
@pytest.mark.parametrize("reset", RESETS)
def test_stepped_neurons_hand_counted(kind, reset):
    make, ops = STEPPED[kind]
    neuron = make(reset)
    assert snntorch_ops(neuron) == ops[reset]
    cost = ops[reset].total
    res = _run(nn.Sequential(nn.Identity(), neuron))
    assert res["membrane_updates"] == UPDATES
    assert res["neuron_operations"] == {"Effective_Neuron_Ops": UPDATES * cost,
                                        "Dense_Neuron_Ops": NEURON_STEPS * cost}
    assert res.details["neuron_operations"]["by_layer"]["1"]["cost"] == cost


@pytest.mark.parametrize("kind", ["RLeaky", "RSynaptic"])
def test_one_to_one_recurrence_is_a_neuron_op_a_recurrent_layer_a_synaptic_op(kind):
    make = _rleaky if kind == "RLeaky" else _rsynaptic
    base = STEPPED[kind][1]["subtract"].total
    # one-to-one V*S: one synapse per neuron and step (2 neurons x 3 steps), a synaptic op
    # as a chip applies it, not a neuron op (it was one multiply more per update and no
    # synaptic op, Dense 0)
    res = _run(nn.Sequential(nn.Identity(), make("subtract", all_to_all=False, V=0.5)),
               metrics=[NeuronOperations(), SynapticOperations()])
    assert res["neuron_operations"]["Effective_Neuron_Ops"] == UPDATES * base
    assert res["synaptic_operations"]["Dense"] == 2 * 3
    # a recurrent Linear(2, 2): its 4 weights x 3 steps are synaptic ops, not neuron ops
    res = _run(nn.Sequential(nn.Identity(), make("subtract", linear_features=2)),
               metrics=[NeuronOperations(), SynapticOperations()])
    assert res["neuron_operations"]["Effective_Neuron_Ops"] == UPDATES * base
    assert res["synaptic_operations"]["Dense"] == 4 * 3


@pytest.mark.parametrize("reset", RESETS)
def test_sconv2dlstm_hand_counted(reset):
    # 1 channel on a 2x2 map: 4 neurons; conv(kernel 1) on cat(x, h) -> (i, f, o, g); only
    # x -> g is 1: the pixel with input changes at every step, the other 3 only at step 1
    neuron = _zeroed(snn.SConv2dLSTM(1, 1, 1, reset_mechanism=reset, **QUIET))
    with torch.no_grad():
        neuron.conv.weight[3, 0] = 1.0
    x = torch.zeros(1, 3, 1, 2, 2)
    x[0, 0, 0, 0, 0] = 1.0
    cost = 9 if reset == "none" else 11
    res = _run(nn.Sequential(nn.Identity(), neuron), x)
    assert res["membrane_updates"] == 4 + 1 + 1
    assert res["neuron_operations"] == {"Effective_Neuron_Ops": 6 * cost,
                                        "Dense_Neuron_Ops": 12 * cost}
    with pytest.raises(NeuronCostError, match="pooled"):
        neuron_cost(snn.SConv2dLSTM(1, 1, 1, max_pool=2), "lstm")


class TimeMajor(nn.Module):
    """(B, T, C) -> a whole-sequence neuron on (T, B, C) -> its spikes as (B, T, C)."""

    def __init__(self, neuron: nn.Module) -> None:
        super().__init__()
        self.neuron = neuron

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.neuron(x.transpose(0, 1))
        return (out[0] if isinstance(out, tuple) else out).transpose(0, 1)


def _parallel() -> nn.Module:
    neuron = snn.LeakyParallel(2, 2, beta=0.5)
    neuron.neuromark_neuron = True  # not a SpikingNeuron subclass: found when marked
    return neuron


WHOLE = {  # constructor, ops per neuron-step, neurons per step
    "StateLeaky": (lambda: snn.StateLeaky(beta=0.5, channels=2, output=True), Ops(1, 1), 2),
    "StateLeaky, truncated": (lambda: snn.StateLeaky(beta=0.5, channels=2, output=True,
                                                     kernel_truncation_steps=2),
                              Ops(2, 2), 2),
    "LinearLeaky": (lambda: snn.LinearLeaky(beta=0.5, in_features=2, out_features=3),
                    Ops(1, 1), 3),
    "LeakyParallel": (_parallel, Ops(other=1), 2),
    "AssociativeLeaky": (lambda: snn.AssociativeLeaky(2, 2, 1, 2, use_q_projection=False),
                         Ops(2, 1, 0.5), 2),
}


@pytest.mark.parametrize("kind", sorted(WHOLE))
def test_whole_sequence_neurons_update_every_neuron_every_step(kind):
    make, ops, width = WHOLE[kind]
    neuron = make()
    assert snntorch_ops(neuron) == ops
    x = X.repeat(2, 1, 1)  # 2 samples x 3 steps
    res = _run(TimeMajor(neuron), x, adapter=TorchModel, metrics=[NeuronOperations()])
    per_sample = 3 * width * ops.total
    assert res["neuron_operations"] == {"Effective_Neuron_Ops": per_sample,
                                        "Dense_Neuron_Ops": per_sample}


def test_uncountable_configurations_name_the_layer():
    with pytest.raises(NeuronCostError, match=r"'assoc'.*use_q_projection"):
        neuron_cost(snn.AssociativeLeaky(2, 2, 1, 2, use_q_projection=True), "assoc")
    neuron = snn.AssociativeLeaky(2, 2, 1, 2, use_q_projection=True)
    neuron.neuromark_neuron_cost = 5  # a declared cost is taken as given
    assert neuron_cost(neuron, "assoc") == 5


def test_membrane_updates_refuse_a_whole_sequence_neuron():
    """StateLeaky takes the whole sequence in one call: its per-step membrane is never seen,
    so membrane_updates raise naming the layer instead of reporting 0 (activation sparsity
    still counts its outputs)."""
    import snntorch as snn
    import torch

    from neuromark.errors import MetricError
    from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates
    from neuromark.runner import Benchmark

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)
            self.lif = snn.StateLeaky(beta=0.9, channels=3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = self.lif(self.fc(x).transpose(0, 1))
            return (out[0] if isinstance(out, tuple) else out).transpose(0, 1)

    batches = [(torch.rand(2, 5, 4), torch.zeros(2))]
    with pytest.raises(MetricError, match="layer 'lif' .StateLeaky. processes the whole sequence"):
        Benchmark(Net(), batches, metrics=[MembraneUpdates()], quiet=True).run()
    res = Benchmark(Net(), batches, metrics=[ActivationSparsity()], quiet=True).run()
    assert 0.0 <= res["activation_sparsity"] <= 1.0
