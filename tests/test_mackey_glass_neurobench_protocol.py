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
    # NeuroBench's rule: the 281,248 B of float64 weights (= 2.81e5, W_in 186 x 2, W 186 x 186,
    # W_out 1 x 188) and nothing else; ours adds the reservoir state and fed-back prediction
    # as one sample's neuron state (187 x 8 B)
    assert c["footprint_neurobench"] == 281248 == (186 * 2 + 186 * 186 + 188) * 8
    assert c["parameter_count"] * 8 == 281248
    assert c["footprint"] == 281248 + 187 * 8


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
    assert results.scores["footprint_neurobench"].value == 281248


def test_paper_size_esn_footprints_under_both_rules():
    """Built directly (no series): NeuroBench's rule sees the weights only (the published
    2.81e5 B to the digit); ours adds the run state as neuron state, not as buffers."""
    from neuromark.benchmarks.mackey_glass.forecasters import ForecasterModel
    from neuromark.metrics.static import Footprint, FootprintNeurobench

    config = yaml.safe_load((CONFIGS / "mackey_glass_esn.yaml").read_text())
    esn = EchoStateNetwork(ESNParams(**config["models"][0]["params"]), seed=0)
    assert dict(esn.named_buffers()) == {}
    assert set(esn.state_dict()) == {"w_in.weight", "w_rec.weight", "w_out.weight"}
    x = torch.sin(torch.linspace(0, 20, 150, dtype=torch.float64)).reshape(-1, 1)
    esn.fit(x[:-1], x[1:])
    adapter = ForecasterModel(esn)
    before = FootprintNeurobench().compute(adapter).value
    esn.forecast = True
    adapter(x[:186])  # 186 steps: as many as reservoir units, still one sample
    ours = Footprint().compute(adapter)
    assert before == FootprintNeurobench().compute(adapter).value == 281248
    assert round(float(f"{before:.3g}")) == 281000  # 2.81e5
    assert ours.value == 282744
    assert (ours.raw["parameters"], ours.raw["buffers"], ours.raw["neuron_state"]) == (
        281248, 0, 187 * 8)


def test_esn_run_state_moves_with_the_module_and_old_checkpoints_load():
    esn = EchoStateNetwork(ESNParams(reservoir_size=8), seed=1)
    x = torch.sin(torch.linspace(0, 6, 40, dtype=torch.float64)).reshape(-1, 1)
    esn.fit(x[:-1], x[1:])
    assert esn.float().reservoir.dtype == esn.prior.dtype == torch.float32
    esn.double()
    # a state dict saved while reservoir and prior were buffers loads, run state included
    old = {**esn.state_dict(), "reservoir": torch.full((8,), 0.25, dtype=torch.float64),
           "prior": torch.tensor([0.5], dtype=torch.float64)}
    fresh = EchoStateNetwork(ESNParams(reservoir_size=8), seed=2)
    fresh.load_state_dict(old)
    assert torch.equal(fresh.w_out.weight, esn.w_out.weight)
    assert torch.equal(fresh.reservoir, torch.full((8,), 0.25, dtype=torch.float64))
    assert fresh.prior.item() == 0.5
    fresh.load_state_dict(esn.state_dict())  # the current layout: weights only
    with pytest.raises(RuntimeError, match="reservoir.*shape"):
        EchoStateNetwork(ESNParams(reservoir_size=9), seed=0).load_state_dict(
            {**EchoStateNetwork(ESNParams(reservoir_size=9)).state_dict(),
             "reservoir": torch.zeros(8, dtype=torch.float64)})


def test_sweep_entries_saved_before_the_esn_revision_are_recomputed():
    """An ESN entry saved before its run state left the buffers (footprint_neurobench then
    counted it) has another fingerprint, so a resumed sweep recomputes it; the LSTM's
    entries (no revision) keep theirs."""
    import hashlib
    import json

    from neuromark.benchmarks.mackey_glass.task import _fingerprint
    from neuromark.io_atomic import to_jsonable

    def before(resolved):  # the fingerprint as it was computed before revisions
        key = {"data": {"instances": 1}, "model": resolved["models"][0], "tau": 17,
               "metrics": resolved["metrics"]}
        return hashlib.sha256(json.dumps(to_jsonable(key), sort_keys=True).encode()).hexdigest()[:16]

    for name, changed in (("esn", True), ("lstm", False)):
        resolved = {"data": {"taus": [17, 18], "instances": 1}, "metrics": ["footprint_neurobench"],
                    "models": [{"name": name, "seed": 0, "params": {}}]}
        assert (_fingerprint(resolved, 0, 17) != before(resolved)) is changed
