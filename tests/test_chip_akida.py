"""The Akida SUT (issue 44): our quantisation onto the SDK's Dense1D arithmetic, the SUT on
the SDK's software engine with its virtual-device mapping, a system run, and the real-chip
paths (board lookup, the SDK's power meter) with fakes of the board interfaces."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

akida_sdk = pytest.importorskip("akida", reason="the Akida SDK is absent: pip install 'neuromark[akida]'")

from neuromark.errors import ConfigError, DataError, ModelOutputError  # noqa: E402
from neuromark.system.chips.akida_quant import build_akida_mlp, multiplier  # noqa: E402
from neuromark.system.chips.akida_sut import akida  # noqa: E402
from neuromark.system.chips.meters import AkidaPowerMeter  # noqa: E402
from neuromark.system.chips.training import mlp_forward  # noqa: E402

TINY = dict(hidden=16, groups=10, time_bins=2, epochs=15, train_samples=60, samples=12)


def test_multiplier_represents_the_factor():
    m = np.array([1e-4, 0.013, 0.5, 1.0, 3.7, 200.0])
    scale, shift = multiplier(m)
    assert scale.dtype == np.uint8 and shift.dtype == np.int8
    assert np.all(scale >= 128)
    np.testing.assert_allclose(scale * 2.0 ** shift.astype(float), m, rtol=1 / 128)


def test_engine_follows_the_float_mlp():
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(12, 8)), rng.normal(size=8) * 0.1), (rng.normal(size=(8, 4)), np.zeros(4))]
    x = rng.integers(0, 100, size=(64, 12))
    model, bits = build_akida_mlp(akida_sdk, layers, 12, x, in_scale=0.01)
    assert bits == [8, 8]
    out = model.forward(x.astype(np.int8).reshape(-1, 1, 1, 12)).reshape(64, -1).astype(float)
    ref = mlp_forward(layers, x * 0.01)
    scale = np.abs(ref).max() / 127.0  # the common output scale of the last layer
    assert np.abs(out * scale - ref).max() < 0.08 * np.abs(ref).max()
    assert np.mean(out.argmax(1) == ref.argmax(1)) > 0.9


def test_sut_reports_sdk_mapping_and_both_accuracies():
    built = akida(**TINY)
    info = built.info
    assert info["sdk"] == {"name": "akida", "package": "akida", "version": akida_sdk.__version__}
    assert info["target"]["kind"] == "virtual" and info["target"]["name"] == "SixNodesIPv2"
    mapping = info["mapping"]
    assert mapping["nps_used"] >= 2 and mapping["nps_available"] == 24
    assert all(s["backend"] == "Hardware" for s in mapping["sequences"])
    assert [len(layer["nps"]) for layer in mapping["layers"]] == [1, 1]
    assert mapping["layers"][0]["nps"][0]["neurons"] == 16 and mapping["weight_bits"] == [8, 8]
    # the responses are the SDK engine's: their accuracy is the engine's accuracy
    n = built.library.total_count
    built.library.load(list(range(n)))
    responses = np.stack([built.sut.issue([i])[0] for i in range(n)])
    assert responses.shape == (n, 20)
    assert np.mean(responses.argmax(1) == built.labels) == pytest.approx(info["sdk_engine_accuracy"])
    assert built.scores["float_accuracy"].value == pytest.approx(info["float_accuracy"])


def test_hardware_target_maps_onto_the_listed_board(monkeypatch):
    monkeypatch.setattr(akida_sdk, "devices", lambda: [])
    with pytest.raises(ConfigError, match=r"hardware_index: 0, but akida.devices\(\) lists 0"):
        akida(target="hardware", **TINY)
    # a virtual device stands in for the board akida.devices() lists: the model is mapped onto
    # it (the mapping reported is the board's), and inference goes to it (a virtual device
    # refuses, so the first query fails naming the SUT and the sample)
    board = akida_sdk.TwoNodesIPv2()
    monkeypatch.setattr(akida_sdk, "devices", lambda: [board])
    built = akida(target="hardware", **TINY)
    assert built.info["target"]["kind"] == "hardware" and built.info["mapping"]["nps_available"] == 8
    built.library.load([0])
    with pytest.raises(ModelOutputError, match="akida-hardware-mlp.*sample 0.*hardware device"):
        built.sut.issue([0])


class FakeSocMeter:
    """The SDK's PowerMeter as a board presents it: pending PowerEvents (ts ms, power mW)."""

    def __init__(self):
        self.pending = []
        self.floor = 250.0

    def events(self):
        out, self.pending = self.pending, []
        return out


def test_akida_power_meter_reads_the_socs_events():
    fake = FakeSocMeter()
    meter = AkidaPowerMeter(interval_s=10.0)
    meter.open_board = lambda: fake
    meter.start()
    fake.pending = [SimpleNamespace(ts=1000.0 + k, power=500.0) for k in range(0, 101, 10)]
    t0 = meter.mark("begin")  # anchors device ms 1100 at this host time
    assert meter.samples_in(t0 - 0.1 - 1e-9, t0 + 1e-9) == 11  # 100 ms before the anchor
    assert meter.energy(t0 - 0.09, t0) == pytest.approx(0.5 * 0.09)  # 0.5 W for 90 ms
    meter.stop()
    meta = meter.metadata()
    assert meta["measured"] and meta["floor_w"] == pytest.approx(0.25)


def test_akida_power_meter_without_a_board(monkeypatch):
    monkeypatch.setattr(akida_sdk, "devices", lambda: [])
    with pytest.raises(DataError, match="akida.devices.. lists 0 board"):
        AkidaPowerMeter().start()
