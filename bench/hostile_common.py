"""The case registry of ``bench/hostile_sweep.py`` and the in-process CLI helper."""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Case:
    """One hostile input: ``build(tmp)`` writes it and returns the act to run; ``expect``
    "error" (``needs``: texts a clear message holds) or "result" (``check(value)`` is True
    or says what is wrong); ``test``: the test in tests/ that checks the rule."""

    id: str
    rule: str
    test: str
    build: Callable[[Path], Callable[[], Any]]
    expect: str = "error"
    needs: tuple[str, ...] = ()
    check: Callable[[Any], Any] | None = None


CASES: list[Case] = []


def case(id: str, rule: str, test: str, *, expect: str = "error", needs: tuple[str, ...] = (),
         check: Callable[[Any], Any] | None = None) -> Callable[[Callable], Callable]:
    """Register the decorated builder as a case (see :class:`Case`)."""
    def register(build: Callable[[Path], Callable[[], Any]]) -> Callable:
        assert all(c.id != id for c in CASES), id
        CASES.append(Case(id, rule, test, build, expect, tuple(needs), check))
        return build
    return register


class CliError(Exception):
    """``neuromark ...`` exited non-zero; the message is what it printed."""


@dataclass(frozen=True)
class CliRun:
    code: int
    out: str
    err: str


def cli(*args: object, ok: tuple[int, ...] = (0,)) -> CliRun:
    """``neuromark ARGS`` in this process: its output, or :class:`CliError` with what it
    printed when the exit code is not in ``ok``. A traceback printed is a crash."""
    from neuromark.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    run = CliRun(int(code or 0), out.getvalue(), err.getvalue())
    if "Traceback (most recent call last)" in run.out + run.err:
        raise RuntimeError("traceback printed: " + (run.err or run.out).strip().splitlines()[-1])
    if run.code not in ok:
        raise CliError((run.err + run.out).strip())
    return run
