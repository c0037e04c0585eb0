"""NeuroBench's trained baselines (configs/neurobench_v1): our footprint under NeuroBench's
rule, parameter count, connection sparsity and Dense equal neurobench 2.3.0's own metrics on
the same loaded checkpoint and example input (a reference, never a dependency; skipped
unless neurobench imports; ``scripts/reference_checks.sh`` runs it in a scratch venv)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

pytestmark = pytest.mark.reference

if os.environ.get("NEUROMARK_REQUIRE_REFERENCE"):  # scripts/reference_checks.sh: must run
    import neurobench.benchmarks as nb_bench
else:
    nb_bench = pytest.importorskip("neurobench.benchmarks")
    pytest.importorskip("snntorch")

import yaml  # noqa: E402
from neurobench.metrics import static as nb_static  # noqa: E402
from neurobench.metrics import workload as nb_workload  # noqa: E402
from neurobench.models import SNNTorchModel as NBSNNTorchModel  # noqa: E402
from neurobench.models import TorchModel as NBTorchModel  # noqa: E402

from neuromark.benchmarks.neurobench_v1.models import BASELINES  # noqa: E402
from neuromark.benchmarks.neurobench_v1.task import load_row_model  # noqa: E402
from neuromark.config import load_config  # noqa: E402
from neuromark.context import RunContext  # noqa: E402
from neuromark.registry import tasks  # noqa: E402
from neuromark.tasks.base import plan_and_run  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "neurobench_v1"
ROWS = [p for p in sorted(CONFIGS.glob("*.yaml"))
        if yaml.safe_load(p.read_text()).get("task") == "neurobench_v1_row"]


def neurobench_figures(plan) -> dict:
    """neurobench 2.3.0's Footprint, ParameterCount, ConnectionSparsity and Dense on the
    row's checkpoint in our module, fed the row's zero example input (``plan``: the row
    config's plan)."""
    import snntorch as snn

    row = plan.settings.model_dump()
    net, _ = load_row_model(plan.settings, plan.config)
    if BASELINES[row["model"]["name"]][1] == "snntorch":
        model = NBSNNTorchModel(net)
    else:
        model = NBTorchModel(net)
        model.add_activation_module(snn.SpikingNeuron)
    example = torch.zeros(row["example_shape"])
    loader = DataLoader(TensorDataset(example, torch.zeros(example.shape[0])),
                        batch_size=example.shape[0])
    static = [nb_static.Footprint, nb_static.ParameterCount, nb_static.ConnectionSparsity]
    out = nb_bench.Benchmark(model, loader, [], [], [static, [nb_workload.SynapticOperations]]
                             ).run(verbose=False)
    dense = out["SynapticOperations"]["Dense"]
    if row.get("dense_divisor"):
        dense = dense * example.shape[0] / row["dense_divisor"]
    return {"footprint_neurobench": out["Footprint"], "parameter_count": out["ParameterCount"],
            "connection_sparsity": out["ConnectionSparsity"], "dense": dense}


@pytest.mark.parametrize("path", ROWS, ids=[p.stem for p in ROWS])
def test_static_figures_equal_neurobench(path, tmp_path):
    task, config = tasks.get("neurobench_v1_row"), load_config(path)
    plan = task.plan(config, RunContext.build(quiet=True, out_dir=tmp_path))
    row = plan.settings.model_dump()
    theirs = neurobench_figures(plan)
    ours = plan_and_run(task, load_config(path), tmp_path, quiet=True)[0].scores
    assert ours["footprint_neurobench"].value == theirs["footprint_neurobench"]
    assert ours["parameter_count"].value == theirs["parameter_count"]
    assert ours["connection_sparsity"].value == pytest.approx(theirs["connection_sparsity"], abs=5e-5)
    assert ours["dense"].value == pytest.approx(theirs["dense"], rel=1e-9), (ours["dense"], theirs)
    published = row.get("published") or {}
    if "footprint" in published:  # NeuroBench's own figure for its own model class
        assert theirs["footprint_neurobench"] == published["footprint"]
