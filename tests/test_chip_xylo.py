"""The Xylo SUT (issue 44): Rockpool's Xylo Audio 2 support importable without the board
driver, our LIF trainer against Rockpool's LIFTorch, the SUT on XyloSim with Rockpool's
mapping, and the real-board paths (XyloSamna, the power monitor) with fakes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("rockpool", reason="Rockpool is absent: pip install 'neuromark[xylo]' and "
                                       "bash scripts/chip_sdks.sh")
pytest.importorskip("xylosim", reason="xylosim is absent: bash scripts/chip_sdks.sh builds it")

import torch  # noqa: E402

from neuromark.errors import ConfigError, DataError  # noqa: E402
from neuromark.system.chips import xylo_sut  # noqa: E402
from neuromark.system.chips.meters import XyloPowerMeter  # noqa: E402
from neuromark.system.chips.rockpool_xylo import lif_forward, lif_network, output_isyn, xylo_audio2  # noqa: E402

TINY = dict(hidden=8, classes=4, dt_us=40_000, epochs=5, train_samples=80, samples=40)


def test_xylo_audio2_imports_without_samna():
    a2 = xylo_audio2()
    assert callable(a2.mapper) and hasattr(a2.XyloSim, "from_specification")


def test_lif_forward_is_rockpools_lif():
    net = lif_network(16, 6, 3, dash_mem=3, dash_syn=2, dt_s=0.02, seed=1)
    x = torch.as_tensor(np.random.default_rng(0).integers(0, 4, size=(2, 12, 16)), dtype=torch.float32)
    linear = [m for m in net.modules().values() if type(m).__name__ == "LinearTorch"]
    with torch.no_grad():
        ours = lif_forward([m.weight for m in linear], x, alpha=1 - 2 ** -3, beta=1 - 2 ** -2)
        theirs = output_isyn(net, x)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)


def test_sut_on_xylosim_reports_the_mapping_and_both_accuracies():
    built = xylo_sut.xylo(**TINY)
    info = built.info
    assert info["sdk"]["name"] == "rockpool" and info["sdk"]["version"] == "3.1.0"
    assert info["target"]["kind"] == "simulator" and info["target"]["version"] == "0.1.3"
    mapping = info["mapping"]
    assert (mapping["input_channels"], mapping["hidden_neurons"], mapping["output_neurons"]) == (16, 8, 4)
    low, high = mapping["weight_range"]
    assert mapping["weight_bits"] == 8 and -128 <= low <= high <= 127
    assert info["classes"]["names"] == ["english-zero", "english-one", "english-two", "english-three"]
    assert set(built.labels.tolist()) <= {0, 1, 2, 3}
    n = built.library.total_count
    built.library.load(list(range(n)))
    responses = np.stack([built.sut.issue([i])[0] for i in range(n)])
    assert responses.shape == (n, 4)
    # the same raster twice gives the same response: the simulator is reset per query
    np.testing.assert_array_equal(built.sut.issue([0])[0], responses[0])
    reference = np.stack(built.reference(list(range(n))))
    assert np.mean(reference.argmax(1) == built.labels) == pytest.approx(info["float_accuracy"])


class FakeXyloSamna:
    """XyloSamna as the SUT drives it: configured once, ``reset_state``, ``module(raster)``."""

    made: list = []

    def __init__(self, hdk, config, dt, output_mode):
        self.hdk, self.config, self.dt, self.output_mode = hdk, config, dt, output_mode
        self.calls = 0
        FakeXyloSamna.made.append(self)

    def reset_state(self):
        return self

    def __call__(self, raster):
        self.calls += 1
        out = np.zeros((raster.shape[0], 4))
        out[:, 2] = 1.0
        return out, {}, {}


def test_hardware_target_with_a_fake_board(monkeypatch):
    a2 = xylo_audio2()
    monkeypatch.setattr(xylo_sut, "find_hdks", lambda: ([], [], []))
    with pytest.raises(ConfigError, match=r"hardware_index: 0, but find_xylo_hdks\(\) found 0"):
        xylo_sut.xylo(target="hardware", **TINY)
    monkeypatch.setattr(xylo_sut, "find_hdks", lambda: (["hdk"], [None], ["syns63300"]))
    with pytest.raises(ConfigError, match="is a syns63300"):
        xylo_sut.xylo(target="hardware", **TINY)
    seen = {}

    def config_from_specification(**spec):
        seen.update(spec)
        return "config", True, ""

    monkeypatch.setattr(xylo_sut, "find_hdks", lambda: (["hdk"], [None], ["syns61201"]))
    monkeypatch.setattr(a2, "config_from_specification", config_from_specification, raising=False)
    monkeypatch.setattr(a2, "XyloSamna", FakeXyloSamna, raising=False)
    built = xylo_sut.xylo(target="hardware", **TINY)
    board = FakeXyloSamna.made[-1]
    assert (board.hdk, board.config, board.output_mode) == ("hdk", "config", "Isyn")
    assert seen["weights_in"].shape[:2] == (16, 8)  # the quantised specification went to the board
    assert built.info["target"] == {"kind": "hardware", "index": 0, "version": "syns61201"}
    built.library.load([0])
    assert built.sut.issue([0])[0].argmax() == 2 and board.calls == 1


class FakePowerBuffer:
    def __init__(self):
        self.pending = []

    def get_events(self):
        out, self.pending = self.pending, []
        return out


def test_xylo_power_meter_sums_the_rails():
    fake = FakePowerBuffer()
    meter = XyloPowerMeter(interval_s=10.0)
    meter.open_board = lambda: fake
    meter.start()
    fake.pending = [SimpleNamespace(channel=c, value=v) for c, v in ((0, 1e-3), (1, 2e-4), (0, 3e-3))]
    t1 = meter.mark("a")  # IO mean 2 mW + SNN core 0.2 mW
    fake.pending = [SimpleNamespace(channel=0, value=2e-3), SimpleNamespace(channel=1, value=2e-4)]
    t2 = meter.mark("b")
    meter.stop()
    assert meter.timeline()["power_w"][:2] == pytest.approx([2.2e-3, 2.2e-3])
    assert meter.energy(t1, t2) == pytest.approx(2.2e-3 * (t2 - t1))
    assert meter.metadata()["measured"] is True


def test_xylo_power_meter_without_the_board_driver():
    try:
        import samna  # noqa: F401
    except ImportError:
        xylo_audio2()  # the bare rockpool.devices.xylo package has no find_xylo_hdks either
        with pytest.raises(DataError, match="xylo_power needs samna"):
            XyloPowerMeter().start()
    else:
        pytest.skip("samna is installed: the board lookup runs for real")


def exported_snntorch_nir(path, hidden=6, outputs=4, bias=False):
    """A NIR file as neuromark exports it: an snnTorch Linear -> Synaptic net through
    neuromark.models.nir_model.to_nir (snnTorch's exporter), written by nir.write."""
    nir = pytest.importorskip("nir")
    snn = pytest.importorskip("snntorch")
    from neuromark.models.nir_model import to_nir

    def synaptic(n, **kw):
        return snn.Synaptic(alpha=torch.full((n,), 0.75), beta=torch.full((n,), 0.875),
                            threshold=torch.ones(n), reset_mechanism="zero", init_hidden=True, **kw)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.fc1, self.lif1 = torch.nn.Linear(16, hidden, bias=bias), synaptic(hidden)
            self.fc2, self.lif2 = torch.nn.Linear(hidden, outputs, bias=bias), synaptic(outputs, output=True)

        def forward(self, x):
            return self.lif2(self.fc2(self.lif1(self.fc1(x))))

    nir.write(str(path), to_nir(Net(), torch.zeros(16)))
    return path


def test_nir_from_neuromark_goes_to_xylosim_and_back(tmp_path):
    path = exported_snntorch_nir(tmp_path / "net.nir")
    built = xylo_sut.xylo(nir="net.nir", config_dir=tmp_path, dt_us=40_000, train_samples=20, samples=40)
    info = built.info
    assert info["model"]["nodes"] == {"input": "Input", "fc1": "Linear", "lif1": "CubaLIF",
                                      "fc2": "Linear", "lif2": "CubaLIF", "output": "Output"}
    assert (info["mapping"]["hidden_neurons"], info["mapping"]["output_neurons"]) == (6, 4)
    # back through Rockpool's exporter, neuromark's reader counts the same network
    assert info["nir"]["exported"] == info["nir"]["round_trip"] == {
        "parameter_count": 16 * 6 + 6 * 4, "connection_layers": 2, "weights": 16 * 6 + 6 * 4}
    built.library.load([0, 1])
    out = built.sut.issue([0])[0]
    assert out.shape == (4,) and np.all(out >= 0) and np.all(out == np.round(out))  # spike counts
    assert path.read_bytes()  # the input file is read, never changed


def users_nir_graph(path, hidden=12, outputs=8, inputs=16, bias=False, seed=3):
    """A NIR graph a user writes with the nir library alone (not neuromark, not snnTorch):
    16 inputs -> ``hidden`` CubaLIF -> ``outputs`` CubaLIF, dt 1 ms time constants."""
    nir = pytest.importorskip("nir")
    rng = np.random.default_rng(seed)

    def cuba(n):
        return nir.CubaLIF(tau_syn=np.full(n, 0.004), tau_mem=np.full(n, 0.008), r=np.full(n, 8.0),
                           v_leak=np.zeros(n), v_threshold=np.ones(n), w_in=np.ones(n))

    w1 = rng.normal(0, 0.5, (hidden, inputs))
    first = nir.Affine(weight=w1, bias=np.full(hidden, 0.1)) if bias else nir.Linear(weight=w1)
    graph = nir.NIRGraph(
        nodes={"input": nir.Input(input_type=np.array([inputs])), "dense_in": first,
               "hidden": cuba(hidden), "dense_out": nir.Linear(weight=rng.normal(0, 0.5, (outputs, hidden))),
               "readout": cuba(outputs), "output": nir.Output(output_type=np.array([outputs]))},
        edges=[("input", "dense_in"), ("dense_in", "hidden"), ("hidden", "dense_out"),
               ("dense_out", "readout"), ("readout", "output")])
    nir.write(str(path), graph)
    return path


def test_a_users_own_nir_graph_runs_on_xylosim(tmp_path):
    users_nir_graph(tmp_path / "my_net.nir")
    built = xylo_sut.xylo(nir="my_net.nir", config_dir=tmp_path, train_samples=10, samples=40)
    info = built.info
    assert info["model"]["nodes"]["readout"] == "CubaLIF" and info["label"] == "xylo-xylosim-my_net"
    assert (info["mapping"]["hidden_neurons"], info["mapping"]["output_neurons"]) == (12, 8)
    assert built.quantized_reference is not None and built.reference is not None
    assert info["nir"]["exported"]["weights"] == 16 * 12 + 12 * 8


def test_nir_that_xylo_cannot_hold_is_refused_naming_layer_and_rule(tmp_path):
    exported_snntorch_nir(tmp_path / "wide.nir", outputs=9)
    with pytest.raises(ConfigError, match=r"layer 'lif2' \(CubaLIF, the output layer\) has 9 "
                                          r"neurons; Xylo Audio 2 has 8 output neurons"):
        xylo_sut.xylo(nir=str(tmp_path / "wide.nir"), samples=10)
    users_nir_graph(tmp_path / "biased.nir", bias=True)
    with pytest.raises(ConfigError, match=r"layer 'dense_in' \(Affine\) cannot go to Xylo Audio 2: "
                                          r"Xylo's synapses have no bias"):
        xylo_sut.xylo(nir=str(tmp_path / "biased.nir"), samples=10)
    users_nir_graph(tmp_path / "many_inputs.nir", inputs=20)
    with pytest.raises(ConfigError, match=r"layer 'dense_in' \(Linear\) takes 20 inputs"):
        xylo_sut.xylo(nir=str(tmp_path / "many_inputs.nir"), samples=10)
    with pytest.raises(ConfigError, match="no such file"):
        xylo_sut.xylo(nir="missing.nir", config_dir=tmp_path)


def test_a_self_loop_on_rockpools_output_placeholder_is_dropped(monkeypatch):
    """Rockpool 3.1.0's exporter adds ``output -> output`` under some hash seeds (its edges
    come from a set); the graph handed back must not carry it, or NIR refuses the graph."""
    import types

    import nir
    import rockpool.nn.modules.torch.nir as rockpool_nir

    from neuromark.system.chips.nir_xylo import xylo_to_nir

    weight = np.ones((2, 3), np.float32)
    exported = types.SimpleNamespace(
        nodes={"input": None, "fc": nir.Linear(weight=weight), "output": None},
        edges=[("fc", "output"), ("output", "output"), ("input", "fc")])
    monkeypatch.setattr(rockpool_nir, "to_nir", lambda net, sample: exported)
    graph = xylo_to_nir(object(), inputs=3, outputs=2)
    assert sorted(graph.edges) == [("fc", "output"), ("input", "fc")]
    assert type(graph.nodes["output"]).__name__ == "Output"
