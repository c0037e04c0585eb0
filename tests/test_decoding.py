"""Decoding a classifier's output: the rules on hand-made outputs, ties counted and flagged,
and one default for the Python API and ``neuromark run`` (the same accuracy both ways)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from test_shd_snn import make_corpus

from neuromark.cli import main
from neuromark.metrics.correctness import ClassificationAccuracy
from neuromark.processors.decoding import Argmax, AutoDecoder, ChooseMaxCount, Decoder, default_rule
from neuromark.registry import datasets, models
from neuromark.runner import Benchmark

#: (B=3, T=2, K=3): sample 0 spikes most in class 2; sample 1 ties 0 and 1 at one spike each
#: on max over time but counts 2 vs 1; sample 2 never spikes (a tie of all classes).
SPIKES = torch.tensor([[[0., 0., 1.], [0., 1., 1.]],
                       [[1., 1., 0.], [1., 0., 0.]],
                       [[0., 0., 0.], [0., 0., 0.]]])


def test_the_api_postprocessors_are_the_one_decoder():
    """NeuroBench's ChooseMaxCount and Argmax are the decoder's rules (one argmax decoder):
    the same classes as sum over time then argmax, and argmax of logits, ties counted."""
    choose = ChooseMaxCount()
    assert isinstance(choose, Decoder) and choose.rule == "spike_count"
    assert choose(SPIKES).tolist() == SPIKES.sum(dim=1).argmax(dim=-1).tolist() == [2, 0, 0]
    assert choose.details()["tied_samples"] == 1
    logits = torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.0, 0.5]])
    pick = Argmax()
    assert isinstance(pick, Decoder) and pick.rule == "argmax"
    assert pick(logits).tolist() == logits.argmax(dim=-1).tolist() == [1, 0]


def test_rules_on_a_hand_made_output():
    count = Decoder("spike_count")
    assert count(SPIKES).tolist() == [2, 0, 0]
    assert (count.tied, count.samples) == (1, 3)  # only the silent sample ties
    peak = Decoder("max_over_time")
    assert peak(SPIKES).tolist() == [1, 0, 0]  # classes 1 and 2 tie at 1 -> lowest index
    assert (peak.tied, peak.samples) == (3, 3)
    mean = Decoder("mean_over_time")
    assert mean(SPIKES).tolist() == [2, 0, 0] and mean.tied == 1
    logits = Decoder("argmax")
    assert logits(torch.tensor([[0.1, 0.9], [0.5, 0.5]])).tolist() == [1, 0] and logits.tied == 1


def test_ties_over_five_percent_are_flagged_and_below_are_not():
    peak = Decoder("max_over_time")
    peak(SPIKES)
    assert peak.details() == {"rule": "max_over_time", "samples": 3, "tied_samples": 3,
                              "tied_fraction": 1.0}
    assert "3 of 3 samples (100.0 %) have a tied top class" in peak.flag()
    clear = Decoder("spike_count")
    many = torch.zeros(20, 2, 3)
    many[:, :, 1] = 1.0  # class 1 always
    many[0] = 0.0  # one silent sample of 20: 5 %, not over
    clear(many)
    assert clear.tied == 1 and clear.flag() is None


def test_default_rule_follows_the_family_then_the_output_shape():
    assert default_rule(None, "max") == "max_over_time"
    assert default_rule(None, "mean") == "mean_over_time"
    assert default_rule((4, 10), None) == "argmax"
    assert default_rule((4, 7, 10), None) == "spike_count"
    auto = AutoDecoder()
    assert auto(torch.tensor([[0.2, 0.8]])).tolist() == [1] and auto.rule == "argmax"
    with pytest.raises(ValueError, match="unknown decoding 'vote'"):
        Decoder("vote")
    with pytest.raises(ValueError, match=r"needs an output of shape \(batch, time, classes\)"):
        Decoder("spike_count")(torch.zeros(2, 3))


class ThresholdSNN(torch.nn.Module):
    """A fixed spiking readout: (B, T, 70) -> binary spikes (B, T, 2); class 0's channels
    (0-34) drive output 0, class 1's (35-69) output 1, and each leaks 0.6 into the other
    output, thresholded at 10 spikes: the busiest bins make both outputs spike (ties on the
    maximum over time), while the right output spikes in more bins (no tie on counts)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(70, 2, bias=False)
        with torch.no_grad():
            self.fc.weight.fill_(0.6)
            self.fc.weight[0, :35] = 1.0
            self.fc.weight[1, 35:] = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (self.fc(x) >= 10.0).float()


@pytest.fixture
def spiking_toy():
    models.register("threshold_snn_toy", lambda: ThresholdSNN())
    yield
    models._entries.pop("threshold_snn_toy", None)


def _config(folder: Path, post: str | None = None) -> Path:
    path = folder / ("c.yaml" if post is None else f"c_{post}.yaml")
    path.write_text("""task: classification
benchmark: {id: toy-decoding}
dataset:
  name: spike_files
  options: {train: train.h5, test: test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}
model: {name: threshold_snn_toy}
eval: {batch_size: 7, metrics: [classification_accuracy]""" + (
        f", postprocessor: {post}" if post else "") + "}\n")
    return path


def _result(out: Path) -> dict:
    [path] = sorted(out.glob("*.json"))
    return json.loads(path.read_text())


def test_cli_default_equals_the_api_spike_count(tmp_path, spiking_toy):
    """The README's API route (ChooseMaxCount) and `neuromark run` with no postprocessor give
    the same accuracy on the same model and data (before: chance through the CLI)."""
    make_corpus(tmp_path, n_train=4, n_test=20)
    assert main(["run", str(_config(tmp_path)), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    cli = _result(tmp_path / "out")
    test = datasets.get("spike_files")(test=str(tmp_path / "test.h5"), dt_us=20000,
                                       t_max_us=200000, pool=10)
    api = Benchmark(ThresholdSNN(), test.loader(7), [], [ChooseMaxCount()],
                    [ClassificationAccuracy()], quiet=True).run()
    assert cli["scores"]["classification_accuracy"]["value"] == pytest.approx(
        api["classification_accuracy"], abs=1e-12)
    assert api["classification_accuracy"] >= 0.8  # well above chance (0.5)
    assert cli["details"]["decoding"]["rule"] == "spike_count"
    assert cli["details"]["decoding"]["samples"] == 20


def test_max_over_time_on_binary_spikes_is_flagged(tmp_path, spiking_toy, capsys):
    make_corpus(tmp_path, n_train=4, n_test=20)
    out = tmp_path / "peak"
    assert main(["run", str(_config(tmp_path, "max_over_time")), "--out", str(out), "--quiet"]) == 0
    saved = _result(out)
    decoding = saved["details"]["decoding"]
    assert decoding["rule"] == "max_over_time" and decoding["tied_fraction"] > 0.05
    assert any("have a tied top class" in f for f in saved["flags"])
    assert "have a tied top class" in capsys.readouterr().err
