"""ONNX export of stateful models one time step at a time, the state as explicit inputs
and outputs (issue 31.6), checked with onnxruntime over a whole sample with the state fed
back; primate reaching's per-session decoders through ``neuromark export onnx``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch import nn

ort = pytest.importorskip("onnxruntime")

from neuromark.benchmarks.primate_reaching.models import SNN2  # noqa: E402
from neuromark.commands.export import time_steps  # noqa: E402
from neuromark.errors import ConfigError  # noqa: E402
from neuromark.models.onnx_export import export_onnx  # noqa: E402
from neuromark.networks.ridge_decoder import RidgeDecoder  # noqa: E402


class Streaming(nn.Module):
    """A leaky integrator keeping its membrane across calls: mem <- 0.5 mem + w x."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2, bias=False)
        self.mem: torch.Tensor | None = None

    def reset_state(self) -> None:
        self.mem = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 3), one step
        mem = torch.zeros(x.shape[0], 2) if self.mem is None else self.mem
        self.mem = 0.5 * mem + self.fc(x)
        return self.mem


class Counter(nn.Module):
    """State in a Python int: nothing ONNX could carry."""

    def __init__(self) -> None:
        super().__init__()
        self.t = 0

    def reset_state(self) -> None:
        self.t = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.t += 1
        return x * self.t


def test_stateful_step_export_matches_hand_values_with_state_fed_back(tmp_path):
    net = Streaming()
    with torch.no_grad():
        net.fc.weight.copy_(torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]))
    x = torch.tensor([[[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [2.0, 1.0, 5.0]]])  # (B=1, T=3, 3)
    steps = list(x.unbind(1))
    with pytest.raises(ConfigError, match="keeps state from one call to the next"):
        export_onnx(net, steps[0], tmp_path / "refused.onnx")
    report = export_onnx(net, steps[0], tmp_path / "s.onnx", steps=steps)
    assert report["stepped"] and report["state"] == {"mem": [1, 2]} and report["steps_checked"] == 3
    assert report["initial_state"] == {"mem": "zeros"}
    session = ort.InferenceSession(str(tmp_path / "s.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input", "state_0"]
    state, outs = np.zeros((1, 2), np.float32), []
    for step in steps:
        out, state = session.run(["output_0", "state_out_0"], {"input": step.numpy(), "state_0": state})
        outs.append(out[0].tolist())
    # by hand: mem = (1, 2); (0.5, 1); (0.25 + 2, 0.5 + 2)
    assert outs == [[1.0, 2.0], [0.5, 1.0], [2.25, 2.5]]


def test_primate_decoders_export_stepped_and_agree_with_one_call(tmp_path):
    torch.manual_seed(0)
    x = (torch.rand(1, 60, 5) < 0.3).float()
    for net, state in ((SNN2(5, hidden=8), {"lif1.mem": [1, 8], "lif1.syn": [1, 8],
                                             "out.mem": [1, 2], "out.syn": [1, 2]}),
                       (RidgeDecoder(5, lags=3, width=4), {"state.history": [1, 11, 5]})):
        steps, whole, time_dim = time_steps(net, net, x)
        assert len(steps) == 60 and whole is x and time_dim == 1
        report = export_onnx(net, x, tmp_path / "d.onnx", steps=steps, whole=whole)
        assert report["state"] == state and report["steps_checked"] == 60
        assert report["max_abs_diff"] <= 1e-5 and report["max_abs_diff_whole_call"] <= 1e-5


def test_state_onnx_cannot_carry_is_refused_and_nothing_written(tmp_path):
    x = torch.ones(1, 4, 2)
    steps, whole, _ = time_steps(Counter(), Counter(), x)
    with pytest.raises(ConfigError, match="no tensor attribute or buffer changed"):
        export_onnx(Counter(), x, tmp_path / "c.onnx", steps=steps, whole=whole)
    assert not list(tmp_path.iterdir())


def test_adapter_steps_are_its_time_axis():
    class Adapter:
        time_dim = 2

    x = torch.zeros(2, 3, 5)
    steps, whole, time_dim = time_steps(Adapter(), nn.Identity(), x)
    assert len(steps) == 5 and steps[0].shape == (2, 3) and whole is None and time_dim == 2


def test_cli_exports_a_primate_session_decoder(tmp_path, capsys):
    from test_primate_reaching_task import config

    from neuromark.cli import main

    cfg = config(tmp_path)
    out = tmp_path / "loco.onnx"
    capsys.readouterr()
    assert main(["export", "onnx", str(cfg.path), str(out), "--session", "loco_20170210_03",
                 "--quiet", "--cache-dir", str(tmp_path / "cache")]) == 0
    text = capsys.readouterr().out
    report = json.loads(text[text.index("{"):])
    assert report["session"] == "loco_20170210_03" and "loco_20170210_03's own" in report["decoder"]
    assert "loco_20170210_03" in report["checkpoint"] and out.is_file()
    assert report["steps_checked"] == 100 and report["state"] == {"state.history": [1, 39, 192]}
    assert report["max_abs_diff_whole_call"] <= 1e-5
    assert main(["export", "onnx", str(cfg.path), str(out), "--session", "nope", "--quiet",
                 "--overwrite", "--cache-dir", str(tmp_path / "cache")]) == 1
    assert "--session 'nope' is not one of the config's sessions" in capsys.readouterr().err


def test_snntorch_hidden_state_net_through_its_adapter_steps(tmp_path):
    """snnTorch neurons with init_hidden keep mem across calls (reset by reset_mem): one
    step per adapter call, membranes as state inputs, equal spikes at every step."""
    import warnings

    snn = pytest.importorskip("snntorch")
    from neuromark.models.snntorch_model import SNNTorchModel

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = nn.Sequential(nn.Linear(6, 8), snn.Leaky(beta=0.9, init_hidden=True), nn.Linear(8, 3),
                            snn.Leaky(beta=0.8, init_hidden=True, output=True))
        x = torch.rand(2, 10, 6)
        steps, whole, time_dim = time_steps(SNNTorchModel(net), net, x)
        report = export_onnx(net, steps[0], tmp_path / "snn.onnx", steps=steps, whole=whole,
                             time_dim=time_dim)
    assert whole is None and report["steps_checked"] == 10 and report["max_abs_diff"] <= 1e-5
    assert {"1.mem", "3.mem"} <= set(report["state"]) and report["state"]["3.mem"] == [2, 3]


def test_the_file_names_its_state_and_outputs_fed_back_by_name_equal_torch(tmp_path):
    """The stepped file names its state inputs and outputs in its metadata_props; a user
    reading only those feeds the outputs back by name over several steps and gets torch's
    outputs. A slot the step overwrites before reading has no graph input (torch drops
    it), so position would be wrong: the metadata says so (issue 55.6)."""
    import json

    ort = pytest.importorskip("onnxruntime", reason="onnxruntime (extra onnx) not installed")

    class Overwrites(nn.Module):
        """mem carries over; last_input is overwritten each step before it is read."""

        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.last_input, self.mem = None, None

        def reset_state(self) -> None:
            self.last_input, self.mem = None, None

        def forward(self, x):
            self.last_input = x * 2
            self.mem = self.fc(self.last_input) + (0.5 * self.mem if self.mem is not None else 0)
            return torch.tanh(self.mem)

    torch.manual_seed(0)
    net = Overwrites()
    steps = list(torch.rand(2, 6, 4).unbind(1))
    report = export_onnx(net, steps[0], tmp_path / "s.onnx", steps=steps)
    session = ort.InferenceSession(str(tmp_path / "s.onnx"), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    inputs = json.loads(meta["neuromark.state_inputs"])
    feeds = json.loads(meta["neuromark.state_feeds_back"])
    assert {v["slot"] for v in inputs.values()} == {"last_input", "mem"}
    dropped = [k for k, v in inputs.items() if not v["in_graph"]]
    assert [inputs[k]["slot"] for k in dropped] == ["last_input"]
    graph_inputs = [i.name for i in session.get_inputs()]
    assert graph_inputs == ["input", *[k for k, v in inputs.items() if v["in_graph"]]]
    assert report["state_feeds_back"] == feeds and "by name" in meta["neuromark.stepping"]
    # a user's loop, from the metadata alone
    state = {k: np.zeros(v["shape"], np.float32) for k, v in inputs.items() if v["in_graph"]}
    names = [o.name for o in session.get_outputs()]
    net.reset_state()
    for step in steps:
        got = dict(zip(names, session.run(None, {"input": step.numpy(), **state})))
        state = {feeds[out]: got[out] for out in feeds}
        with torch.no_grad():
            want = net(step).numpy()
        np.testing.assert_allclose(got[json.loads(meta["neuromark.outputs"])[0]], want, atol=1e-6)
