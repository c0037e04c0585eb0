"""Path options of registry entries (annotated ``Path``) resolve from the config's folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest

from neuromark.components import path_options, resolve_path_options
from neuromark.config import ConfigFile
from neuromark.errors import ConfigError


def entry(a: Path, b: Path | None = None, c: str | Path = "x", d: Annotated[Path, 1] | None = None,
          e: str = "", f: int = 0) -> None:
    """Options a to d are paths; e and f are not."""


def test_path_annotations_are_found():
    assert path_options(entry) == ("a", "b", "c", "d")


def test_given_relative_paths_lie_in_the_config_folder(tmp_path):
    config = ConfigFile(data={}, path=tmp_path / "sub" / "run.yaml")
    given = {"a": "net.nir", "c": "/abs/file", "e": "keep.txt"}
    out = resolve_path_options(entry, given, {**given, "b": "default"}, config, ("model",))
    assert out["a"] == tmp_path / "sub" / "net.nir"
    assert out["c"] == Path("/abs/file")
    assert out["e"] == "keep.txt"  # not a path option
    assert out["b"] == "default"  # not given by the config: left as the entry set it


def test_a_cache_path_that_leaves_the_cache_names_the_option(tmp_path):
    config = ConfigFile(data={}, path=tmp_path / "run.yaml")
    with pytest.raises(ConfigError, match=r"model\.options\.a: .*inside the cache folder"):
        resolve_path_options(entry, {"a": "cache:../x"}, {"a": "cache:../x"}, config, ("model",))
