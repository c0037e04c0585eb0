"""Footprint at each tensor's stored precision: a 2-bit net declared by its adapter, a
ternary QAT net (torch.ao fake-quant observer), torch's quantised dtypes and modules;
hand-counted bytes (packed, rounded up per tensor)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from neuromark.metrics.functional.precision import operand_bits, packed_bytes
from neuromark.metrics.static import Footprint
from neuromark.models.torch_model import TorchModel


def two_layer():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 7), nn.ReLU(), nn.Linear(7, 3))


def test_packing_rounds_up_per_tensor():
    assert packed_bytes(70, 2) == 18 and packed_bytes(8, 1) == 1 and packed_bytes(9, 1) == 2
    assert packed_bytes(15, 2) == 4 and packed_bytes(3, 32) == 12


def test_a_two_bit_weight_declared_by_the_adapter():
    net = two_layer()
    plain = Footprint().compute(TorchModel(net))
    assert plain.value == (70 + 7 + 21 + 3) * 4 == 404  # float32: neurobench's count too
    assert plain.raw["precision"] == {}
    score = Footprint().compute(TorchModel(net, weight_bits={"0.weight": 2}))
    # 70 weights x 2 bits = 140 bits -> 18 bytes; the rest float32: 7 + 21 + 3 values
    assert score.raw["parameters"] == 18 + (7 + 21 + 3) * 4 == 142
    assert score.value == 142 and score.raw["buffers"] == 0
    assert score.raw["precision"] == {"0.weight": {"bits": 2, "source":
                                                   "declared by the adapter (weight_bits)",
                                                   "dtype_bits": 32}}
    assert operand_bits(TorchModel(net, weight_bits={"0.weight": 2})) == {
        "0.weight": 2, "0.bias": 32, "2.weight": 32, "2.bias": 32}
    net.neuromark_weight_bits = {"2.weight": 1}  # declared on the network
    assert Footprint().compute(TorchModel(net)).value == (70 + 7 + 3) * 4 + 3  # 21 bits -> 3 B


def test_bad_declarations_are_refused_naming_them():
    net = two_layer()
    with pytest.raises(ValueError, match=r"'fc1.weight' is no parameter.*did you mean 0.weight, 2.weight"):
        Footprint().compute(TorchModel(net, weight_bits={"fc1.weight": 2}))
    for bad in (0, 65, 2.5, True):
        with pytest.raises(ValueError, match="integer number of bits"):
            Footprint().compute(TorchModel(net, weight_bits={"0.weight": bad}))


def test_a_ternary_qat_net_from_its_fake_quant_observer():
    from torch.ao.nn.qat import Linear as QATLinear
    from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver, QConfig

    ternary = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-1,
                                     quant_max=1, dtype=torch.qint8)
    qconfig = QConfig(activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver),
                      weight=ternary)
    layer = QATLinear(5, 3, qconfig=qconfig)
    score = Footprint().compute(TorchModel(nn.Sequential(layer)))
    # {-1, 0, 1}: 3 levels -> 2 bits; 15 weights -> 30 bits -> 4 bytes; bias 3 x float32
    assert score.raw["parameters"] == 4 + 12
    assert score.raw["precision"]["0.weight"]["bits"] == 2
    assert "[-1, 1]: 3 levels" in score.raw["precision"]["0.weight"]["source"]
    # the observer's own buffers (scale, zero point, min/max, flags) at their dtypes
    assert score.raw["buffers"] == sum(b.numel() * b.element_size() for b in layer.buffers())


def test_quantised_dtypes_and_modules():
    import torch.ao.nn.quantized as nnq

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = nnq.Linear(4, 3)  # weights packed outside parameters: 12 x qint8 + scale/zero point
        assert Footprint().compute(TorchModel(nn.Sequential(q))).value == 12 + 8 + 3 * 4
        holder = nn.Module()
        holder.register_buffer("codes", torch.quantize_per_tensor(torch.rand(10), 0.1, 0,
                                                                  torch.quint4x2))
    score = Footprint().compute(TorchModel(holder))
    # element_size() says 1 byte each; stored 4 bits: 10 x 4 = 40 bits -> 5 B, + 8 B params
    assert score.raw["buffers"] == 5 + 8 and score.raw["precision"]["codes"]["bits"] == 4
