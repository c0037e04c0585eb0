"""The Mackey-Glass task's NeuroBench protocol options (configs/neurobench_v1/mackey_glass_esn*.yaml)
and the paper-size ESN's static figures against NeuroBench's published row (leaderboard.rst:
footprint 2.81e5 B, connection sparsity 0.876, Dense 3.52e4, effective MACs 4.37e3)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import yaml

from neuromark.benchmarks.mackey_glass.forecasters import EchoStateNetwork, ESNParams
from neuromark.benchmarks.mackey_glass.instances import DataSettings, ModelSettings, run_instance
from neuromark.benchmarks.mackey_glass.series import MackeyGlass, instance_start
from neuromark.errors import DataError

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "neurobench_v1"


def test_start_offsets_rounded_or_truncated():
    # instance k starts k * 0.5 * 75 = 37.5 k samples in: NeuroBench's int() truncates
    assert [instance_start(k, 0.5) for k in range(4)] == [0, 38, 75, 113]
    assert [instance_start(k, 0.5, offsets="truncated") for k in range(4)] == [0, 37, 75, 112]
    ours, theirs = MackeyGlass(17, 1), MackeyGlass(17, 1, offsets="truncated")
    assert theirs.train_split()[0][1, 0] == ours.train_split()[0][0, 0]  # one sample earlier
    with pytest.raises(DataError, match="offsets"):
        instance_start(1, 0.5, offsets="nearest")


def test_esn_protocol_options():
    small = {"reservoir_size": 12, "connection_probability": 0.5}
    ours = EchoStateNetwork(ESNParams(**small), seed=3)
    assert torch.linalg.eigvals(ours.w_rec.weight).abs().max().item() == pytest.approx(1.0)
    assert ours.w_in.weight.abs().max().item() <= 1.0
    nb = EchoStateNetwork(ESNParams(**small, input_weight_range=0.5, spectral_scaling="first_eigenvalue",
                                    first_forecast_input="ground_truth"), seed=3)
    assert nb.w_in.weight.abs().max().item() <= 0.5
    eig = torch.linalg.eigvals(nb.w_rec.weight).abs()
    assert eig[0].item() == pytest.approx(1.0)  # the first listed, not the largest
    assert eig.max().item() >= 1.0
    x = torch.sin(torch.linspace(0, 20, 120, dtype=torch.float64)).reshape(-1, 1)
    for model, first_counts in ((ours, False), (nb, True)):
        model.fit(x[:-1], x[1:])
        model.forecast = True
        state = (model.reservoir.clone(), model.prior.clone())
        a = model(torch.zeros(3, 1, dtype=torch.float64))
        model.reservoir, model.prior = state[0].clone(), state[1].clone()
        b = model(torch.full((3, 1), 0.7, dtype=torch.float64))
        assert bool((a[0] != b[0]).any()) is first_counts  # the first input is x[0] or not


def test_paper_size_esn_has_the_published_complexity():
    config = yaml.safe_load((CONFIGS / "mackey_glass_esn_neurobench_protocol.yaml").read_text())
    model = config["models"][0]
    params = ESNParams(**model["params"])
    out = run_instance(ModelSettings(name="esn", seed=model["seed"]), params, 17,
                       DataSettings(**config["data"]), None, 0, metrics=config["metrics"])
    c = out["complexity"]
    assert c["synaptic_operations"]["Dense"] == 35156  # 3.52e4: 186 x 2 + 186^2 + 188
    assert abs(c["synaptic_operations"]["Effective_MACs"] - 4.37e3) < 0.05 * 4.37e3
    assert abs(c["connection_sparsity"] - 0.876) < 0.005  # 0.876: the mean over 30 seeds
    # NeuroBench's rule on our module: its 281,248 B of float64 weights (= 2.81e5) plus the
    # reservoir state and fed-back prediction our module holds as buffers (187 x 8 B)
    assert c["footprint_neurobench"] == 281248 + 187 * 8
    assert c["parameter_count"] * 8 == 281248


def test_the_row_config_carries_the_published_figures(tmp_path):
    from neuromark.cli import main
    from neuromark.results import Results

    config = yaml.safe_load((CONFIGS / "mackey_glass_esn_neurobench_protocol.yaml").read_text())
    config["data"]["instances"] = 1
    config["metrics"] = ["footprint_neurobench"]
    path = tmp_path / "row.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 0
    (found,) = (tmp_path / "out").glob("*.json")
    results = Results.load(found)
    assert results.details["published"]["sMAPE"] == 14.79
    assert results.details["published"]["footprint"] == 2.81e5
    assert results.scores["footprint_neurobench"].value == 281248 + 187 * 8
