"""Decoded audio caches (issue 32, point 3): in the cache folder, never the data folder,
keyed by the data's digest, written atomically, never over a file neuromark did not write;
NaN or infinite decoded audio is refused before anything is written."""

from __future__ import annotations

import numpy as np
import pytest

from neuromark.data.clips import decoded_cache, decoded_files
from neuromark.errors import DataError

sf = pytest.importorskip("soundfile")

RECIPE = {"dataset": "t", "clips_sha256": "abc", "samples": 8}


def _clip(i: int) -> np.ndarray:
    return np.full(8, 0.1 * i, np.float32)


def _tree(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_decoded_cache_is_keyed_by_the_data_digest(tmp_path):
    cache = tmp_path / "cache"
    first = decoded_cache(cache, "t_test", RECIPE, 3, _clip)
    array_file, meta_file = decoded_files(cache, "t_test", RECIPE)
    assert array_file.is_file() and meta_file.is_file()
    changed = {**RECIPE, "clips_sha256": "def"}  # the data changed: a cache of its own
    decoded_cache(cache, "t_test", changed, 2, _clip)
    assert decoded_files(cache, "t_test", changed)[0] != array_file
    assert np.array_equal(np.load(array_file), first)  # the first cache untouched
    assert np.array_equal(decoded_cache(cache, "t_test", RECIPE, 3, _clip), first)


def test_nan_decoded_audio_is_refused_before_anything_is_written(tmp_path):
    def broken(i: int) -> np.ndarray:
        return np.full(8, np.nan if i == 1 else 0.0, np.float32)

    cache = tmp_path / "cache"
    with pytest.raises(DataError, match=r"t_test: clip 1 decodes to NaN or infinite samples"):
        decoded_cache(cache, "t_test", RECIPE, 3, broken)
    assert not cache.exists()
    with pytest.raises(DataError, match="clip 0 decodes to NaN or infinite"):
        decoded_cache(cache, "t_test", RECIPE, 1, lambda i: np.full(8, np.inf, np.float32))


def test_a_file_neuromark_did_not_write_is_never_replaced(tmp_path):
    cache = tmp_path / "cache"
    array_file, _ = decoded_files(cache, "t_test", RECIPE)
    cache.mkdir()
    array_file.write_bytes(b"the user's own bytes")
    with pytest.raises(DataError, match="without its sidecar .*left alone"):
        decoded_cache(cache, "t_test", RECIPE, 3, _clip)
    assert array_file.read_bytes() == b"the user's own bytes"


def test_speech_commands_decodes_into_the_cache_folder_not_the_data_folder(tmp_path, monkeypatch):
    from neuromark.benchmarks.keywords.models import speech_commands

    data = tmp_path / "gsc"
    (data / "yes").mkdir(parents=True)
    for name in ("s1_nohash_0", "s2_nohash_0"):
        sf.write(data / "yes" / f"{name}.wav", np.zeros(16000, np.float32), 16000)
    (data / "testing_list.txt").write_text("yes/s1_nohash_0.wav\n")
    (data / "validation_list.txt").write_text("yes/s2_nohash_0.wav\n")
    before = _tree(data)
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    clips = speech_commands("test", root=str(data))
    assert clips.recipe_file.parent == tmp_path / "cache" / "decoded"
    assert clips.recipe_file.is_file()
    assert _tree(data) == before  # nothing written into the user's data folder


def test_a_classification_run_hands_its_cache_dir_to_a_data_set_that_takes_one(tmp_path):
    """A data set entry with a ``cache_dir`` option gets the run's --cache-dir (its
    ``decoded/`` folder) when the config sets none, so decoded audio lands in that cache."""
    import torch

    from neuromark.cli import main
    from neuromark.registry import datasets, models

    seen: list[str | None] = []

    class Tiny(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int):
            return torch.ones(3) * (i % 2), i % 2

    def tiny(split: str = "test", cache_dir: str | None = None) -> Tiny:
        seen.append(cache_dir)
        return Tiny()

    datasets.register("tiny_cached", tiny)
    models.register("tiny_linear", lambda: torch.nn.Linear(3, 2))
    try:
        (tmp_path / "c.yaml").write_text(
            "task: classification\nbenchmark: {id: tiny-cache}\n"
            "dataset: {name: tiny_cached}\nmodel: {name: tiny_linear}\n"
            "eval: {metrics: [classification_accuracy], postprocessor: argmax}\n")
        assert main(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"),
                     "--quiet", "--cache-dir", str(tmp_path / "cache")]) == 0
    finally:
        for registry, name in ((datasets, "tiny_cached"), (models, "tiny_linear")):
            registry._entries.pop(name, None)
            getattr(registry, "_origins", {}).pop(name, None)
    assert seen and set(seen) == {str(tmp_path / "cache" / "decoded")}
