"""Seeds (issue 32, point 7): every seed a config can set lies in ``[0, 2**32)``, checked at
load with file:line; a long plain list is not reported as an alias bomb."""

from __future__ import annotations

import importlib
import pkgutil
import typing

import pytest
from pydantic import TypeAdapter

import neuromark
from neuromark.cli import main
from neuromark.components import options_model
from neuromark.config import MAX_EXPANDED_NODES, StrictModel, parse_yaml
from neuromark.errors import ConfigError
from neuromark.suite import expand

MG = """task: mackey_glass
benchmark: {{id: mg-seeds, version: "1.0"}}
data: {{taus: [17], instances: 2, length: 4, shift: 0.5}}
models:
  - name: esn
    params: {{reservoir_size: 30, warmup: 30}}
    seed: {seed}
metrics: [footprint]
"""


@pytest.mark.parametrize("seed", [-1, 2**32, 2**70])
def test_seed_outside_0_to_2_32_is_refused_at_load_with_file_line(tmp_path, capsys, seed):
    path = tmp_path / "mg.yaml"
    path.write_text(MG.format(seed=seed))
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:7: models.0.seed:" in err and f"(got {seed})" in err


def test_seed_at_the_ends_of_the_range_is_accepted(tmp_path):
    for seed in (0, 2**32 - 1):
        path = tmp_path / f"mg{seed}.yaml"
        path.write_text(MG.format(seed=seed))
        assert main(["validate", str(path)]) == 0


def test_suite_seeds_outside_the_range_are_refused_with_the_suite_line(tmp_path):
    (tmp_path / "mg.yaml").write_text(MG.format(seed=0))
    (tmp_path / "s.yaml").write_text(
        "suite: s\nentries:\n  - {config: mg.yaml, seeds: [0, 4294967296], key: models.0.seed}\n")
    with pytest.raises(ConfigError, match=r"s.yaml:3: entries.0.seeds.1: Input should be less "
                                          r"than 4294967296"):
        expand([tmp_path / "s.yaml"])


def test_component_seed_options_are_in_range():
    def entry(seed: int = 0, seeds: list[int] | None = None) -> None:
        """A registry entry taking a seed."""

    model = options_model(entry)
    assert model(seed=2**32 - 1).seed == 2**32 - 1
    for bad in ({"seed": -1}, {"seed": 2**70}, {"seeds": [0, -5]}):
        with pytest.raises(ValueError, match=r"a seed must be in \[0, 2\*\*32\)"):
            model(**bad)


def _all_config_models() -> list[type[StrictModel]]:
    for info in pkgutil.walk_packages(neuromark.__path__, "neuromark."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            continue
    out, todo = [], [StrictModel]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo.extend(cls.__subclasses__())
    return out


def test_every_config_field_named_seed_or_seeds_is_bounded():
    checked = []
    for model in _all_config_models():
        for name in ("seed", "seeds"):
            field = model.model_fields.get(name)
            if field is None or not model.__module__.startswith("neuromark"):  # not a test's or
                # a docs example's model (those run in this process only when their test has run)
                continue
            annotation = (typing.Annotated[(field.annotation, *field.metadata)] if field.metadata
                          else field.annotation)
            adapter = TypeAdapter(annotation)
            for bad in (-1, 2**32):
                with pytest.raises(ValueError):
                    adapter.validate_python([bad] if name == "seeds" else bad)
            checked.append(f"{model.__module__}.{model.__name__}.{name}")
    assert len(checked) >= 12, checked  # the tasks' seeds, the suite's, the QUBO config's


def test_a_long_plain_list_is_not_called_an_alias_bomb():
    text = "seeds: [" + ",".join("0" for _ in range(MAX_EXPANDED_NODES + 10)) + "]\n"
    with pytest.raises(ConfigError) as err:
        parse_yaml(text)
    assert "YAML nodes, more than the 100000 a config may hold" in str(err.value)
    assert "alias bomb" not in str(err.value)


def test_an_alias_bomb_is_still_called_one():
    lines = ["a0: &a0 [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
              f"*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 7)]
    with pytest.raises(ConfigError, match="alias bomb"):
        parse_yaml("\n".join(lines) + "\n")


def test_config_size_limit_refuses_10_to_the_6_seeds_before_parsing(tmp_path, capsys):
    """A 10^6-seed list (6.9 MB) took 76 s to compose before any check saw it; it is now
    refused on its length, before the YAML parser runs."""
    import time

    from neuromark.config import MAX_CONFIG_CHARS

    path = tmp_path / "big.yaml"
    path.write_text("suite: s\nentries:\n  - {config: x.yaml, seeds: ["
                    + ",".join(str(i) for i in range(10 ** 6)) + "]}\n")
    start = time.perf_counter()
    assert main(["validate", str(path)]) == 1
    assert time.perf_counter() - start < 30  # refused on size (composing it took 76 s)
    err = capsys.readouterr().err
    size = len(path.read_text())
    assert f"big.yaml: {size:,} characters, more than the {MAX_CONFIG_CHARS:,} a config may " \
           "hold" in err and "alias bomb" not in err


def test_config_node_limit_stops_composing_at_the_limit():
    text = "seeds: [" + ",".join("0" for _ in range(3 * MAX_EXPANDED_NODES)) + "]\n"
    with pytest.raises(ConfigError, match=rf"more than {MAX_EXPANDED_NODES} YAML nodes, .*reading "
                                          "stopped there"):
        parse_yaml(text)
