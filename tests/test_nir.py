"""NIR import/export: the snnTorch round trip (exact for zero-reset per-neuron nets), hand
computed graphs (conv, pooling, recurrent subgraph), clear errors."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.components import ComponentSpec, build_component
from neuromark.errors import DataError, UnsupportedLayerError
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.metrics.neuron_ops import NeuronOperations
from neuromark.models.snntorch_model import SNNTorchModel
from neuromark.registry import models

nir = pytest.importorskip("nir", reason="NIR tests need the 'nir' extra (nir, nirtorch)")
snn = pytest.importorskip("snntorch")
from neuromark.models.nir_model import from_nir, to_nir  # noqa: E402


def leaky_net(reset: str, synaptic: bool = False) -> nn.Module:
    gen = torch.Generator().manual_seed(0)
    second = snn.Synaptic(alpha=torch.rand(3, generator=gen) * 0.5 + 0.3,
                          beta=torch.rand(3, generator=gen) * 0.5 + 0.4, threshold=torch.ones(3),
                          init_hidden=True, output=True, reset_mechanism=reset) if synaptic \
        else snn.Leaky(beta=torch.rand(3, generator=gen) * 0.5 + 0.4,
                       threshold=torch.rand(3, generator=gen) + 0.5, init_hidden=True,
                       output=True, reset_mechanism=reset)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 5),
                        snn.Leaky(beta=torch.rand(5, generator=gen) * 0.5 + 0.4,
                                  threshold=torch.rand(5, generator=gen) + 0.5, init_hidden=True,
                                  reset_mechanism=reset),
                        nn.Linear(5, 3), second)
    with torch.no_grad():
        net[0].weight.mul_(3)
    return net


X = torch.bernoulli(torch.full((8, 30, 6), 0.4), generator=torch.Generator().manual_seed(1))


def counts(adapter) -> dict:
    metrics = [SynapticOperations(), ActivationSparsity(), MembraneUpdates(), NeuronOperations()]
    res = Benchmark(adapter, [(X, torch.zeros(8))], metrics=metrics, quiet=True).run()
    return {k: res[k] for k in ("synaptic_operations", "activation_sparsity", "membrane_updates",
                                "neuron_operations")}


def round_trip(net: nn.Module, tmp_path) -> SNNTorchModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = to_nir(net, torch.zeros(6))
    path = tmp_path / "net.nir"
    nir.write(str(path), graph)
    return from_nir(path)


def run(adapter) -> torch.Tensor:
    adapter.reset_state()
    with torch.no_grad():
        return adapter(X)


def test_zero_reset_round_trip_is_exact(tmp_path):
    net = leaky_net("zero")
    ours = round_trip(net, tmp_path)
    out, back = run(SNNTorchModel(net)), run(ours)
    assert out.sum() > 20 and torch.equal(out, back)
    assert counts(SNNTorchModel(net)) == counts(ours)
    built = build_component(models, ComponentSpec(name="nir", options={"path": str(tmp_path /
                                                                                   "net.nir")}),
                            None, ("model",))
    assert torch.equal(run(built), out)


def test_subtract_reset_comes_back_as_zero_reset(tmp_path):
    ours = run(round_trip(leaky_net("subtract"), tmp_path))
    # lossy: NIR's LIF resets to v_reset, so the import equals the zero-reset twin exactly
    assert torch.equal(ours, run(SNNTorchModel(leaky_net("zero"))))
    assert not torch.equal(ours, run(SNNTorchModel(leaky_net("subtract"))))


def test_a_shared_scalar_parameter_is_exported_per_neuron():
    """snnTorch's exporter needs per-neuron tensors: a shared beta is broadcast on a copy,
    the net itself keeps its scalar (issue 55.6)."""
    net = nn.Sequential(nn.Linear(4, 3), snn.Leaky(beta=0.9, threshold=torch.ones(3),
                                                   init_hidden=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = to_nir(net, torch.zeros(4))
    lif = next(v for v in graph.nodes.values() if isinstance(v, nir.LIF))
    assert lif.tau.shape == (3,) and np.allclose(1 - 1e-4 / lif.tau, 0.9)
    assert net[1].beta.dim() == 0 and float(net[1].beta) == pytest.approx(0.9)


def test_unsupported_node_named_with_its_type(tmp_path):
    graph = nir.NIRGraph(nodes={"input": nir.Input(np.array([2])),
                                "wait": nir.Delay(np.ones(2)),
                                "output": nir.Output(np.array([2]))},
                         edges=[("input", "wait"), ("wait", "output")])
    with pytest.raises(UnsupportedLayerError, match="NIR node 'wait' of type Delay"):
        from_nir(graph)
    with pytest.raises(DataError, match="NIR file not found"):
        from_nir(tmp_path / "missing.nir")


def test_conv_pool_flatten_affine_if_hand_computed():
    w = np.arange(2 * 1 * 2 * 2, dtype=np.float32).reshape(2, 1, 2, 2) / 10
    graph = nir.NIRGraph(
        nodes={"input": nir.Input(np.array([1, 4, 4])),
               "conv": nir.Conv2d(None, w, 1, 0, 1, 1, np.array([0.1, -0.2], dtype=np.float32)),
               "pool": nir.SumPool2d(np.array([3, 3]), np.array([3, 3]), np.array([0, 0])),
               "flat": nir.Flatten(np.array([2, 1, 1]), 0, -1),
               "fc": nir.Affine(np.array([[1.0, 2.0]], dtype=np.float32),
                                np.array([0.5], dtype=np.float32)),
               "if": nir.IF(np.array([1.0]), np.array([2.0]), np.array([0.0])),
               "output": nir.Output(np.array([1]))},
        edges=[("input", "conv"), ("conv", "pool"), ("pool", "flat"), ("flat", "fc"),
               ("fc", "if"), ("if", "output")])
    adapter = from_nir(graph)
    x = torch.rand(2, 3, 1, 4, 4, generator=torch.Generator().manual_seed(3))
    conv = nn.functional.conv2d(x.flatten(0, 1), torch.from_numpy(w), torch.tensor([0.1, -0.2]))
    pooled = conv[:, :, :3, :3].sum((2, 3))  # one 3x3 window of the 3x3 map
    current = (pooled @ torch.tensor([[1.0], [2.0]]) + 0.5).reshape(2, 3)
    v, spikes = torch.zeros(2), []
    for t in range(3):  # IF: v += r I; spike v > 2; reset to 0 before the next step
        v = v + current[:, t]
        spikes.append((v > 2.0).float())
        v = torch.where(v > 2.0, torch.zeros_like(v), v)
    assert torch.allclose(run_on(adapter, x).squeeze(-1), torch.stack(spikes, 1))


def run_on(adapter, x):
    adapter.reset_state()
    with torch.no_grad():
        return adapter(x)


def test_recurrent_subgraph_hand_computed():
    lif = nir.LIF(tau=np.full(2, 2e-4), r=np.full(2, 2.0), v_leak=np.zeros(2),
                  v_threshold=np.ones(2), v_reset=np.zeros(2))
    rec = nir.NIRGraph(nodes={"input": nir.Input(np.array([2])), "lif": lif,
                              "w_rec": nir.Linear(np.array([[0.0, 0.7], [0.7, 0.0]])),
                              "output": nir.Output(np.array([2]))},
                       edges=[("input", "lif"), ("lif", "w_rec"), ("w_rec", "lif"),
                              ("lif", "output")])
    graph = nir.NIRGraph(nodes={"input": nir.Input(np.array([1])),
                                "fc": nir.Linear(np.array([[1.2], [0.0]])),
                                "rnn": rec, "output": nir.Output(np.array([2]))},
                         edges=[("input", "fc"), ("fc", "rnn"), ("rnn", "output")])
    adapter = from_nir(graph)
    x = torch.tensor([[[1.0], [0.0], [0.0], [0.0]]])
    # beta = 1 - dt/tau = 0.5, gain r dt/tau = 1; current = fc x + 0.7 * (other's last spike)
    v, z, out = torch.zeros(2), torch.zeros(2), []
    for t in range(4):
        current = torch.tensor([1.2, 0.0]) * x[0, t, 0] + 0.7 * z.flip(0)
        v = 0.5 * torch.where(z > 0, torch.zeros(2), v) + current
        z = (v > 1.0).float()
        out.append(z)
    expected = torch.stack(out)[None]
    assert expected[0, :, 1].sum() == 0 and expected[0, 0, 0] == 1  # 1.2 > 1 then 0.7 < 1
    assert torch.equal(run_on(adapter, x), expected)
    res = Benchmark(adapter, [(x, torch.zeros(1))], metrics=[SynapticOperations()],
                    quiet=True).run()
    # fc: one AC per step with x = 1 (column weight 1.2 and 0: 1 non-zero); w_rec: spikes
    # of the previous step times 1 non-zero weight each
    assert res["synaptic_operations"]["Effective_ACs"] == 1 + 1


def _recurrent_neuron(kind: str, v_reset: float, n: int) -> object:
    """LIF, CubaLIF or IF of ``n`` neurons (tau 2e-4 s: retain 0.5 at dt 1e-4), threshold 1,
    reset to ``v_reset``."""
    ones, reset = np.ones(n), np.full(n, v_reset)
    if kind == "LIF":
        return nir.LIF(tau=np.full(n, 2e-4), r=ones, v_leak=np.zeros(n), v_threshold=ones,
                       v_reset=reset)
    if kind == "CubaLIF":
        return nir.CubaLIF(tau_mem=np.full(n, 2e-4), tau_syn=np.full(n, 2e-4), r=ones,
                           v_leak=np.zeros(n), v_threshold=ones, v_reset=reset, w_in=ones)
    return nir.IF(r=ones, v_threshold=ones, v_reset=reset)


@pytest.mark.parametrize("kind", ["LIF", "CubaLIF", "IF"])
@pytest.mark.parametrize("v_reset", [0.0, -0.5])
def test_recurrent_edge_counts_hand_counted_for_each_reset(kind, v_reset):
    # input (4) -> fc (Linear 4x4, weights 20) -> neuron (4) -> out (Linear 3x4, 0.1); and
    # the recurrent edge neuron -> rec (Linear 4x4, 0.001) -> neuron: rec runs first in each
    # step, on the neuron's last spikes (zeros at step 0). Binary x, sample 0's input 0 off
    # at even steps (45 non-zeros); currents of 60 or 80 fire all 4 neurons every step
    # under both reset values. Per sample: Dense per step 16 + 16 + 12; ACs 45 x 4 over the
    # batch, 5 x 16 (rec after step 0), 6 x 12 (out).
    hidden, steps, batch = 4, 6, 2
    graph = nir.NIRGraph(
        nodes={"input": nir.Input(np.array([hidden])),
               "fc": nir.Linear(np.full((hidden, hidden), 20.0)),
               "neuron": _recurrent_neuron(kind, v_reset, hidden),
               "rec": nir.Linear(np.full((hidden, hidden), 0.001)),
               "out": nir.Linear(np.full((3, hidden), 0.1)),
               "output": nir.Output(np.array([3]))},
        edges=[("input", "fc"), ("fc", "neuron"), ("neuron", "rec"), ("rec", "neuron"),
               ("neuron", "out"), ("out", "output")])
    adapter = from_nir(graph)
    assert adapter.module.recurrent_sources == ["neuron"]
    x = torch.ones(batch, steps, hidden)
    x[0, ::2, 0] = 0.0
    adapter.reset_state()
    with torch.no_grad():
        spikes = []
        for x_t in x.unbind(1):
            adapter.module(x_t)
            spikes.append(adapter.module.layers["neuron"].spk.clone())
    assert torch.stack(spikes).sum() == steps * batch * hidden  # all fire at every step
    res = Benchmark(adapter, [(x, torch.zeros(batch))], metrics=[SynapticOperations()],
                    quiet=True).run()
    got = res["synaptic_operations"]
    assert got["Dense"] == steps * (hidden * hidden * 2 + hidden * 3) == 264
    assert got["Effective_ACs"] == pytest.approx(45 * hidden / batch + (steps - 1) * 16
                                                 + steps * 12)  # 242
    assert got["Effective_MACs"] == 0.0


def write_small_nir(path) -> None:
    """A 4-3-2 zero-reset Leaky net with unit weights, written as a NIR file."""
    net = nn.Sequential(nn.Linear(4, 3), snn.Leaky(beta=torch.full((3,), 0.8),
                                                   threshold=torch.full((3,), 0.5),
                                                   init_hidden=True, reset_mechanism="zero"),
                        nn.Linear(3, 2), snn.Leaky(beta=torch.full((2,), 0.8),
                                                   threshold=torch.full((2,), 0.5),
                                                   init_hidden=True, reset_mechanism="zero"))
    with torch.no_grad():
        for lin in (net[0], net[2]):
            lin.weight.fill_(1.0)
            lin.bias.zero_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nir.write(str(path), to_nir(net, torch.zeros(4)))


def test_neuromark_run_with_a_nir_model(tmp_path, monkeypatch):
    """``model: {name: nir, options: {path}}`` through ``neuromark run`` on spike files."""
    from neuromark.cli import main
    from neuromark.data.hdf5_spikes import write_shd_file

    write_small_nir(tmp_path / "net.nir")
    monkeypatch.chdir(tmp_path)
    write_shd_file("test.h5", [[0.001, 0.012, 0.03]] * 4, [[0, 1, 3]] * 4, [0, 1, 0, 1])
    (tmp_path / "nir.yaml").write_text(f"""task: classification
benchmark: {{id: spikes-nir, version: "1.0"}}
dataset: {{name: spike_files, options: {{test: test.h5, channels: 4, dt_us: 10000,
                                          t_max_us: 50000}}}}
model: {{name: nir, options: {{path: {tmp_path / 'net.nir'}}}}}
eval: {{postprocessor: spike_count, metrics: [classification_accuracy, synaptic_operations,
                                               neuron_operations, energy_estimate]}}
""")
    assert main(["run", "nir.yaml", "--out", "out", "--quiet"]) == 0
    import json

    scores = json.load(open(next(Path("out").glob("spikes-nir--*.json"))))["scores"]
    # 5 bins of 4 channels; dense = 5 x (4 x 3 + 3 x 2); every neuron updated in the first
    # step at least
    assert scores["synaptic_operations"]["value"]["Dense"] == 5 * (4 * 3 + 3 * 2)
    assert scores["neuron_operations"]["value"]["Dense_Neuron_Ops"] == 5 * (3 + 2) * 4
    assert scores["energy_estimate"]["unit"] == "J/sample (estimate)"
    assert scores["classification_accuracy"]["value"] == 0.5  # both outputs equal: class 0


def test_nir_path_resolves_from_the_config_folder(tmp_path, monkeypatch, capsys):
    """A relative ``model.options.path`` lies in the config's folder, never the working
    directory (no fallback), and its absolute path is in the results' provenance."""
    import json

    from neuromark.cli import main
    from neuromark.data.hdf5_spikes import write_shd_file

    folder, elsewhere = tmp_path / "configs", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    write_small_nir(folder / "net.nir")
    write_shd_file(folder / "test.h5", [[0.001, 0.012, 0.03]] * 4, [[0, 1, 3]] * 4, [0, 1, 0, 1])
    text = """task: classification
benchmark: {id: spikes-nir-rel, version: "1.0"}
dataset: {name: spike_files, options: {test: test.h5, channels: 4, dt_us: 10000,
                                        t_max_us: 50000}}
model: {name: nir, options: {path: MODEL}}
eval: {postprocessor: spike_count, metrics: [classification_accuracy]}
"""
    (folder / "nir.yaml").write_text(text.replace("MODEL", "net.nir"))
    monkeypatch.chdir(elsewhere)
    assert main(["run", "../configs/nir.yaml", "--out", "out", "--quiet"]) == 0
    provenance = json.load(open(next(Path("out").glob("spikes-nir-rel--*.json"))))["provenance"]
    recorded = Path(provenance["paths"]["model.options.path"])
    assert recorded.is_absolute() and recorded.resolve() == (folder / "net.nir").resolve()

    # a file of that name in the working directory only is not found: no fallback
    (folder / "net.nir").rename(elsewhere / "moved.nir")
    (folder / "nir.yaml").write_text(text.replace("MODEL", "moved.nir"))
    capsys.readouterr()
    assert main(["run", "../configs/nir.yaml", "--out", "out2", "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "NIR file not found" in err and "configs/moved.nir" in err
