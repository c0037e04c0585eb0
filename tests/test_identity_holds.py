"""A shipped benchmark id holds its settings: a config that keeps the id but changes what it
fixes (read from the shipped configs, every id, every defining setting) is filed under a
derived id and told so; the shipped configs themselves are untouched."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from neuromark.benchmark_settings import (
    DERIVED_MARK,
    SHIPPED_CONFIGS,
    changes_from_shipped,
    derive_identity,
    shipped_benchmarks,
)
from neuromark.config import load_config, parse_yaml

SHIPPED, FREE = shipped_benchmarks()


def _shipped_files():
    for file in sorted(SHIPPED_CONFIGS.rglob("*.yaml")):
        data = yaml.safe_load(file.read_text())
        if isinstance(data, dict) and isinstance(data.get("benchmark"), dict):
            yield file, data


def _set(data, path, value):
    *parents, leaf = path.split(".")
    node = data
    for name in parents:
        node = node[name]
    node[leaf] = value


def _other_value(value):
    """A value unlike ``value`` of the same kind (what a user's edit looks like)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2 if value else 1
    if isinstance(value, str):
        return value + "-x"
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else [*value, *value]
    return "changed"


def test_every_family_has_defining_settings():
    """Each shipped id fixes its task and at least one setting of its data or protocol."""
    assert len(SHIPPED) >= 40
    for key, shipped in SHIPPED.items():
        assert shipped.defining.get("task"), key
        assert len(shipped.defining) >= 2, (key, dict(shipped.defining))


def test_shipped_configs_keep_their_ids():
    for file, data in _shipped_files():
        shipped, changes = changes_from_shipped(data)
        assert shipped is not None and changes == [], (file, changes)


@pytest.mark.parametrize("key", sorted(SHIPPED), ids="-".join)
def test_every_defining_setting_of_every_id_is_held(key):
    """Change each defining setting of a shipped config of ``key`` in turn (and leave each
    out): always a derived id naming that setting, never the shipped id."""
    shipped = SHIPPED[key]
    base = yaml.safe_load((SHIPPED_CONFIGS.parent / shipped.files[0]).read_text())
    for path, value in shipped.defining.items():
        for how, edit in (("changed", lambda d, p=path, v=value: _set(d, p, _other_value(v))),
                          ("left out", lambda d, p=path: _drop(d, p))):
            data = copy.deepcopy(base)
            edit(data)
            config = parse_yaml(yaml.safe_dump(data))
            record = derive_identity(config, announce=False)
            assert record is not None, (key, path, how)
            assert [c["setting"] for c in record["changes"]] == [path], (key, path, record)
            assert record["changes"][0]["how"] == how
            new_id = config.data["benchmark"]["id"]
            assert new_id.startswith(key[0] + DERIVED_MARK) and new_id != key[0]
            assert config.data["benchmark"]["parent"] == key[0]


def _drop(data, path):
    *parents, leaf = path.split(".")
    node = data
    for name in parents:
        node = node[name]
    del node[leaf]


def test_spoken_digits_at_5ms_is_filed_apart(tmp_path, capsys):
    """The issue's case: spoken-digits 2.0 binned at 5 ms instead of 10 ms."""
    text = (SHIPPED_CONFIGS / "shd" / "spoken_digits_snn.yaml").read_text()
    assert "dt_us: 10000" in text
    path = tmp_path / "sd5.yaml"
    path.write_text(text.replace("dt_us: 10000", "dt_us: 5000"))
    config = load_config(path)
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "dt_us" in t)
    record = derive_identity(config)
    err = capsys.readouterr().err
    assert record["shipped_id"] == "spoken-digits" and record["shipped_version"] == "2.0"
    assert record["changes"] == [{"setting": "dataset.options.dt_us", "shipped": 10000,
                                  "given": 5000, "how": "changed"}]
    assert f"{path}:{line}: dataset.options.dt_us = 5000" in err
    assert record["id"] in err and "name the variant yourself" in err
    # the same change, the same derived id (results of two such runs stay comparable)
    again = load_config(path)
    assert derive_identity(again, announce=False)["id"] == record["id"]
    # once only: a second call neither re-derives nor prints
    assert derive_identity(config) is record and capsys.readouterr().err == ""


def test_model_choices_keep_the_id(tmp_path):
    """What the shipped configs of an id differ on (the SVM's pool, a decoding rule) is the
    model's, not the benchmark's; the model, its training and execution keys too."""
    data = yaml.safe_load((SHIPPED_CONFIGS / "shd" / "spoken_digits_snn.yaml").read_text())
    data["dataset"]["options"]["pool"] = 1
    data["model"] = {"name": "lstm", "options": {"hidden": 7}}
    data["train"]["epochs"] = 1
    data["eval"] = {"batch_size": 7, "postprocessor": "mean_over_time"}
    assert changes_from_shipped(data)[1] == []
    data["dataset"]["options"]["new_knob"] = 3
    (change,) = changes_from_shipped(data)[1]
    assert change.path == "dataset.options.new_knob" and change.how == "added"


def test_validate_and_run_say_so_and_record_it(tmp_path, capsys):
    from neuromark.cli import main

    data = yaml.safe_load((SHIPPED_CONFIGS / "mackey_glass" / "esn.yaml").read_text())
    data["data"].update(instances=1, length=4)
    data["models"][0]["params"]["reservoir_size"] = 20
    path = tmp_path / "mg.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "filed as mackey-glass-tau17-custom-" in out and "data.instances = 1" in err
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("changes what that id fixes") == 1
    files = [p for p in (tmp_path / "out").glob("*.json") if p.name.startswith("mackey")]
    assert files and all(DERIVED_MARK in p.name for p in files)
    results = json.loads(files[0].read_text())
    assert results["benchmark"]["parent"] == "mackey-glass-tau17"
    assert results["details"]["benchmark_derived"]["shipped_id"] == "mackey-glass-tau17"
    assert results["config"]["requested"]["benchmark"]["id"] == "mackey-glass-tau17"  # as written


def test_the_python_route_is_re_identified_too(tmp_path, capsys):
    """Benchmark.from_config with a changed copy of a shipped config: the derived id."""
    from torch import nn

    from neuromark.runner import Benchmark

    path = tmp_path / "sd5.yaml"
    path.write_text((SHIPPED_CONFIGS / "shd" / "spoken_digits_snn.yaml").read_text()
                    .replace("dt_us: 10000", "dt_us: 5000"))
    bench = Benchmark.from_config(path, model=nn.Linear(70, 20), label="mine")
    assert bench.info.id.startswith("spoken-digits" + DERIVED_MARK)
    assert bench.info.parent == "spoken-digits"
    assert "dataset.options.dt_us = 5000" in capsys.readouterr().err
