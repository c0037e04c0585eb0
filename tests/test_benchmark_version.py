"""Every shipped config names its benchmark's version; a config that names a benchmark
without one is warned about (recorded as "1.0"), naming the file and line."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import yaml

from neuromark.config import load_config
from neuromark.errors import BenchmarkVersionWarning
from neuromark.system.track.config import SystemConfig

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("path", sorted(p for p in CONFIGS.glob("*/*.yaml")
                                        if p.parent.name != "suite"), ids=lambda p: p.name)
def test_every_shipped_config_names_its_benchmark_version(path):
    data = yaml.safe_load(path.read_text())
    bench = data.get("benchmark")
    assert isinstance(bench, dict) and bench.get("version"), f"{path}: no benchmark version"


def _system(tmp_path: Path, benchmark: str) -> Path:
    path = tmp_path / "sys.yaml"
    path.write_text(f"task: system\n{benchmark}sut: {{name: sleep}}\n")
    return path


def test_a_missing_version_is_warned_with_file_and_line(tmp_path):
    from neuromark.config import validate
    path = _system(tmp_path, "benchmark:\n  id: mine\n")
    config = load_config(path)
    with pytest.warns(BenchmarkVersionWarning, match=r"sys\.yaml:2: benchmark 'mine' names no "
                                                     r"version; recorded as \"1\.0\""):
        settings = validate(SystemConfig, config.data, config)
    assert settings.benchmark.info().version == "1.0"


def test_a_named_version_is_kept_without_warning(tmp_path):
    from neuromark.config import validate
    path = _system(tmp_path, "benchmark: {id: mine, version: \"2.1\"}\n")
    config = load_config(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        settings = validate(SystemConfig, config.data, config)
    assert settings.benchmark.info().version == "2.1"
