"""Checkpoints, caches and config paths (issue 21, sections 4 and 5): a file neuromark did
not write is never overwritten, load failures give their real reason, malformed checkpoint
dicts are clear errors, a replacement follows a printed rule, caches live in one documented
folder, and relative config paths resolve from the config's folder only."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
import torch
from test_shd_snn import make_corpus

from neuromark.benchmarks.qubo.bks import BKS_PATH, BKSTable
from neuromark.cli import main
from neuromark.config import ConfigFile, parse_yaml, resolve_path
from neuromark.context import default_cache_dir
from neuromark.errors import ConfigError, DataError
from neuromark.networks.spike_classifiers import load_checkpoint


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def svm_config(folder: Path, checkpoint: str, seed: int = 3, extra: str = "") -> Path:
    path = folder / "c.yaml"
    path.write_text(f"""task: classification
benchmark: {{id: toy-svm}}
dataset:
  name: spike_files
  options: {{train: train.h5, test: test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}}
model: {{name: svm, options: {{hidden: 16}}, checkpoint: '{checkpoint}'}}
train: {{epochs: 1, batch_size: 10, lr: 0.02, seed: {seed}}}
eval: {{batch_size: 8}}
{extra}""")
    return path


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    make_corpus(tmp_path)
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


# --- foreign files are never overwritten -------------------------------------------------

@pytest.mark.parametrize("content", ["random", "state_dict", "text"])
def test_foreign_file_at_checkpoint_is_never_overwritten(corpus, capsys, content):
    target = corpus / "mine.pt"
    if content == "random":
        target.write_bytes(os.urandom(2048))
    elif content == "state_dict":
        torch.save({"weight": torch.ones(3)}, target)
    else:
        target.write_text("my notes")
    before = sha(target)
    cfg = svm_config(corpus, "mine.pt")
    code, out = run(["run", str(cfg), "--out", str(corpus / "out"), "--quiet"], capsys)
    assert code == 1 and str(target) in out.err and "not a neuromark checkpoint" in out.err
    assert "never overwrites" in out.err
    assert sha(target) == before


def test_foreign_file_is_not_overwritten_by_train_either(corpus, capsys):
    target = corpus / "mine.pt"
    torch.save({"weight": torch.ones(3)}, target)
    before = sha(target)
    code, out = run(["train", str(svm_config(corpus, "mine.pt")), "--quiet"], capsys)
    assert code == 1 and "not a neuromark checkpoint" in out.err and sha(target) == before


def test_checkpoint_path_that_is_a_folder_fails_before_any_work(corpus, capsys):
    (corpus / "ck.pt").mkdir()
    cfg = svm_config(corpus, "ck.pt")
    code, out = run(["run", str(cfg), "--out", str(corpus / "out"), "--quiet"], capsys)
    assert code == 1 and f"{cfg}:6" in out.err and "not a file" in out.err
    assert not (corpus / "out").exists()


def test_cache_path_may_not_escape_the_cache(corpus, capsys):
    cfg = svm_config(corpus, "cache:../../evil.pt")
    code, out = run(["validate", str(cfg)], capsys)
    assert code == 1 and f"{cfg}:6" in out.err and "inside the cache folder" in out.err


# --- malformed checkpoints: the real reason ----------------------------------------------

@pytest.mark.parametrize("payload, message", [
    ({"format": 1, "config": {}, "state_dict": {}}, "missing key(s) ['kind']"),
    ({"format": 1, "kind": "cnn", "config": {}, "state_dict": {}}, "unknown kind 'cnn'"),
    ({"format": 1, "kind": "svm", "config": {}, "state_dict": {}, "extra": 1},
     "unknown key(s) ['extra']"),
    ({"format": 1, "kind": "svm", "config": {"bogus": 1}, "state_dict": {}},
     "does not build a model"),
    ({"format": 1, "kind": "svm", "config": [], "state_dict": {}}, "'config' must be a mapping"),
    ({"weight": torch.ones(2)}, "not a neuromark classification checkpoint"),
    ([1, 2, 3], "not a neuromark classification checkpoint"),
])
def test_malformed_checkpoint_dicts(tmp_path, payload, message):
    path = tmp_path / "c.pt"
    torch.save(payload, path)
    with pytest.raises(DataError) as info:
        load_checkpoint(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_random_bytes_give_the_loader_reason(tmp_path):
    path = tmp_path / "c.pt"
    path.write_bytes(os.urandom(100))
    with pytest.raises(DataError, match="not a loadable checkpoint"):
        load_checkpoint(path)


def test_evaluating_a_malformed_checkpoint_from_the_cli(tmp_path, capsys):
    make_corpus(tmp_path)
    torch.save({"format": 1, "kind": "svm", "config": {}, "state_dict": {}}, tmp_path / "x.pt")
    cfg = tmp_path / "e.yaml"
    cfg.write_text("task: classification\nbenchmark: {id: e}\ndataset: {name: spike_files, "
                   "options: {test: test.h5, dt_us: 20000, t_max_us: 200000, pool: 10}}\n"
                   "model: {checkpoint: x.pt}\n")
    code, out = run(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"], capsys)
    assert code == 1 and "x.pt" in out.err and "does not build a model" in out.err


# --- replacement rule and caches ---------------------------------------------------------

def test_cache_checkpoint_lands_in_the_cache_and_is_reused(corpus, capsys):
    cfg = svm_config(corpus, "cache:checkpoints/toy.pt")
    code, out = run(["run", str(cfg), "--out", str(corpus / "o1"), "--quiet"], capsys)
    assert code == 0, out.err
    target = corpus / "cache" / "checkpoints" / "toy.pt"
    assert target.is_file()
    before = sha(target)
    code, _ = run(["run", str(cfg), "--out", str(corpus / "o2"), "--quiet"], capsys)
    assert code == 0 and sha(target) == before
    import json

    details = json.loads((corpus / "o2" / "toy-svm--svm.json").read_text())["details"]
    assert details["checkpoint"] == str(target) and details["trained_now"] is False
    assert Path(details["test_file"]).is_absolute()


def test_cache_dir_flag(corpus, capsys, monkeypatch):
    monkeypatch.delenv("NEUROMARK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(corpus / "xdg"))
    cfg = svm_config(corpus, "cache:toy.pt")
    code, out = run(["run", str(cfg), "--out", str(corpus / "o"), "--quiet", "--cache-dir",
                     str(corpus / "flag")], capsys)
    assert code == 0, out.err
    assert (corpus / "flag" / "toy.pt").is_file() and not (corpus / "xdg").exists()


def test_cache_dir_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("NEUROMARK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "neuromark"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "neuromark"
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "own"))
    assert default_cache_dir() == tmp_path / "own"


def test_recipe_change_replaces_our_checkpoint_printing_the_rule(corpus, capsys):
    cfg = svm_config(corpus, "toy.pt")
    assert run(["run", str(cfg), "--out", str(corpus / "o1"), "--quiet"], capsys)[0] == 0
    before = sha(corpus / "toy.pt")
    cfg = svm_config(corpus, "toy.pt", seed=4)
    code, out = run(["run", str(cfg), "--out", str(corpus / "o2"), "--quiet"], capsys)
    assert code == 0
    assert "replacing neuromark checkpoint" in out.err and "train.seed" in out.err
    assert "never replaced" in out.err and sha(corpus / "toy.pt") != before


def test_recipe_change_with_train_if_missing_false_keeps_the_file(corpus, capsys):
    assert run(["run", str(svm_config(corpus, "toy.pt")), "--out", str(corpus / "o1"),
                "--quiet"], capsys)[0] == 0
    before = sha(corpus / "toy.pt")
    cfg = svm_config(corpus, "toy.pt", seed=9, extra="train_if_missing: false\n")
    code, out = run(["run", str(cfg), "--out", str(corpus / "o2"), "--quiet"], capsys)
    assert code == 1 and "different recipe" in out.err and "train.seed" in out.err
    assert sha(corpus / "toy.pt") == before


def test_unloadable_own_checkpoint_gives_the_real_reason(corpus, capsys):
    torch.save({"format": 1, "kind": "svm", "config": {"bogus": 1}, "state_dict": {}},
               corpus / "toy.pt")
    cfg = svm_config(corpus, "toy.pt", extra="train_if_missing: false\n")
    code, out = run(["run", str(cfg), "--out", str(corpus / "o"), "--quiet"], capsys)
    assert code == 1 and "does not load" in out.err and "does not build a model" in out.err
    assert "different recipe" not in out.err


# --- relative paths: the config's folder, no fallback ------------------------------------

def test_relative_paths_resolve_from_the_config_folder_only(tmp_path, monkeypatch):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "data.csv").write_text("x")  # in the working directory only
    monkeypatch.chdir(tmp_path)
    config = ConfigFile(data={}, path=Path("cfg/c.yaml"))
    assert resolve_path("data.csv", config) == tmp_path / "cfg" / "data.csv"
    assert resolve_path("/abs/x", config) == Path("/abs/x")
    assert resolve_path("data.csv", None) == tmp_path / "data.csv"


def test_a_file_in_the_working_directory_is_not_used(tmp_path, monkeypatch, capsys):
    (tmp_path / "cfg").mkdir()
    make_corpus(tmp_path)  # train.h5/test.h5 beside the cwd, not beside the config
    monkeypatch.chdir(tmp_path)
    cfg = svm_config(tmp_path / "cfg", "toy.pt")
    code, out = run(["validate", str(cfg)], capsys)
    assert code == 1 and str(tmp_path / "cfg" / "test.h5") in out.err


def test_shipped_configs_validate_from_another_folder(tmp_path, monkeypatch, capsys):
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)
    for suite in ("default", "full"):
        code, out = run(["validate", str(root / f"configs/suite/{suite}.yaml")], capsys)
        assert code == 0, out.err
    for path in (root / "configs").rglob("*.yaml"):
        text = path.read_text()
        assert "results/checkpoints" not in text and "working directory" not in text, path


# --- qubo bks never writes the package ---------------------------------------------------

def test_qubo_bks_writes_a_user_table(tmp_path, monkeypatch, capsys):
    pytest.importorskip("numba")
    before = sha(BKS_PATH)
    code, out = run(["qubo", "bks", "--sizes", "10", "--densities", "0.1", "--seeds", "0",
                     "--budget", "0.01", "--cache-dir", str(tmp_path / "c")], capsys)
    assert code == 0, out.err
    table = tmp_path / "c" / "qubo" / "bks.csv"
    assert table.is_file() and str(table) in out.out and sha(BKS_PATH) == before


def test_bks_table_without_a_path_is_not_saved(tmp_path):
    with pytest.raises(DataError, match="no path"):
        BKSTable().save()


def test_qubo_bks_table_that_is_a_folder(tmp_path, capsys):
    (tmp_path / "t").mkdir()
    code, out = run(["qubo", "bks", "--sizes", "10", "--table", str(tmp_path / "t")], capsys)
    assert code == 1 and "not a file" in out.err


def test_config_error_for_relative_bks_beside_the_config(tmp_path, monkeypatch, capsys):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "bks.csv").write_bytes(BKS_PATH.read_bytes())  # cwd only
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "cfg" / "q.yaml"
    cfg.write_text("task: qubo\nbenchmark: {id: q}\nbks: bks.csv\nworkloads: {sizes: [10], "
                   "densities: [0.1], seeds: [0]}\nsolvers:\n  - name: neuromark-sa\n"
                   "fixed_timeout: {timeouts: [0.01]}\n")
    code, out = run(["validate", str(cfg)], capsys)
    assert code == 1 and f"{cfg}:3" in out.err and str(tmp_path / "cfg" / "bks.csv") in out.err


def test_parse_yaml_without_a_file_resolves_from_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = parse_yaml("a: 1")
    assert resolve_path("x", config) == tmp_path / "x"
    with pytest.raises(ConfigError):
        resolve_path("cache:/etc/x", config)


def test_sut_weights_resolve_from_the_config_folder_only(tmp_path, monkeypatch, capsys):
    (tmp_path / "cfg").mkdir()
    torch.save({"model": {}}, tmp_path / "w.pt")  # in the working directory only
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "cfg" / "s.yaml"
    cfg.write_text("task: system\nbenchmark: {id: s}\nsut:\n  name: asc_cnn\n  options: "
                   "{data: synthetic, samples: 4, weights: w.pt}\nloadgen: {scenario: "
                   "SingleStream, mode: PerformanceOnly, min_query_count: 8, "
                   "min_duration_s: 0.01}\n")
    code, out = run(["run", str(cfg), "--out", str(tmp_path / "out")], capsys)
    assert code == 1 and "Traceback" not in out.err
    assert str(tmp_path / "cfg" / "w.pt") in out.err and "config file's folder" in out.err
