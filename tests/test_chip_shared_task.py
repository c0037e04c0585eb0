"""One task every shipped system runs (issue 57.2): the four configs of
``configs/system/spoken_digits_8/`` (CPU float, CPU int8, Akida virtual device, XyloSim),
shrunk, run into one folder: one benchmark id, four results files named by the system, one
leaderboard table with four rows; every result names its float and quantized references and
gaps, the machine's load and how its energy was obtained. neuromark's integer MLP gives the
Akida SDK engine's outputs exactly (an outside reference for the CPU int8 row). The chip
configs skip without their SDK (the CPU rows always run)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from neuromark.cli import main

pytest.importorskip("mlperf_loadgen")
FOLDER = Path(__file__).resolve().parents[1] / "configs/system/spoken_digits_8"
SMALL = {"train_samples": 160, "samples": 40, "epochs": 20, "hidden": 16}
SDK = {"akida_virtual": ("akida",), "akida_user_keras": ("akida",), "xylosim": ("rockpool", "xylosim")}


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def test_the_four_systems_share_one_benchmark_and_one_table(tmp_path, capsys):
    configs = []
    for path in sorted(FOLDER.glob("*.yaml")):
        if not _have(*SDK.get(path.stem, ())):
            continue
        config = yaml.safe_load(path.read_text())
        config["sut"]["options"].update(SMALL)
        if "model_file" in config["sut"]["options"]:  # a user's file, read from the config's folder
            config["sut"]["options"]["model_file"] = str(FOLDER / config["sut"]["options"]["model_file"])
        config["loadgen"].update(min_query_count=64, min_duration_s=0)
        config["accuracy"]["target"] = 0.5  # tiny models: the rule's plumbing, not their figure
        (tmp_path / path.name).write_text(yaml.safe_dump(config))
        configs.append(str(tmp_path / path.name))
    assert len(configs) >= 2  # the CPU rows run everywhere
    out = tmp_path / "out"
    assert main(["system", "run", *configs, "--out", str(out), "--quiet"]) == 0, \
        capsys.readouterr().err
    capsys.readouterr()
    # the lowered accuracy target changes a defining setting: the four share one derived id
    files = sorted(out.glob("spoken_digits_8-acc99q-singlestream*--*.json"))
    assert len(files) == len(configs)
    assert len({f.name.split("--")[0] for f in files}) == 1
    results = [json.loads(f.read_text()) for f in files]
    labels = {r["details"]["system"]["label"] for r in results}
    assert {"cpu-float", "cpu-int8"} <= labels and len(labels) == len(configs)
    for res in results:
        acc = res["details"]["accuracy"]
        for ref in ("float_reference", "quantized_reference"):
            assert isinstance(acc[ref]["value"], float) and "gap" in acc[ref], (ref, acc)
        assert res["details"]["load"]["wall_s"] > 0
        assert res["details"]["energy_source"]
        assert res["details"]["sut"]["task"]["name"] == "spoken_digits_8"
    by_label = {r["details"]["system"]["label"]: r for r in results}
    # the same test samples everywhere: as many scored, and the CPU rows share one float model
    assert len({r["details"]["accuracy"]["samples"] for r in results}) == 1
    assert (by_label["cpu-float"]["details"]["accuracy"]["float_reference"]["value"]
            == by_label["cpu-int8"]["details"]["accuracy"]["float_reference"]["value"])
    # energy never silent: the MLPs are estimated from their counted operations
    assert by_label["cpu-int8"]["details"]["energy_source"].startswith("estimate")
    assert "energy_estimate" in by_label["cpu-int8"]["scores"]
    if "xylo-xylosim" in by_label:  # counted from XyloSim's own events
        xylo = by_label["xylo-xylosim"]
        assert xylo["details"]["energy_source"].startswith("estimate")
        assert xylo["details"]["energy_estimate"]["counts_per_inference"]["acs"] > 0
    site = tmp_path / "site"
    assert main(["leaderboard", str(out), "--out", str(site)]) == 0
    page = (site / "index.html").read_text()
    assert page.count("<section") == 1 and f"{len(configs)} model(s)" in page
    assert main(["compare", str(files[0]), str(files[-1])]) == 0


def test_our_integer_mlp_gives_the_akida_engines_outputs():
    akida = pytest.importorskip("akida", reason="the akida SDK is absent (docs/chips.md: installing)")
    from neuromark.system.chips.akida_quant import build_akida_mlp, integer_forward, quantise_mlp
    from neuromark.system.chips.features import SPOKEN_DIGITS_8, task_counts
    from neuromark.system.chips.training import train_mlp

    train, test, keys = task_counts(SPOKEN_DIGITS_8, train_samples=160, test_samples=40)
    x_train = train.x.reshape(len(train.x), -1)
    x_test = test.x.reshape(len(test.x), -1).astype(np.int8)
    scale = 1.0 / max(1, int(x_train.max()))
    layers = train_mlp(x_train * scale, train.y, hidden=16, classes=len(keys), epochs=20,
                       lr=0.01, seed=0)
    model, _ = build_akida_mlp(akida, layers, x_train.shape[1], x_train, scale)
    engine = model.forward(x_test.reshape(-1, 1, 1, x_train.shape[1])).reshape(len(x_test), -1)
    ours = integer_forward(quantise_mlp(layers, x_train, scale), x_test)
    assert np.array_equal(ours, engine.astype(np.int64))


def test_xylo_operations_are_counted_by_hand():
    from neuromark.system.chips.xylo_sut import xylo_operations

    quantised = {"weights_in": np.array([[[1], [0], [2]], [[0], [0], [3]]]),  # 2 channels -> 3 hidden
                 "weights_rec": np.zeros((3, 3, 1)), "weights_out": np.array([[1, 0], [0, 0], [4, 5]])}
    x = np.array([[[2, 1], [0, 3]]])  # one raster: 2 steps, channel events 2+0=2 and 1+3=4
    spikes = [np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 1.0]])]  # hidden spikes per step
    counts = xylo_operations(quantised, x, spikes)
    # inputs: channel 0 (2 events) reaches 2 hidden, channel 1 (4 events) reaches 1: 4 + 4 = 8
    # hidden: neuron 0 (1 spike) reaches 1 output, neuron 2 (3 spikes) reaches 2: 1 + 6 = 7
    assert counts["acs"] == 15 and counts["macs"] == 0
    assert counts["neuron_updates"] == 2 * (3 + 2)
