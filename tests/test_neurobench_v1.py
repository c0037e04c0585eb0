"""NeuroBench's trained baselines (configs/neurobench_v1) and the footprint under
NeuroBench's rule. The published figures checked here are NeuroBench's (leaderboard.rst,
2024-01-17, and its example scripts' printed results), not ours; the equality with
neurobench 2.3.0's own metrics is tests/test_neurobench_v1_reference.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from neuromark.commands.neurobench_v1 import read_row, row_config_paths, static_figures
from neuromark.errors import ConfigError
from neuromark.metrics.static import Footprint, FootprintNeurobench
from neuromark.models import as_adapter
from neuromark.runner import Benchmark

pytest.importorskip("snntorch", reason="NeuroBench's spiking baselines need the snntorch extra")

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "neurobench_v1"


def test_every_shipped_checkpoint_is_used_by_a_config_and_loads_strictly():
    rows = [read_row(p) for p in row_config_paths(CONFIGS)]
    used = {r["checkpoint"] for r in rows}
    shipped = {p.resolve() for p in (CONFIGS / "checkpoints").rglob("*")
               if p.is_file() and p.name != "LICENSE" and p.suffix not in (".md", ".csv")}
    assert used == shipped
    assert "Apache License" in (CONFIGS / "checkpoints" / "LICENSE").read_text()


@pytest.mark.parametrize("stem, footprint, ours, dense", [
    # NeuroBench's published footprints (leaderboard / example scripts) under its rule; ours
    # adds one sample's neuron state and the input history at its full 50 rows
    ("primate_ann2d_indy_20160622_01", 20824, 39640, 4704),
    ("primate_ann2d_loco_20170210_03", 33496, 71128, 7776),
    ("primate_snn2_indy_20160622_01", 19648, 19856, 4900),
    ("primate_snn2_loco_20170301_05", 38848, 39056, 9700),
    ("primate_snn_flat_indy_20160630_01", 24972, 44116, 32928),
])
def test_published_primate_figures(stem, footprint, ours, dense):
    results = static_figures(read_row(CONFIGS / f"{stem}.yaml"))
    s = results.scores
    assert s["footprint_neurobench"].value == footprint == results.details["published"]["footprint"]
    assert s["footprint"].value == ours
    assert s["footprint"].raw["neurobench_rule_bytes"] == footprint  # beside ours, labelled
    assert "neurobench" in s["footprint_neurobench"].raw["rule"]
    assert s["footprint"].raw["rule"].startswith("neuromark")
    assert s["dense"].value == dense
    assert s["connection_sparsity"].value == 0.0


def test_snn_flat_output_scalings_are_parameters_not_synapses():
    s = static_figures(read_row(CONFIGS / "primate_snn_flat_indy_20160622_01.yaml")).scores
    # 6,130 weights and biases of fc1-3 and the LayerNorm, plus v_x and v_y
    assert s["parameter_count"].value == 6132
    assert s["dense"].value == 7 * (96 * 32 + 32 * 48 + 48 * 2)  # no multiply by v_x, v_y


def test_neurobench_rule_reads_the_model_before_any_data():
    """An input-history buffer grows with the data: NeuroBench's rule counts it as the
    model holds it before the first batch, ours at its size after the run."""

    class History(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.register_buffer("seen", torch.zeros(1, 3), persistent=False)

        def forward(self, x):
            self.seen = torch.cat([self.seen, x])
            return self.fc(self.seen.sum(0, keepdim=True)).expand(x.shape[0], -1)

    data = [(torch.ones(4, 3), torch.zeros(4))]
    results = Benchmark(as_adapter(History()), data, [], [], [Footprint(), FootprintNeurobench()],
                        quiet=True).run()
    params = (3 * 2 + 2) * 4
    assert results.scores["footprint_neurobench"].value == params + 3 * 4
    assert results.scores["footprint"].raw["neurobench_rule_bytes"] == params + 3 * 4
    assert results.scores["footprint"].value == params + 5 * 3 * 4  # 5 rows after the run
    # called directly (no run): the model as it is now
    assert FootprintNeurobench().compute(as_adapter(History())).value == params + 3 * 4


def test_bad_row_configs_are_refused_naming_file_and_field(tmp_path):
    good = (CONFIGS / "gsc_m5_ann.yaml").read_text()
    cases = {"unknown": good + "colour: red\n", "arch": good.replace("architecture: m5", "architecture: m6"),
             "shape": good.replace("example_shape: [1, 1, 8000]", "example_shape: [0]"),
             "ckpt": good.replace("checkpoints/gsc/model_data/m5_ann", "nowhere.pt"),
             "misfit": good.replace("checkpoints/gsc/model_data/m5_ann",
                                    str(CONFIGS / "checkpoints/gsc/model_data/s2s_gsc_snntorch"))}
    words = {"unknown": "colour", "arch": "m6", "shape": "example_shape", "ckpt": "checkpoint",
             "misfit": "does not fit architecture 'm5'"}
    for name, text in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        with pytest.raises(ConfigError, match=words[name]) as info:
            read_row(path)
        assert str(path) in str(info.value)


def test_cli_refuses_before_writing_anything(tmp_path):
    from neuromark.cli import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("row: x\n")
    out = tmp_path / "out"
    assert main(["neurobench-v1", str(CONFIGS / "gsc_m5_ann.yaml"), str(bad), "--out", str(out)]) != 0
    assert not out.exists()


def test_the_neurobench_rule_is_a_metric_of_its_own():
    from neuromark.registry import metrics

    made = metrics.get("footprint_neurobench")()
    assert made.name == "footprint_neurobench" and made.unit == "bytes"
    assert not isinstance(made, Footprint)  # a task replacing `footprint` leaves it alone
