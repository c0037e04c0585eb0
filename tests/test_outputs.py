"""Output folders (issue 21, sections 1 and 2): ids are names, every file lands under
--out, a folder is never rewritten silently (digest, resume, --overwrite, lock), the report
describes every result and is written atomically, writability is checked before any work.

A tiny registered task (``t-outputs``) stands in for a benchmark, so each case runs in
milliseconds and counts how often it really ran."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuromark.cli import main
from neuromark.config import IdentitySettings
from neuromark.errors import ConfigError, DataError
from neuromark.identity import id_problem, path_in
from neuromark.registry import tasks
from neuromark.results import Results, Score
from neuromark.run_folder import LOCK_NAME, MANIFEST_NAME, differing_keys
from neuromark.tasks.base import TaskBase


class OutputsSettings(IdentitySettings.__base__):  # a StrictModel
    task: str
    benchmark: IdentitySettings
    value: float = 1.0
    extra_ids: list[str] = []


class OutputsTask(TaskBase):
    """Writes one result per id (``benchmark.id`` and ``extra_ids``, unvalidated, as a
    careless plugin would) with score ``value``; counts its runs."""

    name = "t-outputs"
    runs = 0

    settings_model = OutputsSettings

    def execute(self, plan, ctx):
        cfg, config = plan.settings, plan.config
        type(self).runs += 1
        ids = [cfg.benchmark.id, *cfg.extra_ids]
        return [Results({"score": Score(cfg.value)}, cfg.benchmark.info(id=i), config=config.data)
                for i in ids]


@pytest.fixture(autouse=True)
def _task():
    tasks.register("t-outputs", OutputsTask())
    OutputsTask.runs = 0
    yield
    tasks._entries.pop("t-outputs", None)


def write(tmp_path: Path, body: str, name: str = "bench.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def body(id_: str = "b1", value: float = 1.0, extra: str = "") -> str:
    return f"task: t-outputs\nbenchmark: {{id: '{id_}'}}\nvalue: {value}\n{extra}"


def digests(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (the lock file aside: it holds the last pid)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != LOCK_NAME}


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return code, out


# --- 1. ids are names --------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["../../x", "/etc/passwd", "a/b", "..", ".", "", "a b",
                                 "x\\y", "é"])
def test_bad_id_refused_at_load_with_file_and_line(tmp_path, capsys, bad):
    cfg = write(tmp_path, body(bad))
    before = digests(tmp_path)
    code, out = run(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert code == 1
    assert f"{cfg}:2" in out.err and "benchmark.id" in out.err and "not a valid id" in out.err
    assert OutputsTask.runs == 0 and not (tmp_path / "out").exists()
    assert digests(tmp_path) == before


@pytest.mark.parametrize("good", ["b1", "qubo-mis.v2_final", "A.B-C_1"])
def test_good_ids_pass(good):
    assert id_problem(good) is None
    assert IdentitySettings(id=good).id == good


def test_a_derived_id_that_escapes_is_refused_and_nothing_written_outside(tmp_path, capsys):
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    cfg = write(tmp_path, body("b1", extra="extra_ids: ['../victim']\n"))
    out_dir = tmp_path / "out"
    code, out = run(["run", str(cfg), "--out", str(out_dir), "--quiet"], capsys)
    assert code == 1 and "outside the output folder" in out.err and str(cfg) in out.err
    assert victim.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.yaml", "out", "victim.json"]


def test_path_in_refuses_escapes(tmp_path):
    assert path_in(tmp_path, "a.json") == tmp_path / "a.json"
    for bad in ("../a.json", "/tmp/a.json", "sub/a.json", "..json"):
        with pytest.raises(DataError, match="outside the output folder"):
            path_in(tmp_path, bad)


def test_qubo_solver_label_that_is_a_path_is_refused(tmp_path, capsys):
    cfg = write(tmp_path, "task: qubo\nbenchmark: {id: q}\nworkloads: {sizes: [10], "
                          "densities: [0.1], seeds: [0]}\nsolvers:\n  - name: neuromark-sa\n"
                          "    label: ../../evil\nfixed_timeout: {timeouts: [0.01]}\n")
    code, out = run(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"], capsys)
    assert code == 1 and f"{cfg}:" in out.err and "label" in out.err
    assert "not a valid id" in out.err and not (tmp_path / "o").exists()


def test_qubo_benchmark_id_that_is_a_path_is_refused(tmp_path, capsys):
    cfg = write(tmp_path, "task: qubo\nbenchmark: {id: /tmp/x}\nworkloads: {sizes: [10], "
                          "densities: [0.1], seeds: [0]}\nsolvers:\n  - name: neuromark-sa\n"
                          "fixed_timeout: {timeouts: [0.01]}\n")
    code, out = run(["validate", str(cfg)], capsys)
    assert code == 1 and f"{cfg}:2" in out.err and "benchmark.id" in out.err


def test_mackey_glass_model_label_that_is_a_path_is_refused(tmp_path, capsys):
    cfg = write(tmp_path, "task: mackey_glass\ndata: {taus: [17], instances: 1}\n"
                          "models:\n  - {name: esn, label: ../../x}\n")
    code, out = run(["validate", str(cfg)], capsys)
    assert code == 1 and f"{cfg}:4" in out.err and "not a valid id" in out.err


# --- 2. a results folder is never silently rewritten -------------------------------------

def test_rerun_same_config_resumes_and_keeps_results(tmp_path, capsys):
    cfg = write(tmp_path, body("b1", 2.5))
    out_dir = tmp_path / "out"
    assert run(["run", str(cfg), "--out", str(out_dir), "--quiet"], capsys)[0] == 0
    manifest = json.loads((out_dir / MANIFEST_NAME).read_text())
    assert len(manifest["digest"]) == 64 and manifest["configs"]["bench"]["value"] == 2.5
    code, out = run(["run", str(cfg), "--out", str(out_dir), "--quiet"], capsys)
    assert code == 0 and "resuming" in out.out
    assert Results.load(out_dir / "b1.json")["score"] == 2.5


def test_different_config_refused_naming_keys_and_files_unchanged(tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert run(["run", str(write(tmp_path, body("b1", 1.0))), "--out", str(out_dir),
                "--quiet"], capsys)[0] == 0
    before = digests(out_dir)
    cfg = write(tmp_path, body("b1", 3.0))
    code, out = run(["run", str(cfg), "--out", str(out_dir), "--quiet"], capsys)
    assert code == 1 and "bench.value" in out.err and "--overwrite" in out.err
    assert digests(out_dir) == before and OutputsTask.runs == 1


def test_overwrite_replaces_and_report_lists_every_result(tmp_path, capsys):
    out_dir = tmp_path / "out"
    run(["run", str(write(tmp_path, body("b1", 1.0))), "--out", str(out_dir), "--quiet"], capsys)
    code, _ = run(["run", str(write(tmp_path, body("b2", 7.0), "other.yaml")), "--out",
                   str(out_dir), "--quiet", "--overwrite"], capsys)
    assert code == 0
    assert Results.load(out_dir / "b2.json")["score"] == 7.0
    assert Results.load(out_dir / "b1.json")["score"] == 1.0  # kept, and described
    report = (out_dir / "report.md").read_text()
    assert "## b2 " in report and "## b1 " in report and "Earlier results" in report
    assert "2 results file(s)" in report


def test_overwrite_with_same_id_replaces_its_file(tmp_path, capsys):
    out_dir = tmp_path / "out"
    run(["run", str(write(tmp_path, body("b1", 1.0))), "--out", str(out_dir), "--quiet"], capsys)
    run(["run", str(write(tmp_path, body("b1", 4.0))), "--out", str(out_dir), "--quiet",
         "--overwrite"], capsys)
    assert Results.load(out_dir / "b1.json")["score"] == 4.0
    assert json.loads((out_dir / MANIFEST_NAME).read_text())["configs"]["bench"]["value"] == 4.0


def test_foreign_non_empty_folder_refused_without_overwrite(tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "notes.txt").write_text("mine")
    code, out = run(["run", str(write(tmp_path, body())), "--out", str(out_dir), "--quiet"],
                    capsys)
    assert code == 1 and "notes.txt" in out.err and "not empty" in out.err
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(["notes.txt", LOCK_NAME])
    assert OutputsTask.runs == 0


def test_garbage_manifest_is_a_clear_error(tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / MANIFEST_NAME).write_bytes(os.urandom(64))
    code, out = run(["run", str(write(tmp_path, body())), "--out", str(out_dir), "--quiet"],
                    capsys)
    assert code == 1 and MANIFEST_NAME in out.err and OutputsTask.runs == 0


def test_out_is_an_existing_file(tmp_path, capsys):
    target = tmp_path / "out"
    target.write_text("precious")
    code, out = run(["run", str(write(tmp_path, body())), "--out", str(target), "--quiet"],
                    capsys)
    assert code == 1 and "not a folder" in out.err and str(target) in out.err
    assert target.read_text() == "precious" and OutputsTask.runs == 0


def test_out_under_an_existing_file(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    code, out = run(["run", str(write(tmp_path, body())), "--out", str(tmp_path / "f" / "o"),
                     "--quiet"], capsys)
    assert code == 1 and "cannot create" in out.err and OutputsTask.runs == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_out_fails_before_any_work(tmp_path, capsys):
    out_dir = tmp_path / "ro"
    out_dir.mkdir()
    out_dir.chmod(0o555)
    try:
        code, out = run(["run", str(write(tmp_path, body())), "--out", str(out_dir), "--quiet"],
                        capsys)
    finally:
        out_dir.chmod(0o755)
    assert code == 1 and "writable" in out.err and OutputsTask.runs == 0


def test_second_run_fails_at_once_naming_the_holders_pid(tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         f"f = open({str(out_dir / LOCK_NAME)!r}, 'a+')\n"
         "fcntl.flock(f, fcntl.LOCK_EX)\nf.write(str(os.getpid())); f.flush()\n"
         "print('locked', flush=True)\ntime.sleep(30)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        code, out = run(["run", str(write(tmp_path, body())), "--out", str(out_dir), "--quiet"],
                        capsys)
    finally:
        holder.kill()
        holder.wait()
    assert code == 1 and f"pid {holder.pid}" in out.err and OutputsTask.runs == 0
    # once the holder is gone the folder is free again
    assert run(["run", str(write(tmp_path, body())), "--out", str(out_dir), "--quiet"],
               capsys)[0] == 0


def test_report_is_atomic_a_failed_write_keeps_the_old_one(tmp_path, capsys, monkeypatch):
    out_dir = tmp_path / "out"
    cfg = write(tmp_path, body())
    run(["run", str(cfg), "--out", str(out_dir), "--quiet"], capsys)
    old = (out_dir / "report.md").read_bytes()
    (out_dir / "b1.json").unlink()  # so that the new report would differ
    real = os.replace

    def full_disk(src, dst):  # the report's final step fails, as on a full disk
        if str(dst).endswith("report.md"):
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", full_disk)
    try:
        assert main(["run", str(cfg), "--out", str(out_dir), "--quiet"]) != 0
    except OSError:
        pass
    monkeypatch.undo()
    assert (out_dir / "report.md").read_bytes() == old
    assert not [p for p in out_dir.iterdir() if p.name.endswith(".tmp")]


def test_report_names_files_that_are_not_results(tmp_path, capsys):
    out_dir = tmp_path / "out"
    cfg = write(tmp_path, body())
    run(["run", str(cfg), "--out", str(out_dir), "--quiet"], capsys)
    (out_dir / "junk.json").write_text("not json")
    run(["run", str(cfg), "--out", str(out_dir), "--quiet"], capsys)
    report = (out_dir / "report.md").read_text()
    assert "`junk.json`: not a readable results file" in report and "## b1 " in report


def test_nothing_written_outside_out(tmp_path, capsys, monkeypatch):
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("NEUROMARK_CACHE_DIR", str(tmp_path / "cache"))
    cfg = write(tmp_path, body())
    before = digests(tmp_path)
    assert run(["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"], capsys)[0] == 0
    after = digests(tmp_path)
    new = sorted(set(after) - set(before))
    assert all(name.startswith("out/") for name in new), new
    assert {k: v for k, v in after.items() if k in before} == before
    assert not any(work.iterdir()) and not (tmp_path / "cache").exists()


def test_differing_keys():
    assert differing_keys({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3, "d": 0}}) == [
        "a.c", "a.d"]
    assert differing_keys({"x": [1]}, {"x": [1]}) == []


def test_duplicate_ids_refused_before_the_second_file(tmp_path, capsys):
    cfg = write(tmp_path, body("b1", extra="extra_ids: ['b1']\n"))
    code, out = run(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"], capsys)
    assert code == 1 and "produced twice" in out.err


def test_config_errors_never_touch_an_existing_folder(tmp_path, capsys):
    out_dir = tmp_path / "out"
    run(["run", str(write(tmp_path, body())), "--out", str(out_dir), "--quiet"], capsys)
    before = digests(out_dir)
    bad = write(tmp_path, "task: t-outputs\nbenchmark: {id: b1}\nvalue: [1]\n", "bad.yaml")
    code, out = run(["run", str(bad), "--out", str(out_dir), "--quiet"], capsys)
    assert code == 1 and f"{bad}:3" in out.err
    assert digests(out_dir) == before


def test_claim_folder_raises_config_error_for_a_file(tmp_path):
    from neuromark.run_folder import claim_folder

    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="not a folder"), claim_folder(tmp_path / "f", []):
        pass
