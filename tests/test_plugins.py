"""A third-party package adds a dataset and a model without changing neuromark.

The package is written into a temp folder and put on ``sys.path``; nothing is installed.
It registers through the API (``registry.<kind>.register``) or through the
``neuromark.plugins`` entry-point group (a ``.dist-info`` folder beside it, which
``importlib.metadata`` finds on ``sys.path``); then ``neuromark run`` runs a config naming it.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from neuromark import registry
from neuromark.cli import main

PLUGIN = textwrap.dedent('''
    """A toy plugin: two-class data (the class is the sign of the input's mean) and a model."""
    import torch
    from torch import nn


    class SignData(torch.utils.data.Dataset):
        """(input (8,), label) with label = 1 when the input's mean is positive."""

        def __init__(self, split="test", samples=64, seed=0):
            g = torch.Generator().manual_seed(seed + (split == "train"))
            self.x = torch.randn(samples, 8, generator=g)
            self.y = (self.x.mean(dim=1) > 0).long()

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return self.x[i], self.y[i]


    def mean_sign_model(scale=1.0):
        """A linear model that computes the mean: class 1 logit = mean, class 0 logit = -mean."""
        net = nn.Linear(8, 2, bias=False)
        with torch.no_grad():
            net.weight.copy_(torch.tensor([[-1.0] * 8, [1.0] * 8]) * scale / 8)
        return net


    def register():
        from neuromark.registry import datasets, models

        datasets.register("sign_data", SignData)
        models.register("mean_sign", mean_sign_model)
''')

CONFIG = """task: classification
benchmark: {id: sign-mean_sign, version: "1.0"}
dataset: {name: sign_data, options: {samples: 50}}
model: {name: mean_sign, options: {scale: 2.0}}
eval: {batch_size: 16, postprocessor: argmax,
       metrics: [classification_accuracy, footprint, synaptic_operations]}
"""


@pytest.fixture
def clean_registries(monkeypatch):
    """Registries restored after the test (entries and the plugin scan)."""
    for reg in (registry.datasets, registry.models):
        monkeypatch.setattr(reg, "_entries", dict(reg._entries))
        monkeypatch.setattr(reg, "_origins", dict(reg._origins))
        monkeypatch.setattr(reg, "_plugins_loaded", False)
    return monkeypatch


def _check_results(out):
    data = json.loads((out / "sign-mean_sign--mean_sign.json").read_text())
    assert data["scores"]["classification_accuracy"]["value"] == 1.0  # the model is exact
    assert data["details"]["samples"] == 50
    # 8x2 weights, dense; 50 samples: 16 MACs per sample
    assert data["scores"]["synaptic_operations"]["value"]["Dense"] == 16
    assert data["scores"]["footprint"]["value"] == 16 * 4


def test_plugin_registers_through_the_api(tmp_path, clean_registries):
    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    clean_registries.syspath_prepend(str(tmp_path))
    import toy_plugin

    toy_plugin.register()
    config = tmp_path / "sign.yaml"
    config.write_text(CONFIG)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    _check_results(tmp_path / "out")


def test_plugin_registers_through_entry_points(tmp_path, clean_registries, capsys):
    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    info = tmp_path / "toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[neuromark.plugins]\ndatasets.sign_data = toy_plugin:SignData\n"
        "models.mean_sign = toy_plugin:mean_sign_model\n")
    clean_registries.syspath_prepend(str(tmp_path))
    config = tmp_path / "sign.yaml"
    config.write_text(CONFIG)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    _check_results(tmp_path / "out")
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "sign_data" in listing and "mean_sign" in listing


def test_unknown_plugin_name_names_the_key(tmp_path, clean_registries, capsys):
    config = tmp_path / "sign.yaml"
    config.write_text(CONFIG)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{config}:3: dataset.name: unknown dataset 'sign_data'" in err
    assert not (tmp_path / "out" / "sign-mean_sign--mean_sign.json").exists()


def test_plugin_model_with_a_checkpoint_loads_its_weights(tmp_path, clean_registries, capsys):
    import torch

    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    clean_registries.syspath_prepend(str(tmp_path))
    import toy_plugin

    toy_plugin.register()
    flipped = toy_plugin.mean_sign_model(scale=-1.0)  # predicts the wrong class every time
    torch.save(flipped.state_dict(), tmp_path / "flipped.pt")
    config = tmp_path / "sign.yaml"
    config.write_text(CONFIG.replace("options: {scale: 2.0}", "checkpoint: flipped.pt"))
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    data = json.loads((tmp_path / "out" / "sign-mean_sign--mean_sign.json").read_text())
    assert data["scores"]["classification_accuracy"]["value"] == 0.0
    torch.save({"weight": torch.zeros(3, 8)}, tmp_path / "flipped.pt")
    assert main(["run", str(config), "--out", str(tmp_path / "out2"), "--quiet"]) == 1
    assert "flipped.pt: weights do not fit the model" in capsys.readouterr().err


def _dist_info(folder, name, entry_points):
    """A ``<name>-0.1.dist-info`` in ``folder`` declaring ``entry_points`` (lines)."""
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[neuromark.plugins]\n" + "".join(f"{e}\n" for e in entry_points))


def test_plugin_reusing_a_built_in_name_is_an_error_naming_both(tmp_path, clean_registries, capsys):
    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    _dist_info(tmp_path, "toy-plugin", ["datasets.sign_data = toy_plugin:SignData",
                                        "models.snn = toy_plugin:mean_sign_model"])
    clean_registries.syspath_prepend(str(tmp_path))
    for _attempt in range(2):  # raised on every lookup, not only the first
        with pytest.raises(registry.DuplicateEntryError) as info:
            registry.models.get("mean_sign")
        message = str(info.value)
        assert "models entry 'snn'" in message
        assert "neuromark.networks.spike_classifiers:SNN" in message  # the built-in
        assert "models.snn = 'toy_plugin:mean_sign_model'" in message  # the entry point
        assert "distribution toy-plugin 0.1" in message
    assert registry.models._entries["snn"] != "toy_plugin:mean_sign_model"  # built-in kept
    config = tmp_path / "sign.yaml"
    config.write_text(CONFIG)
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "neuromark.networks.spike_classifiers:SNN" in err and "toy-plugin 0.1" in err


def test_two_plugins_declaring_one_name_is_an_error_naming_both(tmp_path, clean_registries):
    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    _dist_info(tmp_path, "toy-plugin", ["datasets.sign_data = toy_plugin:SignData"])
    _dist_info(tmp_path, "other-plugin", ["datasets.sign_data = other_plugin:Sign"])
    clean_registries.syspath_prepend(str(tmp_path))
    with pytest.raises(registry.DuplicateEntryError) as info:
        registry.datasets.names()
    message = str(info.value)
    assert "datasets entry 'sign_data' is declared twice" in message
    assert "toy_plugin:SignData" in message and "distribution toy-plugin 0.1" in message
    assert "other_plugin:Sign" in message and "distribution other-plugin 0.1" in message


def test_plugin_entry_naming_an_api_registered_object_again_is_no_clash(tmp_path, clean_registries):
    (tmp_path / "toy_plugin.py").write_text(PLUGIN)
    _dist_info(tmp_path, "toy-plugin", ["models.mean_sign = toy_plugin:mean_sign_model"])
    clean_registries.syspath_prepend(str(tmp_path))
    import toy_plugin

    registry.models.register("mean_sign", toy_plugin.mean_sign_model)  # the package registers itself too
    assert registry.models.get("mean_sign") is toy_plugin.mean_sign_model
