"""A user's own ONNX model on the Akida virtual device (issue 57.3): an MLP written with the
onnx library's helpers (not by neuromark) deploys through neuromark's quantiser onto the
SDK's Dense1D layers and runs; what a Dense1D chain cannot be is refused naming the node and
the rule (before the SDK is asked)."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.errors import ConfigError
from neuromark.system.chips.onnx_akida import read_onnx_mlp

onnx = pytest.importorskip("onnx", reason="onnx is absent: pip install 'neuromark[onnx]'")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def users_onnx(path, sizes=(672, 16, 8), hidden_op="Relu", last_relu=False, seed=0, conv=False):
    """An MLP in ONNX as a user's exporter writes it: Gemm (transB=1) layers, ReLU between."""
    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "x"
    if conv:
        nodes.append(helper.make_node("Conv", ["x", "k"], ["c"], name="conv1"))
        inits.append(numpy_helper.from_array(np.ones((1, 1, 3), np.float32), "k"))
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        w = numpy_helper.from_array((rng.normal(0, 0.1, (n_out, n_in))).astype(np.float32), f"w{i}")
        b = numpy_helper.from_array(rng.normal(0, 0.1, n_out).astype(np.float32), f"b{i}")
        inits += [w, b]
        nodes.append(helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [f"h{i}"], name=f"fc{i}",
                                      transB=1))
        prev = f"h{i}"
        if i < len(sizes) - 2 or last_relu:
            nodes.append(helper.make_node(hidden_op, [prev], [f"a{i}"], name=f"act{i}"))
            prev = f"a{i}"
    graph = helper.make_graph(nodes, "users_mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, sizes[0]])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, sizes[-1]])],
                              inits)
    onnx.save(helper.make_model(graph), str(path))
    return path


def test_read_onnx_mlp_gives_the_users_weights(tmp_path):
    layers = read_onnx_mlp(users_onnx(tmp_path / "m.onnx"))
    assert [w.shape for w, _ in layers] == [(672, 16), (16, 8)]
    model = onnx.load(str(tmp_path / "m.onnx"))
    w0 = numpy_helper.to_array(model.graph.initializer[0])
    assert np.allclose(layers[0][0], w0.T)  # Gemm transB=1: (out, in) stored


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"hidden_op": "Sigmoid"}, r"node 'act0' \(Sigmoid\) cannot go onto Akida: Akida 2.0 Dense1D "
                               r"layers activate with ReLU only"),
    ({"last_relu": True}, r"node 'fc1': the output layer must give raw scores"),
    ({"conv": True}, r"node 'conv1' \(Conv\) cannot go onto Akida: this path maps dense layers only"),
])
def test_what_dense1d_cannot_be_is_refused_naming_node_and_rule(tmp_path, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        read_onnx_mlp(users_onnx(tmp_path / "bad.onnx", **kwargs))


def test_a_users_onnx_mlp_runs_on_the_akida_virtual_device(tmp_path):
    pytest.importorskip("akida", reason="the akida SDK is absent (docs/chips.md: installing)")
    from neuromark.system.chips.akida_sut import akida

    users_onnx(tmp_path / "my_mlp.onnx")
    built = akida(task="spoken_digits_8", onnx="my_mlp.onnx", config_dir=tmp_path,
                  train_samples=80, samples=40)
    info = built.info
    assert info["model"] == {"kind": "onnx", "path": str((tmp_path / "my_mlp.onnx").absolute()),
                             "layers": [[672, 16], [16, 8]]}
    assert info["label"] == "akida-virtual-SixNodesIPv2-my_mlp"
    assert info["mapping"]["nps_used"] >= 2 and info["weights"] == "from my_mlp.onnx"
    built.library.load([0])
    assert built.sut.issue([0])[0].shape == (8,)
    users_onnx(tmp_path / "wide.onnx", sizes=(600, 16, 8))
    with pytest.raises(ConfigError, match="takes 600 inputs; the task's features are 672"):
        akida(task="spoken_digits_8", onnx=str(tmp_path / "wide.onnx"), samples=10)
