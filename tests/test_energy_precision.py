"""Issue 31.2: energy profiles price a layer's MACs at its weight's stored precision (the
footprint's declaration), the next wider width a profile lists as an upper bound."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark import Benchmark
from neuromark.metrics.energy import EnergyEstimate
from neuromark.metrics.functional.energy import mac_price
from neuromark.metrics.functional.energy_profiles import EnergyProfile, get_profile
from neuromark.models.torch_model import TorchModel

PJ = 1e-12


def net() -> nn.Module:
    """fc1 3->2 [[0.3, 0, -0.2], [0, 0.7, 0.1]], fc2 2->1 [[0.6, -0.3]] (no restricted
    weights). x = [0.5, 2, 0]: fc1 2 MACs (x0 meets 0.3, x1 meets 0.7), its output [0.15,
    1.4] meets both fc2 weights: 2 MACs; no ACs, no neurons."""
    layers = nn.Sequential(nn.Linear(3, 2, bias=False), nn.Linear(2, 1, bias=False))
    with torch.no_grad():
        layers[0].weight.copy_(torch.tensor([[0.3, 0.0, -0.2], [0.0, 0.7, 0.1]]))
        layers[1].weight.copy_(torch.tensor([[0.6, -0.3]]))
    return layers


def estimate(bits: dict[str, int]) -> tuple[dict, dict]:
    metric = EnergyEstimate()
    results = Benchmark(TorchModel(net(), weight_bits=bits),
                        [(torch.tensor([[0.5, 2.0, 0.0]]), torch.zeros(1))],
                        metrics=[metric], quiet=True).run()
    return results["energy_estimate"], metric.details()["profiles"]


def test_float32_weights_are_priced_as_before():
    value, profiles = estimate({})
    assert value == pytest.approx({"horowitz45-fp32": 4 * 4.6 * PJ, "horowitz45-fp16": 4 * 1.5 * PJ,
                                   "horowitz45-int32": 4 * 3.2 * PJ,
                                   "horowitz45-int8": 4 * 0.23 * PJ}, rel=1e-12)
    assert not any("operand_precision" in p for p in profiles.values())


def test_an_8_bit_layer_is_priced_at_8_bits_and_a_2_bit_one_as_an_upper_bound():
    value, profiles = estimate({"0.weight": 8})
    # int32 lists 8 bits: fc1 2 x 0.23 pJ exact, fc2 (float32) 2 x 3.2 pJ
    assert value["horowitz45-int32"] == pytest.approx((2 * 0.23 + 2 * 3.2) * PJ, rel=1e-12)
    assert profiles["horowitz45-int32"]["operand_precision"] == {
        "layers": {"0": {"bits": 8, "priced_at_bits": 8, "macs": 2.0, "mac_j": 0.23 * PJ,
                         "upper_bound": False}}, "upper_bound": False}
    # fp32 lists 16 and 32: fc1 at fp16's 1.5 pJ, an upper bound; fc2 4.6 pJ
    assert value["horowitz45-fp32"] == pytest.approx((2 * 1.5 + 2 * 4.6) * PJ, rel=1e-12)
    assert profiles["horowitz45-fp32"]["operand_precision"]["upper_bound"] is True
    # int8: fc1 at 8 bits is its own width (not listed as repriced); fc2 wider: mac_j
    assert value["horowitz45-int8"] == pytest.approx(4 * 0.23 * PJ, rel=1e-12)
    assert "operand_precision" not in profiles["horowitz45-int8"]
    value, profiles = estimate({"0.weight": 2})
    assert value["horowitz45-int32"] == pytest.approx((2 * 0.23 + 2 * 3.2) * PJ, rel=1e-12)
    assert profiles["horowitz45-int32"]["operand_precision"]["layers"]["0"]["upper_bound"]


def test_mac_price_rules():
    prof = get_profile("horowitz45-int32")
    assert mac_price(prof, 2) == (pytest.approx(0.23 * PJ), 8)
    assert mac_price(prof, 9) == (pytest.approx(3.2 * PJ), 32)
    assert mac_price(prof, 64) == (prof.mac_j, None) and mac_price(prof, None) == (prof.mac_j, None)
    plain = EnergyProfile(name="p", version="1", source="s", mac_j=1e-12, ac_j=1e-13)
    assert mac_price(plain, 2) == (1e-12, None)  # no widths listed: mac_j
    with pytest.raises(ValueError):
        EnergyProfile(name="p", version="1", source="s", mac_j=1e-12, ac_j=1e-13,
                      mac_j_by_bits={0: 1e-12})
