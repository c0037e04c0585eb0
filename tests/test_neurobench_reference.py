"""Cross-checks against the ``neurobench`` 2.3.0 package itself (a reference, never a
dependency). Skipped unless neurobench is importable; ``.ci/run`` runs them in a scratch
venv (``scripts/reference_checks.sh``). Synaptic operations use neurobench's per-call
MAC/AC rule (``mac_rule="per_call"``), the one it implements."""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

pytestmark = pytest.mark.reference

if os.environ.get("NEUROMARK_REQUIRE_REFERENCE"):  # scripts/reference_checks.sh: must run
    import neurobench.benchmarks as nb_bench
    import snntorch as snn
else:
    nb_bench = pytest.importorskip("neurobench.benchmarks")
    snn = pytest.importorskip("snntorch")

from neurobench.metrics import static as nb_static  # noqa: E402
from neurobench.metrics import workload as nb_workload  # noqa: E402
from neurobench.models import SNNTorchModel as NBSNNTorchModel  # noqa: E402
from neurobench.models import TorchModel as NBTorchModel  # noqa: E402

from neuromark import Benchmark  # noqa: E402
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations  # noqa: E402
from neuromark.metrics.correctness import ClassificationAccuracy  # noqa: E402
from neuromark.metrics.static import ConnectionSparsity, ParameterCount  # noqa: E402
from neuromark.models.snntorch_model import SNNTorchModel  # noqa: E402
from neuromark.models.torch_model import TorchModel  # noqa: E402


def neurobench_results(model, loader, post, workload):
    static = [nb_static.ParameterCount, nb_static.ConnectionSparsity]
    return nb_bench.Benchmark(model, loader, [], [post], [static, workload]).run(verbose=False)


#: neurobench 2.x result keys (CamelCase) for our keys (neurobench 1.x names).
NB_KEYS = {"parameter_count": "ParameterCount", "connection_sparsity": "ConnectionSparsity",
           "synaptic_operations": "SynapticOperations", "activation_sparsity": "ActivationSparsity",
           "membrane_updates": "MembraneUpdates", "classification_accuracy": "ClassificationAccuracy"}


def compare(ours: dict, theirs: dict, keys: list[str]) -> None:
    for key in keys:
        value = theirs[NB_KEYS[key]]
        if isinstance(value, dict):
            for sub, sub_value in value.items():
                assert ours[key][sub] == pytest.approx(sub_value, rel=1e-6, abs=1e-9), (key, sub)
        elif key == "connection_sparsity":  # neurobench rounds it to 4 decimals
            assert ours[key] == pytest.approx(value, abs=5e-5), key
        else:
            assert ours[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key


def test_snntorch_network_agrees():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(50, 32), snn.Leaky(beta=0.9, init_hidden=True),
                        nn.Linear(32, 5), snn.Leaky(beta=0.9, init_hidden=True, output=True))
    with torch.no_grad():
        net[0].weight.mul_(4 * (torch.rand(32, 50) > 0.3))
    data = torch.bernoulli(torch.full((24, 15, 50), 0.1))
    loader = DataLoader(TensorDataset(data, torch.randint(0, 5, (24,))), batch_size=8)

    def post(spikes):
        return spikes.sum(1).argmax(-1)

    theirs = neurobench_results(NBSNNTorchModel(net), loader, post,
                                [nb_workload.SynapticOperations, nb_workload.ActivationSparsity,
                                 nb_workload.MembraneUpdates, nb_workload.ClassificationAccuracy])
    ours = dict(Benchmark(SNNTorchModel(net), loader, [], [post],
                          [ParameterCount(), ConnectionSparsity(),
                           SynapticOperations(mac_rule="per_call"),
                           ActivationSparsity(), MembraneUpdates(), ClassificationAccuracy()],
                          quiet=True).run())
    compare(ours, theirs, ["parameter_count", "connection_sparsity", "synaptic_operations",
                           "activation_sparsity", "membrane_updates", "classification_accuracy"])


def test_relu_mlp_and_cnn_agree():
    torch.manual_seed(1)
    mlp = nn.Sequential(nn.Linear(12, 10), nn.ReLU(), nn.Linear(10, 4))
    cnn = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.Flatten(),
                        nn.Linear(3 * 5 * 5, 4))
    for net, shape in ((mlp, (16, 12)), (cnn, (16, 2, 5, 5))):
        with torch.no_grad():
            for p in net.parameters():
                p.mul_(torch.rand(p.shape) > 0.25)
        data = torch.relu(torch.randn(*shape))
        loader = DataLoader(TensorDataset(data, torch.randint(0, 4, (16,))), batch_size=4)

        def post(logits):
            return logits.argmax(-1)

        theirs = neurobench_results(NBTorchModel(net), loader, post,
                                    [nb_workload.SynapticOperations, nb_workload.ActivationSparsity,
                                     nb_workload.ClassificationAccuracy])
        ours = dict(Benchmark(TorchModel(net), loader, [], [post],
                              [ParameterCount(), ConnectionSparsity(),
                           SynapticOperations(mac_rule="per_call"),
                               ActivationSparsity(), ClassificationAccuracy()], quiet=True).run())
        compare(ours, theirs, ["parameter_count", "connection_sparsity", "synaptic_operations",
                               "activation_sparsity", "classification_accuracy"])


@pytest.mark.parametrize("reset", ["subtract", "zero"])
def test_neuron_operations_agree(reset):
    from neuromark.metrics.neuron_ops import NeuronOperations

    torch.manual_seed(2)
    common = {"init_hidden": True, "reset_mechanism": reset}
    net = nn.Sequential(nn.Linear(20, 16), snn.Leaky(beta=0.9, **common),
                        nn.Linear(16, 12), snn.Synaptic(alpha=0.8, beta=0.9, **common),
                        nn.Linear(12, 10), snn.Lapicque(beta=0.9, **common),
                        nn.Linear(10, 8), snn.Alpha(alpha=0.9, beta=0.8, **common),
                        nn.Linear(8, 4), snn.Leaky(beta=0.9, output=True, **common))
    with torch.no_grad():
        net[0].weight.mul_(3)
    data = torch.bernoulli(torch.full((12, 10, 20), 0.2))
    loader = DataLoader(TensorDataset(data, torch.randint(0, 4, (12,))), batch_size=4)

    def post(spikes):
        return spikes.sum(1).argmax(-1)

    theirs = neurobench_results(NBSNNTorchModel(net), loader, post,
                                [nb_workload.NeuronOperations, nb_workload.MembraneUpdates])
    ours = dict(Benchmark(SNNTorchModel(net), loader, [], [post],
                          [NeuronOperations(), MembraneUpdates()], quiet=True).run())
    assert ours["membrane_updates"] == pytest.approx(theirs["MembraneUpdates"], rel=1e-9)
    ops = theirs["NeuronOperations"]
    assert ops["Effective Neuron Ops"] > 0
    assert ours["neuron_operations"]["Effective_Neuron_Ops"] == pytest.approx(
        ops["Effective Neuron Ops"], rel=1e-9)
    assert ours["neuron_operations"]["Dense_Neuron_Ops"] == pytest.approx(
        ops["Neuron Dense Ops"], rel=1e-9)


def test_neuron_operations_beyond_neurobench_table(capsys):
    """neurobench 2.3.0 has costs for Leaky, Synaptic, Lapicque and Alpha only: on an
    RLeaky it prints its KeyError and reports 0.0 neuron ops; ours counts it (5 per update,
    the recurrent Linear as synaptic ops), on neurobench's own membrane updates."""
    from neuromark.metrics.neuron_ops import NeuronOperations

    torch.manual_seed(3)
    net = nn.Sequential(nn.Linear(6, 4),
                        snn.RLeaky(beta=0.9, linear_features=4, init_hidden=True, output=True))
    data = torch.bernoulli(torch.full((4, 5, 6), 0.3))
    loader = DataLoader(TensorDataset(data, torch.zeros(4, dtype=torch.long)), batch_size=2)

    def post(spikes):
        return spikes.sum(1).argmax(-1)

    theirs = neurobench_results(NBSNNTorchModel(net), loader, post,
                               [nb_workload.NeuronOperations, nb_workload.MembraneUpdates])
    assert "Error running workload metric 'NeuronOperations': 'RLeaky'" in capsys.readouterr().out
    assert theirs["NeuronOperations"] == 0.0 and theirs["MembraneUpdates"] > 0
    ours = dict(Benchmark(SNNTorchModel(net), loader, [], [post],
                          [NeuronOperations(), MembraneUpdates()], quiet=True).run())
    assert ours["membrane_updates"] == pytest.approx(theirs["MembraneUpdates"], rel=1e-9)
    assert ours["neuron_operations"]["Effective_Neuron_Ops"] == pytest.approx(
        5 * theirs["MembraneUpdates"], rel=1e-9)
