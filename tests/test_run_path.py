"""A run's path is straight (issue 46, item 4): the suite plans each config once, the
executor runs, the run folder writes every results file, the report reads, and the system
track writes its submission last, while the folder is still claimed; no step comes back to
an earlier one. Driven through ``neuromark run`` with a registered stand-in task that
logs each step."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from neuromark.cli import main
from neuromark.commands.run import run_and_report
from neuromark.config import IdentitySettings, StrictModel, validate
from neuromark.errors import ConfigError
from neuromark.registry import tasks
from neuromark.results import Results, Score

NAME = "t-run-path"


class PathSettings(StrictModel):
    task: str
    benchmark: IdentitySettings
    value: float = 1.0


class PathTask:
    """Plans and runs one result with score ``value``; appends each step to ``log``."""

    name = NAME
    placement = "unit"

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def plan(self, config, ctx):
        self.log.append(("plan", config.label or config.path.stem))
        return validate(PathSettings, config.data, config)

    def run(self, plan, ctx):
        self.log.append(("run", plan.benchmark.id))
        return [Results({"score": Score(plan.value)}, plan.benchmark.info(), config=plan.model_dump())]


@pytest.fixture
def task(monkeypatch):
    """The registered stand-in; ``Results.save`` logs its caller's module into the same log."""
    fake = PathTask()
    tasks.register(NAME, fake)
    save = Results.save

    def logged_save(self, path, **kwargs):
        fake.log.append(("save", sys._getframe(1).f_globals["__name__"]))
        return save(self, path, **kwargs)

    monkeypatch.setattr(Results, "save", logged_save)
    yield fake
    tasks._entries.pop(NAME, None)


def configs(tmp_path: Path) -> tuple[Path, Path]:
    """``a.yaml`` and a suite of ``b.yaml`` plus ``a.yaml`` seeded twice: four entries."""
    for stem, value in (("a", 2), ("b", 3)):
        (tmp_path / f"{stem}.yaml").write_text(
            f"task: {NAME}\nbenchmark: {{id: path-{stem}}}\nvalue: {value}\n")
    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nentries:\n  - b.yaml\n  - {config: a.yaml, seeds: [0, 1], key: value}\n")
    return tmp_path / "a.yaml", suite


def test_each_config_is_read_and_planned_once_then_run_then_written_then_reported(
        tmp_path, task, monkeypatch, capsys):
    import neuromark.commands.run as run_command
    import neuromark.suite as suite

    read: list[str] = []
    load = suite.load_config
    monkeypatch.setattr(suite, "load_config", lambda path: read.append(Path(path).name) or load(path))
    report = run_command.print_and_write_report
    monkeypatch.setattr(run_command, "print_and_write_report",
                        lambda folder, written, wall_s: task.log.append(("report", str(len(written))))
                        or report(folder, written, wall_s))
    a, s = configs(tmp_path)
    assert main(["run", str(a), str(s), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    # a.yaml is given once and named by the suite once (for two seeds): read twice, not more
    assert sorted(read) == ["a.yaml", "a.yaml", "b.yaml", "s.yaml"]
    entries = ["a", "b", "a-seed0", "a-seed1"]
    assert task.log == [
        *[("plan", e) for e in entries],  # every entry planned once, before anything runs
        *[step for e in ("path-a", "path-b", "path-a-seed0", "path-a-seed1")
          for step in (("run", e), ("save", "neuromark.run_folder"))],  # only the run folder writes
        ("report", "4")]  # the report last, once, reading the four results
    out = capsys.readouterr().out
    assert "4 result file(s) in" in out and "submission" not in out  # no system results: none
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        ".neuromark-run", ".neuromark.lock", "path-a-seed0.json", "path-a-seed1.json",
        "path-a.json", "path-b.json", "report.md"]


def test_an_alias_of_one_task_reads_and_plans_each_config_once(tmp_path, task, monkeypatch):
    """``system run`` / ``qubo run`` check every config's task before planning, from the
    same reading of the files (it used to expand the configs twice)."""
    import neuromark.suite as suite

    read: list[str] = []
    load = suite.load_config
    monkeypatch.setattr(suite, "load_config", lambda path: read.append(Path(path).name) or load(path))
    a, _ = configs(tmp_path)
    assert run_and_report([a], tmp_path / "out", quiet=True, only_task=NAME) == 0
    assert read == ["a.yaml"]
    assert [step for step, _ in task.log] == ["plan", "run", "save"]
    with pytest.raises(ConfigError, match=r"a.yaml:1: this command runs task: system, got 't-run-path'"):
        run_and_report([a], tmp_path / "other", quiet=True, only_task="system")
    assert [step for step, _ in task.log] == ["plan", "run", "save"]  # nothing planned
    assert not (tmp_path / "other").exists()


def test_the_system_track_finishes_the_run_inside_the_claimed_folder(tmp_path, task, monkeypatch):
    """The submission step belongs to the system track and comes last: after the report,
    while the run still holds the folder's lock; its verdict is the exit status."""
    import neuromark.system.track.submission as submission
    from neuromark.run_folder import claim_folder

    seen: list = []

    def finish(folder, system=None, *, allow_invalid=False):
        seen.append((folder, system, allow_invalid, (folder / "report.md").is_file()))
        with pytest.raises(ConfigError, match="another neuromark run"), claim_folder(folder, []):
            pass
        return 1

    monkeypatch.setattr(submission, "finish_submission", finish)
    a, _ = configs(tmp_path)
    desc = tmp_path / "system.yaml"
    assert main(["run", str(a), "--out", str(tmp_path / "out"), "--quiet", "--system", str(desc),
                 "--allow-invalid"]) == 1
    assert seen == [(tmp_path / "out", desc, True, True)]


def test_the_commands_leave_the_submission_to_the_system_track():
    """``neuromark run`` and its aliases import nothing of the submission: the suite's last
    step calls the system track, which writes it."""
    import ast

    src = Path(__file__).resolve().parents[1] / "src/neuromark"
    for name in ("commands/run.py", "commands/system.py", "benchmarks/qubo/cli.py"):
        tree = ast.parse((src / name).read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "neuromark.system.track.submission" not in imported, name
        assert not {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & {
            "write_submission_dir", "finish_submission", "invalid_results"}, name


def test_the_suite_and_the_run_command_write_no_file_themselves():
    """The suite plans and runs, the command parses flags: neither writes a file (no results
    ``save``, no ``write_*``, ``mkdir``, ``open`` or atomic writer) but through the claimed
    run folder (``folder.save``, ``folder.write_files``); the run folder module writes."""
    import ast

    writers = {"save", "write_text", "write_bytes", "write_json_atomic", "write_text_atomic",
               "atomic_path", "mkdir", "open", "touch", "write_files"}
    src = Path(__file__).resolve().parents[1] / "src/neuromark"

    def calls(path: Path) -> set[str]:
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "folder":
                    continue  # the RunFolder's own methods
                found.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
        return found & writers

    assert calls(src / "suite.py") == set()
    assert calls(src / "commands/run.py") == set()
    assert {"save", "mkdir", "write_bytes", "write_json_atomic"} <= calls(src / "run_folder.py")
