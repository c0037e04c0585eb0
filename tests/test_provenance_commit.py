"""The git commit in provenance: one ``git rev-parse`` per place and process, yet a commit,
checkout or reset made between two runs is seen (``provenance.git_commit``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from neuromark import provenance

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()


def commit(repo: Path, text: str) -> str:
    (repo / "f.txt").write_text(text)
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", text)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    return tmp_path


@pytest.fixture
def rev_parse_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The git commands ``git_commit`` starts (the cache emptied first)."""
    monkeypatch.setattr(provenance, "_COMMITS", {})
    calls: list[list[str]] = []
    real = subprocess.run

    def counted(cmd, *args, **kwargs):
        if "--absolute-git-dir" in cmd:
            calls.append(list(cmd))
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(provenance.subprocess, "run", counted)
    return calls


def test_one_subprocess_while_head_stays(repo: Path, rev_parse_calls: list) -> None:
    first = commit(repo, "one")
    assert [provenance.git_commit(repo) for _ in range(5)] == [first] * 5
    assert len(rev_parse_calls) == 1


def test_new_commit_checkout_and_reset_are_seen(repo: Path, rev_parse_calls: list) -> None:
    first = commit(repo, "one")
    assert provenance.git_commit(repo) == first
    second = commit(repo, "two")
    assert provenance.git_commit(repo) == second
    git(repo, "checkout", "-q", first)
    assert provenance.git_commit(repo) == first
    git(repo, "checkout", "-q", "-")
    git(repo, "reset", "-q", "--hard", first)
    assert provenance.git_commit(repo) == first
    git(repo, "commit", "-q", "--amend", "-m", "amended")
    amended = git(repo, "rev-parse", "HEAD")
    assert provenance.git_commit(repo) == amended != first


def test_without_reflog_every_call_asks_git(repo: Path, rev_parse_calls: list) -> None:
    first = commit(repo, "one")
    shutil.rmtree(repo / ".git" / "logs")
    assert provenance.git_commit(repo) == first
    assert provenance.git_commit(repo) == first
    assert len(rev_parse_calls) == 2
    second = commit(repo, "two")  # git writes the reflog again: cached from here
    assert provenance.git_commit(repo) == second


def test_outside_a_repository_is_none(tmp_path: Path, rev_parse_calls: list) -> None:
    assert provenance.git_commit(tmp_path) is None


def test_a_branch_moved_without_the_reflog_is_seen(repo: Path, rev_parse_calls: list) -> None:
    """A tool that writes the branch file itself (no reflog entry, HEAD untouched)."""
    first = commit(repo, "one")
    second = commit(repo, "two")
    assert provenance.git_commit(repo) == second
    branch = git(repo, "symbolic-ref", "HEAD")
    (repo / ".git" / branch).write_text(first + "\n")
    assert provenance.git_commit(repo) == first
