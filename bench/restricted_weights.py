"""Synaptic operations of a tiny net with restricted weights (issue 31.2), neuromark beside
neurobench 2.3.0's ``SynapticOperations``: fc1 3->2 ternary [[1, 0, -1], [0, 1, 1]], fc2
2->1 powers of two [[0.5, -2]], one real-valued sample x = [0.5, 2, 0]
(``tests/test_restricted_weights.py`` holds the hand counts).

Run it in the scratch venv of ``scripts/reference_checks.sh`` (neurobench is never a
dependency of neuromark)::

    bash scripts/reference_checks.sh      # creates .cache/reference-venv
    .cache/reference-venv/bin/python bench/restricted_weights.py
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from neurobench.benchmarks import Benchmark as NBBenchmark
from neurobench.metrics.workload import SynapticOperations as NBSynapticOperations
from neurobench.models import TorchModel as NBTorchModel
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from neuromark import Benchmark
from neuromark.metrics.complexity import SynapticOperations

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_restricted_weights import X, tiny_net  # noqa: E402  (the hand-counted net)


def row(name: str, ops: dict) -> str:
    return (f"| {name} | {ops['Effective_MACs']:g} | {ops['Effective_ACs']:g} | "
            f"{ops['Dense']:g} |")


def neurobench(net: nn.Module) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = DataLoader(TensorDataset(X, torch.zeros(1)), batch_size=1)
        return NBBenchmark(NBTorchModel(net), loader, [], [],
                           [[], [NBSynapticOperations]]).run(quiet=True, verbose=False)


def main() -> None:
    data = [(X, torch.zeros(1))]
    header = "| counter | Effective_MACs | Effective_ACs | Dense |\n|---|---|---|---|"
    print(header)
    for name, options in (("neuromark (default: ternary_as_ac)", {}),
                          ("neuromark shift_as_ac: true", {"shift_as_ac": True}),
                          ("neuromark ternary_as_ac: false", {"ternary_as_ac": False})):
        metric = SynapticOperations(**options)
        ops = Benchmark(tiny_net(), data, metrics=[metric], quiet=True).run()
        print(row(name, ops["synaptic_operations"]))
    print(row("neurobench 2.3.0", neurobench(tiny_net())["SynapticOperations"]))

if __name__ == "__main__":
    main()
