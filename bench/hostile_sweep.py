"""The hostile-input sweep of issue 32: every case the issue lists (and the leftovers of its
first round), built in a temporary folder in the real formats, run through the entry point a
user would hit, and classified.

Outcomes: ``clear error`` (a neuromark error whose message holds what the case names: the
file, the record or key, the rule), ``correct result`` (the run finished with the right
figure or flag), ``unclear error`` (an error without those), ``crash`` (any other exception
or a traceback), ``silent wrong number`` (a result that is not the right one), ``data
loss`` (a file outside ``out/`` and ``cache/`` changed, removed or written), ``hang`` (more
than :data:`LIMIT_S`). Each case names the test in ``tests/`` that checks its rule.

Usage::

    .venv/bin/python bench/hostile_sweep.py            # every case, a table, counts
    .venv/bin/python bench/hostile_sweep.py -k dvs     # cases whose id holds 'dvs'

Exit status 1 when a case is neither a clear error nor a correct result.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' input builders
import hostile_cases  # noqa: E402, F401 - registers the cases
from hostile_common import CASES, Case, CliError  # noqa: E402

LIMIT_S = 60
GOOD = ("clear error", "correct result")


def _snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` but ``out/`` and ``cache/``."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in ("out", "cache") or not path.is_file() or path.is_symlink():
            continue
        found[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@contextmanager
def _quiet_fds() -> Iterator[None]:
    """Output written straight to file descriptors 1 and 2 (C libraries' warnings) dropped."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            for fd, copy in zip((1, 2), saved):
                os.dup2(copy, fd)
                os.close(copy)


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError(f"no answer within {LIMIT_S} s")


def run_case(case: Case, root: Path) -> tuple[str, str]:
    """(outcome, what was seen: paths shown relative to the case's folder) of one case, in
    its own folder under ``root``."""
    outcome, seen = _run_case(case, root)
    return outcome, seen.replace(f"{root / case.id}/", "")


def _run_case(case: Case, root: Path) -> tuple[str, str]:
    from neuromark.errors import NeuromarkError

    tmp = root / case.id
    tmp.mkdir()
    os.environ["NEUROMARK_CACHE_DIR"] = str(tmp / "cache")
    os.chdir(tmp)
    act = case.build(tmp)
    before = _snapshot(tmp)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(LIMIT_S)
    try:
        with _quiet_fds():
            value, message = act(), None
    except (NeuromarkError, CliError) as exc:
        value, message = None, str(exc)
    except TimeoutError as exc:
        return "hang", str(exc)
    except Exception:  # noqa: BLE001 - a crash is an outcome
        return "crash", traceback.format_exc(limit=-2).strip().splitlines()[-1]
    finally:
        signal.alarm(0)
    after = _snapshot(tmp)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if changed:
        return "data loss", f"changed outside out/ and cache/: {changed[:3]}"
    if message is not None:
        first = message.strip().splitlines()[0] if message.strip() else "(empty message)"
        if case.expect == "result":
            return "unclear error", first[:160]
        missing = [n for n in case.needs if n not in message]
        shown = max(message.splitlines(), key=lambda ln: sum(n in ln for n in case.needs))
        return ("unclear error", f"lacks {missing}: {first[:140]}") if missing else (
            "clear error", shown.strip()[:160])
    if case.expect == "error":
        return "silent wrong number", f"finished with {value!r}"[:160]
    verdict = case.check(value) if case.check is not None else True
    return ("correct result", str(value)[:160]) if verdict is True else (
        "silent wrong number", f"{value!r}: {verdict}"[:160])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="run the cases whose id holds this text")
    args = parser.parse_args(argv)
    chosen = [c for c in CASES if args.k in c.id]
    counts: Counter[str] = Counter()
    start = time.perf_counter()
    home = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        print(f"{'case':<38} {'outcome':<20} {'test':<58} seen")
        for case in chosen:
            outcome, seen = run_case(case, Path(folder))
            counts[outcome] += 1
            seen = " | ".join(ln.strip() for ln in seen.splitlines() if ln.strip())
            print(f"{case.id:<38} {outcome:<20} {case.test:<58} {seen}", flush=True)
        os.chdir(home)
    print(f"\n{len(chosen)} cases in {time.perf_counter() - start:.0f} s: "
          + ", ".join(f"{n} {k}" for k, n in counts.most_common()))
    return 0 if all(k in GOOD for k in counts) else 1


if __name__ == "__main__":
    sys.exit(main())
