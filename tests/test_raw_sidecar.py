"""The raw-array sidecar ``<id>.raw.npz`` follows the results file's rules (docs/files.md):
digest recorded and checked, never replacing a file its results file does not name unless
``--overwrite``, removed with the results that named it, atomic with its JSON.

A tiny registered task (``t-sidecar``) writes one result whose raw array (100 numbers, so
it goes to the sidecar) is present or not as the test says, with an unchanged config."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import neuromark.results as results_module
from neuromark.cli import main
from neuromark.config import IdentitySettings
from neuromark.errors import DataError
from neuromark.identity import BenchmarkIdentity
from neuromark.registry import tasks
from neuromark.results import Results, Score
from neuromark.run_folder import LOCK_NAME
from neuromark.tasks.base import TaskBase


class SidecarSettings(IdentitySettings.__base__):  # a StrictModel
    task: str
    benchmark: IdentitySettings


class SidecarTask(TaskBase):
    """One result ``score``; its raw value is ``offset + arange(100)`` when ``big``."""

    name = "t-sidecar"
    big = True
    offset = 0.0

    settings_model = SidecarSettings

    def execute(self, plan, ctx):
        cfg, config = plan.settings, plan.config
        raw = np.arange(100.0) + self.offset if self.big else None
        return [Results({"score": Score(1.0, raw=raw)}, cfg.benchmark.info(), config=config.data)]


@pytest.fixture(autouse=True)
def _task():
    tasks.register("t-sidecar", SidecarTask())
    SidecarTask.big, SidecarTask.offset = True, 0.0
    yield
    tasks._entries.pop("t-sidecar", None)


@pytest.fixture
def cfg(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text("task: t-sidecar\nbenchmark: {id: b1}\n")
    return path


def digests(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.iterdir()) if p.is_file() and p.name != LOCK_NAME}


def run(capsys, *argv):
    code = main(["run", *map(str, argv), "--quiet"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return code, out


def raw_of(path: Path) -> np.ndarray:
    return np.asarray(Results.load(path).scores["score"].raw)


def test_digest_recorded_and_checked(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    Results({"score": Score(1.0, raw=np.arange(100.0))}).save(a)
    Results({"score": Score(2.0, raw=np.ones(100))}).save(b)
    data = json.loads(a.read_text())
    assert data["raw_sidecar"] == "a.raw.npz"
    assert data["raw_sidecar_sha256"] == hashlib.sha256((tmp_path / "a.raw.npz").read_bytes()
                                                        ).hexdigest()
    assert raw_of(a).tolist() == list(range(100))
    (tmp_path / "a.raw.npz").write_bytes((tmp_path / "b.raw.npz").read_bytes())  # swapped
    with pytest.raises(DataError, match="a.raw.npz: its sha256 is not the one"):
        Results.load(a)
    del data["raw_sidecar_sha256"]  # files written before the digest load unchecked
    a.write_text(json.dumps(data))
    assert raw_of(a).tolist() == [1.0] * 100


def test_rerun_resumes_and_replaces_its_own_sidecar(tmp_path, cfg, capsys):
    out = tmp_path / "out"
    assert run(capsys, cfg, "--out", out)[0] == 0
    assert raw_of(out / "b1.json")[0] == 0.0
    SidecarTask.offset = 5.0
    code, printed = run(capsys, cfg, "--out", out)
    assert code == 0 and "resuming" in printed.out
    assert raw_of(out / "b1.json")[0] == 5.0


def test_foreign_sidecar_is_never_replaced_silently(tmp_path, cfg, capsys):
    out = tmp_path / "out"
    SidecarTask.big = False
    assert run(capsys, cfg, "--out", out)[0] == 0  # results without a sidecar
    foreign = out / "b1.raw.npz"
    foreign.write_bytes(b"my own arrays")
    before = digests(out)
    SidecarTask.big = True
    code, printed = run(capsys, cfg, "--out", out)  # resume: the same configs
    assert code == 1 and "b1.raw.npz: exists and is not the raw sidecar" in printed.err
    assert "--overwrite" in printed.err
    assert digests(out) == {**before, "report.md": digests(out)["report.md"]}
    SidecarTask.big = False  # results without arrays leave a file they do not name alone
    assert run(capsys, cfg, "--out", out)[0] == 0 and foreign.read_bytes() == b"my own arrays"
    SidecarTask.big = True
    assert run(capsys, cfg, "--out", out, "--overwrite")[0] == 0  # told: replaced
    assert raw_of(out / "b1.json").tolist() == list(range(100))


def test_foreign_folder_with_a_sidecar_refused_without_overwrite(tmp_path, cfg, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "b1.raw.npz").write_bytes(b"x")
    code, printed = run(capsys, cfg, "--out", out)
    assert code == 1 and "b1.raw.npz" in printed.err and "not empty" in printed.err
    assert (out / "b1.raw.npz").read_bytes() == b"x"


def test_results_without_arrays_remove_the_sidecar_they_replace(tmp_path, cfg, capsys):
    out = tmp_path / "out"
    assert run(capsys, cfg, "--out", out)[0] == 0 and (out / "b1.raw.npz").is_file()
    SidecarTask.big = False
    assert run(capsys, cfg, "--out", out)[0] == 0
    assert not (out / "b1.raw.npz").exists()
    assert "raw_sidecar" not in json.loads((out / "b1.json").read_text())


def test_a_failed_json_write_leaves_both_old_files(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    Results({"score": Score(1.0, raw=np.arange(100.0))}).save(path)
    before = digests(tmp_path)

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(results_module, "write_json_atomic", fail)
    with pytest.raises(OSError, match="disk full"):
        Results({"score": Score(2.0, raw=np.ones(100))}).save(path)
    monkeypatch.undo()
    assert digests(tmp_path) == before
    assert raw_of(path).tolist() == list(range(100))


def test_leaderboard_copies_only_the_sidecar_a_run_names(tmp_path):
    from neuromark.report.leaderboard import build_leaderboard
    from neuromark.report.runs import read_runs

    runs = tmp_path / "runs"
    Results({"score": Score(1.0, raw=np.arange(100.0))}, BenchmarkIdentity("b1")).save(runs / "b1.json")
    Results({"score": Score(2.0)}, BenchmarkIdentity("b2")).save(runs / "b2.json")
    (runs / "b2.raw.npz").write_bytes(b"not b2's")  # a stray file b2.json does not name
    build_leaderboard(read_runs([runs / "b1.json", runs / "b2.json"]), tmp_path / "board")
    copied = sorted(p.name for p in (tmp_path / "board").rglob("*.raw.npz"))
    assert copied == ["b1.raw.npz"]
