"""GSC configs from the config alone: the espeak-ng corpus written and the network trained on
first use, the cached checkpoint reused on the next run."""

from __future__ import annotations

import json
import shutil

import pytest

from neuromark.cli import main

pytest.importorskip("soundfile")
if shutil.which("espeak-ng") is None:
    pytest.skip("espeak-ng is not installed", allow_module_level=True)

CONFIG = """task: classification
benchmark: {{id: gsc-tiny-{name}}}
dataset:
  name: speech_commands
  options:
    root: corpus
    features: {features}
    synthesize: {{speakers: 3, repeats: 1, words: ["yes", "zero"]}}
model: {{name: {name}, checkpoint: ckpt/{name}.pt}}
train: {{epochs: 1, batch_size: 2}}
eval: {{postprocessor: {post}, metrics: [classification_accuracy]}}
"""


def _run(tmp_path, name: str, out: str) -> dict:
    assert main(["run", str(tmp_path / f"{name}.yaml"), "--out", str(tmp_path / out), "--quiet"]) == 0
    return json.loads((tmp_path / out / f"gsc-tiny-{name}--{name}.json").read_text())


@pytest.mark.parametrize("name,features,post", [("gsc_m5", "waveform", "argmax"),
                                                ("gsc_snn", "delta_mel", "spike_count")])
def test_trains_on_first_use_then_reuses_the_checkpoint(tmp_path, name, features, post):
    (tmp_path / f"{name}.yaml").write_text(CONFIG.format(name=name, features=features, post=post))
    first = _run(tmp_path, name, "first")
    assert (tmp_path / "corpus" / "testing_list.txt").is_file()  # the corpus was written
    checkpoint = tmp_path / "ckpt" / f"{name}.pt"
    assert checkpoint.is_file() and first["details"]["trained_now"] is True
    assert first["details"]["epochs"] == 1 and first["details"]["train_samples"] == 2
    stamp = checkpoint.stat().st_mtime_ns
    second = _run(tmp_path, name, "second")
    assert second["details"]["trained_now"] is False and checkpoint.stat().st_mtime_ns == stamp
    assert second["scores"]["classification_accuracy"]["value"] == \
        first["scores"]["classification_accuracy"]["value"]


def test_a_changed_recipe_retrains(tmp_path):
    text = CONFIG.format(name="gsc_m5", features="waveform", post="argmax")
    (tmp_path / "gsc_m5.yaml").write_text(text)
    _run(tmp_path, "gsc_m5", "first")
    (tmp_path / "gsc_m5.yaml").write_text(text.replace("batch_size: 2}", "batch_size: 2, seed: 1}"))
    assert _run(tmp_path, "gsc_m5", "second")["details"]["trained_now"] is True


def test_a_spike_file_train_setting_is_refused_by_name(tmp_path, capsys):
    text = CONFIG.format(name="gsc_snn", features="delta_mel", post="spike_count")
    (tmp_path / "gsc_snn.yaml").write_text(text.replace("batch_size: 2}", "batch_size: 2, jitter_sigma: 1}"))
    assert main(["validate", str(tmp_path / "gsc_snn.yaml")]) != 0
    assert "gsc_snn.yaml:10: train.jitter_sigma: unknown key" in capsys.readouterr().err
    assert not (tmp_path / "corpus").exists()  # validation writes no corpus
