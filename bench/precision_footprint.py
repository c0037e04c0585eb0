"""Footprint at stored precision (neuromark) beside neurobench 2.3.0's ``Footprint`` on the
nets of ``tests/test_precision_footprint.py``: a 2-bit first weight declared by the adapter,
a ternary QAT Linear (torch.ao fake-quant, levels {-1, 0, 1}), torch's quantised Linear
(qint8, packed weights).

Run it in the scratch venv of ``scripts/reference_checks.sh`` (neurobench is never a
dependency of neuromark)::

    bash scripts/reference_checks.sh      # creates .cache/reference-venv
    .cache/reference-venv/bin/python bench/precision_footprint.py
"""

from __future__ import annotations

import warnings

import torch
from neurobench.metrics.static import Footprint as NBFootprint
from neurobench.models import TorchModel as NBTorchModel
from torch import nn
from torch.ao.nn.qat import Linear as QATLinear
from torch.ao.nn.quantized import Linear as QuantisedLinear
from torch.ao.quantization import FakeQuantize, MovingAverageMinMaxObserver, QConfig

from neuromark.metrics.static import Footprint
from neuromark.models.torch_model import TorchModel


def nets() -> dict[str, tuple[nn.Module, dict[str, int]]]:
    torch.manual_seed(0)
    ternary = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-1,
                                     quant_max=1, dtype=torch.qint8)
    qconfig = QConfig(activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver),
                      weight=ternary)
    return {
        "Linear(10,7)-ReLU-Linear(7,3), first weight 2-bit (declared)":
            (nn.Sequential(nn.Linear(10, 7), nn.ReLU(), nn.Linear(7, 3)), {"0.weight": 2}),
        "ternary QAT Linear(5,3)": (nn.Sequential(QATLinear(5, 3, qconfig=qconfig)), {}),
        "quantised Linear(4,3), qint8": (nn.Sequential(QuantisedLinear(4, 3)), {}),
    }


def main() -> None:
    print("| net | neuromark (B) | neurobench 2.3.0 (B) |")
    print("|---|---|---|")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (net, bits) in nets().items():
            ours = Footprint().compute(TorchModel(net, weight_bits=bits)).value
            theirs = NBFootprint()(NBTorchModel(net))
            print(f"| {name} | {ours} | {theirs:g} |")


if __name__ == "__main__":
    main()
