"""A user's own Akida model from BrainChip's own path (issue 57.3): the shipped ``.fbz``
(a Keras convnet quantised by quantizeml 1.2.5 and converted by cnn2snn 2.19.3 in a separate
environment, configs/system/spoken_digits_8/user_models/README.md) runs on the ``akida`` SUT
through ``sut.options.model_file``; files that do not fit the task are refused naming the
file, the layer and the rule. The SDK's figures are checked against those BrainChip's tools
recorded in the sidecar at conversion (another environment, another numpy)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from neuromark.errors import ConfigError, ModelOutputError

akida_sdk = pytest.importorskip("akida", reason="the akida SDK is absent: pip install 'neuromark[akida]'")

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "configs" / "system" / "spoken_digits_8" / "user_models"
SHIPPED = MODELS / "keras_convnet.fbz"


def _dense_fbz(path: Path, inputs: int, classes: int) -> Path:
    """An Akida 2.0 model file built with the SDK alone: InputData (1, 1, inputs) -> Dense1D."""
    model = akida_sdk.Model()
    model.add(akida_sdk.InputData(input_shape=(1, 1, inputs), input_bits=8, name="input"))
    model.add(akida_sdk.Dense1D(units=classes, output_bits=8, name="scores"))
    model.save(str(path))
    return path


def test_shipped_file_is_the_one_its_readme_names():
    readme = (MODELS / "README.md").read_text()
    for name in ("keras_convnet.fbz", "keras_convnet.json"):
        digest = hashlib.sha256((MODELS / name).read_bytes()).hexdigest()
        assert f"`{name}` {digest}" in readme or f"`{name}`  {digest}" in readme


def test_the_users_keras_model_runs_through_model_file():
    from neuromark.system.chips.akida_sut import akida

    built = akida(task="spoken_digits_8", model_file="user_models/keras_convnet.fbz",
                  config_dir=MODELS.parent)
    info = built.info
    sidecar = json.loads((MODELS / "keras_convnet.json").read_text())
    assert info["model"]["kind"] == "akida_fbz"
    assert [layer["name"] for layer in info["model"]["layers"]] == \
        ["input_quantizer", "conv1", "conv2", "scores", "dequantizer"]
    assert info["features"]["model_input"] == [42, 16, 1] and info["classes"] == 8
    # the SDK here (numpy 2.4) scores the file as BrainChip's tools did at conversion (numpy 2.1)
    assert info["sdk_engine_accuracy"] == pytest.approx(sidecar["akida_accuracy"])
    assert info["float_accuracy"] == pytest.approx(sidecar["float_accuracy"])
    assert info["mapping"]["nps_used"] >= 3 and info["mapping"]["software_sequences"] == []
    assert built.operation_counts["macs"] > 0
    indices = [0, 1, 2]
    built.library.load(indices)
    timed = built.sut.issue(indices)
    assert [r.shape for r in timed] == [(8,)] * 3
    quantized = built.quantized_reference(indices)
    assert all(np.array_equal(a, b) for a, b in zip(timed, quantized))
    assert len(built.reference(indices)) == 3


def test_a_file_that_takes_other_inputs_is_refused_naming_layer_and_rule(tmp_path):
    from neuromark.system.chips.akida_sut import akida

    _dense_fbz(tmp_path / "wide.fbz", inputs=600, classes=8)
    with pytest.raises(ConfigError, match=r"model_file: wide.fbz: layer 'input' \(InputData\) "
                                          r"takes input \[1, 1, 600\].*rule: input = the task's counts"):
        akida(task="spoken_digits_8", model_file="wide.fbz", config_dir=tmp_path, samples=10)


def test_a_file_with_other_classes_is_refused_naming_layer_and_rule(tmp_path):
    from neuromark.system.chips.akida_sut import akida

    _dense_fbz(tmp_path / "nine.fbz", inputs=672, classes=9)
    with pytest.raises(ConfigError, match=r"nine.fbz: layer 'scores' \(Dense1D\) gives output "
                                          r"\[1, 1, 9\]; the task has 8 classes.*rule: one score"):
        akida(task="spoken_digits_8", model_file="nine.fbz", config_dir=tmp_path, samples=10)


def test_a_flattened_dense_file_fits_and_has_no_float_reference_without_sidecar(tmp_path):
    from neuromark.system.chips.akida_sut import akida

    _dense_fbz(tmp_path / "flat.fbz", inputs=672, classes=8)
    built = akida(task="spoken_digits_8", model_file="flat.fbz", config_dir=tmp_path, samples=20)
    assert built.reference is None and "float_accuracy" not in built.scores
    assert built.info["features"]["dtype"] == "int8"  # InputData signed by default
    built.library.load([0])
    assert built.sut.issue([0])[0].shape == (8,)


def test_bad_files_and_options_are_refused(tmp_path):
    from neuromark.system.chips.akida_sut import akida

    with pytest.raises(ConfigError, match="sut.options.model_file: no such file"):
        akida(task="spoken_digits_8", model_file="absent.fbz", config_dir=tmp_path)
    (tmp_path / "junk.fbz").write_bytes(b"not a model")
    with pytest.raises(ConfigError, match="junk.fbz: the Akida SDK 2.19.3 cannot read it"):
        akida(task="spoken_digits_8", model_file="junk.fbz", config_dir=tmp_path)
    with pytest.raises(ConfigError, match="onnx and model_file both given"):
        akida(task="spoken_digits_8", model_file="junk.fbz", onnx="x.onnx", config_dir=tmp_path)
    # a sidecar made on other samples is refused, naming it and the rule
    shutil.copy(SHIPPED, tmp_path / "other.fbz")
    side = json.loads((MODELS / "keras_convnet.json").read_text())
    side["float_reference"]["sample_sha256"] = ["0" * 64] * len(side["float_reference"]["scores"])
    (tmp_path / "other.json").write_text(json.dumps(side))
    with pytest.raises(ConfigError, match=r"other.json: its float reference lacks (\d+) of the \1 "
                                          r"test samples.*same test samples"):
        akida(task="spoken_digits_8", model_file="other.fbz", config_dir=tmp_path, samples=10)
    assert (tmp_path / "junk.fbz").read_bytes() == b"not a model"


def test_an_input_the_engine_refuses_is_our_error_naming_the_layer():
    from neuromark.system.chips.akida_file import forward, load_akida_file

    loaded = load_akida_file(akida_sdk, SHIPPED, steps=42, groups=16, classes=8)
    with pytest.raises(ModelOutputError, match=r"keras_convnet.fbz: the Akida engine refuses "
                                               r"input \[1, 42, 16, 2\].*layer 'input_quantizer'"):
        forward(loaded, loaded.model, np.zeros((1, 42, 16, 2), np.float32))
