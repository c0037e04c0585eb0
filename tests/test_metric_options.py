"""Metric options reach a config: ``{name: NAME, options: {...}}`` entries in a metric
list, validated against the metric class's constructor (file:line and the known options
on a mistake), in every task that builds metrics by name."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark.cli import main
from neuromark.config import parse_yaml
from neuromark.errors import ConfigError
from neuromark.metrics.names import MetricSpec, build_metrics, metric_names
from neuromark.results import Results
from neuromark.suite import validate_configs


class _Rows(nn.Module):
    """Linear(3, 2), W = [[-.5, .5, 0], [.5, .5, 0]] (column non-zeros 2, 2, 0), no bias; not
    ternary, so only the input decides MAC or AC."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2, bias=False)
        with torch.no_grad():
            self.fc.weight.copy_(torch.tensor([[-0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def _rows(split: str = "test"):
    # 8 samples, batches of 4; samples 3 and 7 analog [±.5, 0, 0] (2 MACs), the others
    # binary [±1, 1, 0] (4 ACs); class 1 when the first feature is positive
    signs = [1, -1, 1, -1, -1, 1, 1, 1]
    return [(torch.tensor([0.5 * s, 0.0, 0.0] if i % 4 == 3 else [float(s), 1.0, 0.0]),
             int(s > 0)) for i, s in enumerate(signs)]


# per sample: 6 binary x 4 ACs + 2 analog x 2 MACs over 8 samples; Dense 3 x 2
PER_SAMPLE = {"Effective_MACs": 4 / 8, "Effective_ACs": 24 / 8, "Dense": 6.0}
# neurobench's per-call rule: each batch of 4 holds an analog sample, so all ops are MACs
PER_CALL = {"Effective_MACs": 28 / 8, "Effective_ACs": 0.0, "Dense": 6.0}

BODY = ("task: classification\n"
        "benchmark: {id: toy-rows, version: '1.0'}\n"
        "dataset: {name: toy_rows}\n"
        "model: {name: rows_model}\n"
        "eval:\n"
        "  batch_size: 4\n"
        "  postprocessor: argmax\n"
        "  metrics:\n"
        "    - classification_accuracy\n")


@pytest.fixture
def registered(monkeypatch):
    from neuromark.registry import datasets, models

    monkeypatch.setitem(datasets._entries, "toy_rows", _rows)
    monkeypatch.setitem(models._entries, "rows_model", _Rows)


@pytest.mark.parametrize("entry, expected, rule", [
    ("    - synaptic_operations\n", PER_SAMPLE, "per_sample"),
    ("    - {name: synaptic_operations, options: {mac_rule: per_call}}\n", PER_CALL, "per_call"),
    ("    - name: synaptic_operations\n      options:\n        mac_rule: per_call\n",
     PER_CALL, "per_call"),
])
def test_classification_config_reaches_metric_options(tmp_path, registered, entry, expected,
                                                       rule):
    path = tmp_path / "rows.yaml"
    path.write_text(BODY + entry)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    res = Results.load(tmp_path / "out" / "toy-rows--rows_model.json")
    assert res["classification_accuracy"] == 1.0
    assert dict(res["synaptic_operations"]) == expected
    assert res.details["synaptic_operations"]["mac_rule"] == rule


@pytest.mark.parametrize("entry, line, message", [
    ("    - {name: synaptic_operations, options: {mac_rul: per_call}}\n", 10,
     "eval.metrics[1].options.mac_rul: metric 'synaptic_operations' has no option 'mac_rul'; "
     "known options: coverage, recurrent_gates, cell_mac_rule, mac_rule"),
    ("    - name: synaptic_operations\n      options:\n        mac_rule: per_call\n"
     "        gates: true\n", 13, "has no option 'gates'"),
    ("    - {name: synaptic_operations, options: {mac_rule: sometimes}}\n", 10,
     "mac_rule must be one of"),
    ("    - {name: synaptic_operations, options: {recurrent_gates: [1]}}\n", 10,
     "recurrent_gates"),
    ("    - {name: membrane_updates, options: {coverage: warn}}\n", 10,
     "known options: none"),
    ("    - {name: synaptic_operation}\n", 10, "did you mean 'synaptic_operations'"),
])
def test_bad_metric_options_name_file_and_line(tmp_path, registered, entry, line, message):
    path = tmp_path / "rows.yaml"
    path.write_text(BODY + entry)
    with pytest.raises(ConfigError) as info:
        validate_configs([path])
    assert f"{path}:{line}" in str(info.value)
    assert message in str(info.value)


def test_build_metrics_takes_names_mappings_and_specs():
    config = parse_yaml("metrics:\n  - footprint\n  - {name: connection_sparsity, "
                        "options: {recurrent_biases: true}}\n")
    built = build_metrics([*config.data["metrics"],
                           MetricSpec(name="synaptic_operations", options={"mac_rule": "per_call"})],
                          config)
    assert [m.name for m in built] == ["footprint", "connection_sparsity", "synaptic_operations"]
    assert built[1].recurrent_biases is True and built[2].mac_rule == "per_call"
    assert metric_names(config.data["metrics"]) == ["footprint", "connection_sparsity"]
    with pytest.raises(ConfigError, match=r"<config>:3: metrics\[1\]: a metric is a name or"):
        build_metrics(["footprint", {"name": "footprint", "opts": {}}],
                      parse_yaml("metrics:\n  - footprint\n  - {name: footprint, opts: {}}\n"))


def _metric_fields() -> list[tuple[str, str, object]]:
    """(task, dotted field, annotation) of every metric-list field (``list[MetricEntry]``)
    in every registered task's settings model (nested models walked), found, not listed;
    the kernel's classification task validates its eval section with its EvalSettings."""
    import typing

    from pydantic import BaseModel

    from neuromark.registry import tasks
    from neuromark.tasks.classification import EvalSettings

    found = []

    def walk(task: str, model: type[BaseModel], path: tuple[str, ...], seen: set[type]) -> None:
        for key, info in model.model_fields.items():
            annotation = info.annotation
            for part in (annotation, *typing.get_args(annotation)):
                if isinstance(part, type) and issubclass(part, BaseModel) and part not in seen:
                    seen.add(part)
                    walk(task, part, (*path, key), seen)
            if "MetricSpec" in repr(annotation):
                found.append((task, ".".join((*path, key)), annotation))

    for name in tasks.names():
        task = tasks.get(name)
        settings = EvalSettings if name == "classification" else getattr(task, "settings_model", None)
        if settings is not None:
            walk(name, settings, (), {settings})
    return found


METRIC_FIELDS = _metric_fields()


def test_metric_lists_are_found():
    tasks_with_metrics = {task for task, _, _ in METRIC_FIELDS}
    assert "classification" in tasks_with_metrics and len(tasks_with_metrics) > 1  # the walk finds them


@pytest.mark.parametrize("task, field, annotation", METRIC_FIELDS,
                         ids=[f"{task}:{field}" for task, field, _ in METRIC_FIELDS])
def test_every_task_metric_field_accepts_the_mapping_form(task, field, annotation):
    """Each task's pydantic metric-list field takes ``{name, options}`` beside names."""
    from pydantic import TypeAdapter

    adapter = TypeAdapter(annotation)
    got = adapter.validate_python(["footprint", {"name": "synaptic_operations",
                                                 "options": {"mac_rule": "per_call"}}])
    assert got[0] == "footprint"
    assert got[1] == MetricSpec(name="synaptic_operations", options={"mac_rule": "per_call"})
    with pytest.raises(ValueError, match="extra|Extra"):
        adapter.validate_python([{"name": "footprint", "opts": {}}])
