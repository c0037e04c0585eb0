"""Core layer: results JSON, registry lookups, config validation with YAML lines."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import field_validator

from neuromark.config import StrictModel, parse_yaml, validate
from neuromark.errors import ConfigError, UnknownNameError
from neuromark.identity import BenchmarkIdentity
from neuromark.io_atomic import write_json_atomic
from neuromark.registry import Registry, metrics
from neuromark.results import Results, Score


def test_results_roundtrip_and_mapping(tmp_path):
    res = Results(
        scores={"footprint": Score(1024, unit="bytes"),
                "classification_accuracy": Score(0.75, error=0.05, higher_is_better=True),
                "synaptic_operations": Score({"Effective_MACs": 0.0, "Effective_ACs": 10.5,
                                              "Dense": 20.0})},
        benchmark=BenchmarkIdentity("toy-classification", "1.2", None, "@misc{x}"),
        seeds={"torch": 0})
    assert dict(res) == {"footprint": 1024, "classification_accuracy": 0.75,
                         "synaptic_operations": {"Effective_MACs": 0.0, "Effective_ACs": 10.5,
                                                 "Dense": 20.0}}
    path = res.save(tmp_path / "sub" / "out.json")
    data = json.loads(path.read_text())
    assert data["schema_version"] == "1.3"
    assert data["benchmark"]["id"] == "toy-classification"
    assert {"python", "packages", "machine", "git_commit", "created"} <= set(data["provenance"])
    assert data["provenance"]["machine"]["cores"] >= 1
    back = Results.load(path)
    assert back.scores["classification_accuracy"].error == 0.05
    assert not list(tmp_path.glob("sub/*.tmp"))


def test_score_ceiling():
    assert Score(0.5, ceiling=0.8).ceiled == pytest.approx(0.625)
    assert Score(0.5).ceiled is None


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "r.json"
    write_json_atomic(target, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"a": object()})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_atomic_write_gives_normal_permissions(tmp_path):
    import os

    path = write_json_atomic(tmp_path / "r.json", {"a": 1})
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_nonfinite_values_are_kept_visible(tmp_path):
    path = write_json_atomic(tmp_path / "r.json", {"x": math.nan, "y": math.inf})
    assert json.loads(path.read_text()) == {"x": "NaN", "y": "Infinity"}


def test_registry_suggests_close_matches():
    with pytest.raises(UnknownNameError, match="did you mean 'footprint'"):
        metrics.get("footprnt")
    reg: Registry[int] = Registry("things")
    reg.register("one", 1)
    assert reg.get("one") == 1 and "one" in reg and reg.names() == ["one"]


class _Section(StrictModel):
    steps: int
    rate: float = 1.0

    @field_validator("steps")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("must be > 0")
        return v


def test_config_error_names_key_and_line():
    cfg = parse_yaml("task: x\nmodel:\n  steps: ten\n  rate: 2\n")
    with pytest.raises(ConfigError, match=r"<config>:3: model\.steps: .*integer.*'ten'"):
        validate(_Section, cfg.data["model"], cfg, ("model",))
    cfg = parse_yaml("model:\n  stepz: 3\n")
    with pytest.raises(ConfigError, match=r":2: model\.stepz: unknown key; did you mean steps"):
        validate(_Section, cfg.data["model"], cfg, ("model",))
    cfg = parse_yaml("model:\n  steps: -1\n")
    with pytest.raises(ConfigError, match=r":2: model\.steps: .*must be > 0"):
        validate(_Section, cfg.data["model"], cfg, ("model",))


def test_yaml_is_loaded_safely_and_duplicates_rejected():
    with pytest.raises(ConfigError, match="invalid YAML"):
        parse_yaml("a: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ConfigError, match="duplicate key 'a'"):
        parse_yaml("a: 1\na: 2\n")


def test_every_registered_entry_resolves():
    from neuromark import registry

    for reg in (registry.tasks, registry.metrics, registry.models, registry.datasets,
                registry.solvers, registry.meters):
        for name in reg.names():
            assert reg.get(name) is not None, (reg.kind, name)


def test_summary_lists_every_flag_after_the_table():
    from neuromark.report.markdown import format_summary

    res = Results(scores={"sMAPE": Score(9.9, error=0.5, unit="%")},
                  benchmark=BenchmarkIdentity("mg"),
                  details={"flags": ["esn tau=17: instance 3 diverged"]})
    lines = format_summary([res]).splitlines()
    assert lines[-1] == "flag [mg]: esn tau=17: instance 3 diverged"
    assert any("9.9 ± 0.5 %" in line for line in lines[:-1])


def test_duplicate_benchmark_ids_in_one_run_are_refused(tmp_path):
    from neuromark.suite import run_configs

    config = tmp_path / "two.yaml"
    config.write_text("task: mackey_glass\nbenchmark: {id: same}\n"
                      "data: {taus: [17], instances: 1, length: 4}\n"
                      "models:\n  - {name: esn, label: a, params: {reservoir_size: 20}}\n"
                      "  - {name: esn, label: b, params: {reservoir_size: 20}}\n")
    written = run_configs([config], tmp_path / "out", quiet=True)
    assert sorted(p.name for p, _ in written) == ["same--a.json", "same--b.json"]
    assert {r.benchmark.id for _, r in written} == {"same"}  # one benchmark, two models
    assert [r.model.label for _, r in written] == ["a", "b"]
    with pytest.raises(ConfigError, match=r"benchmark id 'same' with model label 'a' is produced "
                                          r"twice \(also by .*two.yaml\)"):
        run_configs([config, config], tmp_path / "twice", quiet=True)
