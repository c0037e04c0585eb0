"""Flags said once: a flag printed on stderr while a run goes (with its context: the
config's line, the decoding rule) is not printed again by the run's closing summary
(issue 58.5: the tie flag printed twice, also with ``--quiet``).

:func:`say_flag` prints and records ``(benchmark id, flag)``; the summary of ``neuromark
run`` (:func:`neuromark.report.markdown.format_summary`) leaves out what was said and
:func:`forget` empties the record when a run starts.
"""

from __future__ import annotations

import sys

_SAID: set[tuple[str, str]] = set()


def say_flag(benchmark_id: str, flag: str, context: str = "") -> None:
    """Print ``<benchmark id>: <flag><context>`` on stderr and record it as said."""
    _SAID.add((benchmark_id, flag))
    print(f"{benchmark_id}: {flag}{context}", file=sys.stderr)


def was_said(benchmark_id: str, flag: str) -> bool:
    """Whether :func:`say_flag` printed ``flag`` for ``benchmark_id`` since :func:`forget`."""
    return (benchmark_id, flag) in _SAID


def forget() -> None:
    """Empty the record (a new run's summary says every flag its run did not)."""
    _SAID.clear()
