"""NIR graphs exported by four frameworks for the NIR paper, end to end (issue 42).

Sinabs (CNN), snnTorch (recurrent braille net), Norse (LIF) and Rockpool (LIF, NIR 0.2.0:
nir 1.0.8's type check refuses its stored Output type). Each is imported, run on spikes of
its input shape, and counted by the harness; the dense synaptic operations are counted
here by hand from the graph's parameters.
"""

from __future__ import annotations

import json
import warnings

import pytest
import torch

from neuromark import Benchmark
from neuromark.metrics.complexity import ActivationSparsity, SynapticOperations
from neuromark.metrics.neuron_ops import NeuronOperations
from tests.realdata import real_file

nir = pytest.importorskip("nir", reason="NIR tests need the 'nir' extra")
from neuromark.models.nir_model import from_nir  # noqa: E402

T = 4  # time steps


def _dense_per_step(model) -> int:
    """Dense synaptic operations of one time step, from the graph: every weight of a
    linear layer; for a convolution, the input-output connections that exist (a
    convolution of ones over an input of ones: padding positions carry none)."""
    total = 0
    for node, name in model.module.names.items():
        layer = model.module.layers[name]
        if isinstance(layer, torch.nn.Linear):
            total += layer.weight.numel()
        elif isinstance(layer, torch.nn.Conv2d):
            (source,) = model.module.preds[node]
            ones = torch.ones(1, *model.module.shapes[source])
            total += int(torch.nn.functional.conv2d(
                ones, torch.ones_like(layer.weight), stride=layer.stride, padding=layer.padding,
                dilation=layer.dilation, groups=layer.groups).sum())
    return total


@pytest.mark.parametrize(("name", "in_shape", "out_shape", "dense"), [
    ("nir/cnn_sinabs.nir", (2, 34, 34), (10,), 838_688),
    ("nir/braille_noDelay_bias_zero.nir", (12,), (7,), 38 * 12 + 38 * 38 + 7 * 38),
    ("nir/lif_norse.nir", (1,), (1,), 1),
    ("nir/lif_rockpool.nir", (1,), (1,), 1),
])
def test_real_nir_graph_imports_runs_and_counts(tmp_path, name, in_shape, out_shape, dense):
    path = real_file(name, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = from_nir(path)
    old = name.endswith("rockpool.nir")
    assert bool(model.notes) == old
    assert any("written by NIR 0.2.0" in str(w.message) for w in caught) == old
    if old:
        assert "output: input [1, 1, 1] -> [1]" in model.notes[0]
    generator = torch.Generator().manual_seed(0)
    spikes = (torch.rand((2, T, *in_shape), generator=generator) < 0.3).float()
    out = model(spikes)
    assert tuple(out.shape) == (2, T, *out_shape) and torch.isfinite(out).all()
    res = Benchmark(model, [(spikes, torch.zeros(2))], quiet=True,
                    metrics=[SynapticOperations(), ActivationSparsity(), NeuronOperations()]).run()
    ops = res["synaptic_operations"]
    assert _dense_per_step(model) == dense
    assert ops["Dense"] == T * dense
    assert 0 <= ops["Effective_ACs"] + ops["Effective_MACs"] <= ops["Dense"]
    assert 0.0 <= res["activation_sparsity"] <= 1.0


def test_the_old_file_is_noted_in_the_results_model_block(tmp_path, monkeypatch):
    from neuromark.cli import main
    from neuromark.data.hdf5_spikes import write_shd_file

    net = real_file("nir/lif_rockpool.nir", tmp_path)
    monkeypatch.chdir(tmp_path)
    write_shd_file("test.h5", [[0.001, 0.012, 0.03]] * 2, [[0, 0, 0]] * 2, [0, 0])
    (tmp_path / "nir.yaml").write_text(f"""task: classification
benchmark: {{id: rockpool-lif, version: "1.0"}}
dataset: {{name: spike_files, options: {{test: test.h5, channels: 1, dt_us: 10000,
                                          t_max_us: 50000}}}}
model: {{name: nir, options: {{path: {net}}}}}
eval: {{postprocessor: spike_count, metrics: [synaptic_operations]}}
""")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["run", "nir.yaml", "--out", "out", "--quiet"]) == 0
    result = json.loads(next((tmp_path / "out").glob("rockpool-lif--*.json")).read_text())
    notes = result["model"]["notes"]
    assert len(notes) == 1 and "read without nir's type check" in notes[0]
    assert result["scores"]["synaptic_operations"]["value"]["Dense"] == 5  # 5 bins x 1 weight
