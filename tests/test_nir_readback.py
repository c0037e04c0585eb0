"""NIR that others read back (issue 55.6) and NIR files that name what is wrong (issue 59).

Every shipped snnTorch baseline that NIR can express (``nehar_ffsnn``, ``eeg_snn``: one
shared beta/threshold per layer) is exported, read by ``nir.read`` and re-imported by
snnTorch's own importer (``snntorch.import_from_nir``); its outputs equal the original's
step by step. snnTorch's importer builds zero-reset neurons that reset in the step they
spike (NIR's LIF resets to ``v_reset``), so the reference is the same network with that
reset (``reset_mechanism="zero"``, ``reset_delay=False``); the subtract-reset
baselines as shipped come back with that one difference (tested: it is the only one). The
baselines with max pooling (``nehar_scnn``, ``dvs_gesture_snn``) are refused naming the
layer: NIR has no max-pooling node."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

nir = pytest.importorskip("nir", reason="NIR tests need the 'nir' extra (nir, nirtorch)")
snn = pytest.importorskip("snntorch", reason="snnTorch (extra snntorch) not installed")

from neuromark.models.nir_model import from_nir, to_nir  # noqa: E402


def _baselines():
    from neuromark.benchmarks.activity.models import FFSNN
    from neuromark.benchmarks.eeg_mi.models import EEGSNN

    return {"nehar_ffsnn": (FFSNN, 6), "eeg_snn": (EEGSNN, 62)}


def _neurons(net):
    return [m for m in net.modules() if type(m).__name__ in ("Leaky", "Synaptic")]


def _steps(net, x, imported=False):
    """Outputs (T, B, classes) of ``net`` fed x (T, B, inputs) one step per call."""
    for m in _neurons(net):
        m.reset_mem()
    outs, state = [], None
    with torch.no_grad():
        for step in x:
            if imported:
                out, state = net(step, state) if state is not None else net(step)
            else:
                out = net(step)
            outs.append(out[0] if isinstance(out, tuple) else out)
    return torch.stack(outs)


def _export_and_read_back(net, inputs, tmp_path, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = to_nir(net, torch.zeros(inputs))
        path = tmp_path / f"{name}.nir"
        nir.write(str(path), graph)
        back = nir.read(str(path))  # the field's own reader
        from snntorch.import_nir import import_from_nir

        return back, import_from_nir(back), path


@pytest.mark.parametrize("name", ["nehar_ffsnn", "eeg_snn"])
def test_shipped_baselines_export_and_snntorch_reads_them_back_equal(tmp_path, name):
    factory, inputs = _baselines()[name]
    torch.manual_seed(0)
    net = factory().eval()
    with torch.no_grad():  # stronger weights than the factory's draw: every layer spikes
        for layer in net.modules():
            if isinstance(layer, torch.nn.Linear):
                layer.weight.mul_(4)
    shared = {id(m): float(m.beta) for m in _neurons(net)}
    assert all(m.beta.dim() == 0 for m in _neurons(net))  # one beta per layer, as shipped
    graph, imported, _ = _export_and_read_back(net, inputs, tmp_path, name)
    assert all(m.beta.dim() == 0 and float(m.beta) == shared[id(m)] for m in _neurons(net))
    neurons = {k: v for k, v in graph.nodes.items() if type(v).__name__ in ("LIF", "CubaLIF")}
    assert len(neurons) == len(_neurons(net))
    for layer, node in zip(_neurons(net), neurons.values()):  # broadcast: one value per neuron
        width = node.v_threshold.shape
        assert width[0] > 1 and np.unique(node.v_threshold).size == 1
        tau = node.tau if hasattr(node, "tau") else node.tau_mem
        assert tau.shape == width
        np.testing.assert_allclose(1 - 1e-4 / tau, float(layer.beta), rtol=1e-5)
    gen = torch.Generator().manual_seed(1)
    x = 4 * torch.bernoulli(torch.full((25, 5, inputs), 0.5), generator=gen)
    zero_reset = factory().eval()
    zero_reset.load_state_dict(net.state_dict())
    for m in _neurons(zero_reset):  # NIR's neurons reset at once to v_reset (0 here)
        m.reset_mechanism, m.reset_delay = "zero", False
    want = _steps(zero_reset, x)
    got = _steps(imported, x, imported=True)
    assert want.sum() > 0 and want.shape == got.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    shipped = _steps(net, x)  # subtract reset, as shipped: the reset is the only difference
    assert not torch.equal(shipped, want) or want.sum() == 0


@pytest.mark.parametrize(("model", "layer"), [("scnn", "pool"), ("gesture", "pool")])
def test_baselines_with_max_pooling_are_refused_naming_the_layer(model, layer):
    from neuromark.benchmarks.activity.models import SCNN
    from neuromark.benchmarks.dvs_gesture.model import GestureSNN

    net, sample = (SCNN(), torch.zeros(6)) if model == "scnn" else (GestureSNN(), torch.zeros(2, 32, 32))
    with pytest.raises(ValueError, match=rf"layer '{layer}' \(MaxPool[12]d\) is max pooling, "
                                         "for which NIR 1.0 defines no node"):
        to_nir(net, sample)


def unknown_node_graph(path):
    """A valid two-node NIR file whose middle node's type is changed to ``Wobble``."""
    import h5py

    graph = nir.NIRGraph(nodes={"input": nir.Input(np.array([2])),
                                "mystery": nir.Scale(np.ones(2, np.float32)),
                                "output": nir.Output(np.array([2]))},
                         edges=[("input", "mystery"), ("mystery", "output")])
    nir.write(str(path), graph)
    with h5py.File(path, "r+") as f:
        node = f["node/nodes/mystery"]
        del node["type"]
        node["type"] = np.bytes_("Wobble")
    return path


def test_an_unknown_node_type_is_named(tmp_path):
    from neuromark.errors import DataError

    path = unknown_node_graph(tmp_path / "g.nir")
    with pytest.raises(DataError, match=r"g\.nir: node 'mystery' has type 'Wobble', which nir "
                                        r"[\d.]+ does not know"):
        from_nir(path)


def test_a_nir_model_run_is_not_flagged_untrained(tmp_path, monkeypatch, capsys):
    """A NIR file carries trained weights: a ``model: {name: nir}`` run is not flagged
    "untrained: weights as the factory built them", and names the file it read."""
    import json
    from pathlib import Path

    from neuromark.cli import main
    from neuromark.data.hdf5_spikes import write_shd_file
    from neuromark.models.untrained import UNTRAINED_FLAG, untrained_flag
    from tests.test_nir import write_small_nir

    write_small_nir(tmp_path / "net.nir")
    monkeypatch.chdir(tmp_path)
    write_shd_file("test.h5", [[0.001, 0.012, 0.03]] * 4, [[0, 1, 3]] * 4, [0, 1, 0, 1])
    (tmp_path / "nir.yaml").write_text(f"""task: classification
benchmark: {{id: spikes-nir, version: "1.0"}}
dataset: {{name: spike_files, options: {{test: test.h5, channels: 4, dt_us: 10000,
                                          t_max_us: 50000}}}}
model: {{name: nir, options: {{path: {tmp_path / 'net.nir'}}}}}
eval: {{postprocessor: spike_count, metrics: [classification_accuracy]}}
""")
    assert main(["run", "nir.yaml", "--out", "out"]) == 0
    assert UNTRAINED_FLAG not in capsys.readouterr().err
    results = json.load(open(next(Path("out").glob("spikes-nir--*.json"))))
    assert UNTRAINED_FLAG not in json.dumps(results.get("flags", []))
    assert results["details"]["weights_file"] == str(tmp_path / "net.nir")
    adapter = from_nir(tmp_path / "net.nir")
    assert untrained_flag(adapter.module, None) is None  # in Python too
    # a graph handed over in memory has no file: the weights are tested as before
    assert not hasattr(from_nir(nir.read(str(tmp_path / "net.nir"))), "weights_file")
