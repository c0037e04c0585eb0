"""ONNX export checked with onnxruntime (extra ``onnx``): outputs equal the torch model's,
a model with an internal time loop exports, one that keeps state across calls is refused,
and ``neuromark export onnx CONFIG OUT`` on a toy classification config."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

ort = pytest.importorskip("onnxruntime")

from neuromark.errors import ConfigError  # noqa: E402
from neuromark.models.onnx_export import export_onnx  # noqa: E402


class TimeLoopSNN(nn.Module):
    """Leaky integrate-and-fire over T steps inside one call (state made in forward)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, T, 6)
        mem = torch.zeros(x.shape[0], 4)
        counts = torch.zeros(x.shape[0], 4)
        for t in range(x.shape[1]):
            mem = 0.9 * mem + self.fc(x[:, t])
            spk = (mem > 0.5).float()
            mem = mem - spk * 0.5
            counts = counts + spk
        return counts


class Streaming(nn.Module):
    """Keeps its membrane from one call to the next."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 4)
        self.mem = torch.zeros(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.mem = 0.9 * self.mem + self.fc(x)
        return self.mem


def test_a_feed_forward_net_exports_and_onnxruntime_agrees(tmp_path):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    x = torch.randn(5, 6)
    report = export_onnx(net, x, tmp_path / "m.onnx")
    session = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
    # another batch size than the traced one: the batch axis is dynamic
    y = torch.randn(2, 6)
    (got,) = session.run(None, {"input": y.numpy()})
    assert np.allclose(got, net(y).detach().numpy(), atol=1e-5, rtol=1e-4)
    assert report["max_abs_diff"] <= 1e-5 and report["outputs"] == [[5, 3]]


def test_an_internal_time_loop_exports_and_state_across_calls_is_refused(tmp_path):
    torch.manual_seed(1)
    x = torch.rand(3, 8, 6)
    export_onnx(TimeLoopSNN(), x, tmp_path / "snn.onnx")
    assert (tmp_path / "snn.onnx").is_file()
    with pytest.raises(ConfigError, match="keeps state from one call to the next"):
        export_onnx(Streaming(), torch.rand(3, 6), tmp_path / "s.onnx")
    assert not (tmp_path / "s.onnx").exists()


def test_cli_exports_a_config_s_model(tmp_path, capsys):
    from test_devices import toy_config

    from neuromark.cli import main

    path = toy_config(tmp_path, kind="snn")
    capsys.readouterr()
    assert main(["export", "onnx", str(path), str(tmp_path / "toy.onnx"), "--quiet"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out[out.index("{"):])
    assert report["path"] == str(tmp_path / "toy.onnx") and (tmp_path / "toy.onnx").is_file()
    assert report["max_abs_diff"] <= 1e-5 and report["input_shape"][0] == 6  # eval batch


def test_nir_export_of_an_snntorch_net_reads_back_equal(tmp_path):
    import warnings

    pytest.importorskip("snntorch")
    pytest.importorskip("nir")
    from test_nir import X, leaky_net

    from neuromark.commands.export import export_nir

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = export_nir(leaky_net("zero"), X, tmp_path / "net.nir", "cfg")
    assert report["round_trip_equal"] and report["max_abs_diff"] == 0.0
    assert (tmp_path / "net.nir").is_file()
    with pytest.raises(ConfigError, match="holds no snnTorch layer"):
        export_nir(nn.Sequential(nn.Linear(6, 3)), X, tmp_path / "plain.nir", "cfg")
    assert not (tmp_path / "plain.nir").exists()
