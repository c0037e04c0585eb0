"""NeuroBench's trained baselines (configs/neurobench_v1, task ``neurobench_v1_row``) and the
footprint under NeuroBench's rule. The published figures checked here are NeuroBench's
(leaderboard.rst, 2024-01-17, and its example scripts' printed results), not ours; the equality
with neurobench 2.3.0's own metrics is tests/test_neurobench_v1_reference.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from torch import nn

from neuromark.cli import main
from neuromark.config import load_config, resolve_path
from neuromark.metrics.static import Footprint, FootprintNeurobench
from neuromark.models import as_adapter
from neuromark.registry import tasks
from neuromark.runner import Benchmark
from neuromark.tasks.base import plan_and_run

pytest.importorskip("snntorch", reason="NeuroBench's spiking baselines need the snntorch extra")

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "neurobench_v1"
TASK = "neurobench_v1_row"


def row_paths() -> list[Path]:
    """The row configs of the folder (its Mackey-Glass configs are the mackey_glass task's)."""
    return [p for p in sorted(CONFIGS.glob("*.yaml"))
            if yaml.safe_load(p.read_text()).get("task") == TASK]


def row_results(stem: str, tmp_path: Path):
    return plan_and_run(tasks.get(TASK), load_config(CONFIGS / f"{stem}.yaml"), tmp_path,
                        quiet=True)[0]


def test_every_shipped_checkpoint_is_used_by_a_row_config():
    rows = row_paths()
    assert len(rows) == 29
    used = {resolve_path(yaml.safe_load(p.read_text())["model"]["checkpoint"], load_config(p))
            for p in rows}
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
def test_published_primate_figures(stem, footprint, ours, dense, tmp_path):
    results = row_results(stem, tmp_path)
    s = results.scores
    assert s["footprint_neurobench"].value == footprint == results.details["published"]["footprint"]
    assert s["footprint"].value == ours
    assert s["footprint"].raw["neurobench_rule_bytes"] == footprint  # beside ours, labelled
    assert "neurobench" in s["footprint_neurobench"].raw["rule"]
    assert s["footprint"].raw["rule"].startswith("neuromark")
    assert s["dense"].value == dense
    assert s["connection_sparsity"].value == 0.0
    assert results.details["needs_data"] and results.details["row"]
    assert results.model.name.startswith("neurobench_") and results.model.checkpoint_sha256


def test_snn_flat_output_scalings_are_parameters_not_synapses(tmp_path):
    s = row_results("primate_snn_flat_indy_20160622_01", tmp_path).scores
    # 6,130 weights and biases of fc1-3 and the LayerNorm, plus v_x and v_y
    assert s["parameter_count"].value == 6132
    assert s["dense"].value == 7 * (96 * 32 + 32 * 48 + 48 * 2)  # no multiply by v_x, v_y


def test_neuromark_run_writes_the_row_with_the_published_figures(tmp_path):
    """One run path: ``neuromark run`` of a row config; the suite writes the results file."""
    out = tmp_path / "out"
    assert main(["run", str(CONFIGS / "gsc_m5_ann.yaml"), "--out", str(out), "--quiet"]) == 0
    [written] = out.glob("neurobench_v1-gsc_m5_ann*.json")
    data = json.loads(written.read_text())
    assert data["benchmark"]["id"] == "neurobench_v1-gsc_m5_ann"
    assert data["benchmark"]["parent"] == "neurobench-v1.0"
    assert data["model"]["name"] == "neurobench_m5"
    assert data["scores"]["footprint_neurobench"]["value"] == 109228 \
        == data["details"]["published"]["footprint"]
    assert data["scores"]["parameter_count"]["value"] == 26915
    assert "Speech Commands" in data["details"]["needs_data"]


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


GOOD = (CONFIGS / "gsc_m5_ann.yaml").read_text()
CHECKPOINT = "checkpoints/gsc/model_data/m5_ann"
BAD = {  # (edit of the shipped config, words of the error, the key whose line it names)
    "unknown": (GOOD + "colour: red\n", "colour", "colour"),
    "model name": (GOOD.replace("name: neurobench_m5", "name: neurobench_m6"), "neurobench_m6", "name"),
    "options": (GOOD.replace("name: neurobench_m5", "name: neurobench_m5\n  options: {width: 3}"),
                "width", "options"),
    "shape": (GOOD.replace("example_shape: [1, 1, 8000]", "example_shape: [0]"), "example_shape",
              "example_shape"),
    "no checkpoint": (GOOD.replace(CHECKPOINT, "nowhere.pt"), "nowhere.pt", "checkpoint"),
    "misfit": (GOOD.replace(CHECKPOINT, str(CONFIGS / "checkpoints/gsc/model_data/s2s_gsc_snntorch")),
               "does not fit architecture 'neurobench_m5'", "checkpoint"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_validate_refuses_a_bad_row_naming_file_and_line(case, tmp_path, capsys):
    text, words, key = BAD[case]
    path = tmp_path / "row.yaml"
    path.write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.lstrip().startswith(f"{key}:"))
    assert main(["validate", str(path)]) != 0
    err = capsys.readouterr().err
    assert words in err and f"{path}:{line}" in err, err


def test_run_refuses_before_writing_anything(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD["misfit"][0])  # a checkpoint of another architecture
    out = tmp_path / "out"
    assert main(["run", str(CONFIGS / "gsc_m5_ann.yaml"), str(bad), "--out", str(out)]) != 0
    assert not out.exists()


def test_the_neurobench_rule_is_a_metric_of_its_own():
    from neuromark.registry import metrics

    made = metrics.get("footprint_neurobench")()
    assert made.name == "footprint_neurobench" and made.unit == "bytes"
    assert not isinstance(made, Footprint)  # a task replacing `footprint` leaves it alone
