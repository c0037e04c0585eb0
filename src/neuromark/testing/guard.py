"""What a checked component raises becomes a :class:`ContractError`, with every problem
found so far.

A contract check calls the plugin's code (a forward pass, ``meter.energy``, ``sut.issue``,
``entry.load``). When that code raises, the plugin author must read which component, which
call and what it raised, beside the problems the check had already found, not the
component's own ``TypeError`` with the earlier findings lost. Two tools:

- :class:`Problems`: the list of problems of one component; ``with problems.calling("x()")``
  turns an exception raised inside into a :class:`ContractError` that lists the problems
  found so far and then the call that raised (the original exception is its ``__cause__``);
- :func:`contract_check`: the safety net on every public ``check_*`` function: any other
  exception that escapes becomes a :class:`ContractError` naming the check.

Example::

    problems = Problems("meter 'board'")
    with problems.calling("energy(t0, t1)"):
        energy = meter.energy(t0, t1)
    if not math.isfinite(energy):
        problems.append(f"energy() is {energy!r}")
    problems.raise_if_any()
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class ContractError(AssertionError):
    """A contract check failed; the message lists every problem found (an
    ``AssertionError``, so a test runner reports it as a failed assertion)."""


def raise_problems(what: str, problems: list[str]) -> None:
    """Raise :class:`ContractError` listing ``problems`` under ``what``; nothing when empty."""
    if problems:
        raise ContractError(f"{what}: {len(problems)} contract problem(s):\n  - "
                            + "\n  - ".join(problems))


def raised(call: str, exc: BaseException) -> str:
    """One problem line: ``call`` raised ``exc`` (its type and message)."""
    text = str(exc).strip() or "(no message)"
    return f"{call} raised {type(exc).__name__}: {text}"


class Problems(list[str]):
    """The problems found in one component (``what``: e.g. ``"meter 'board'"``)."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def raise_if_any(self) -> None:
        """Raise :class:`ContractError` listing every problem; nothing when none."""
        raise_problems(self.what, list(self))

    @contextmanager
    def calling(self, call: str) -> Iterator[None]:
        """Run the block; an exception it raises is added as ``"<call> raised <type>: <msg>"``
        and raised as a :class:`ContractError` listing every problem. A ContractError from
        inside keeps its message, with the problems found before it listed first."""
        try:
            yield
        except ContractError as exc:
            if not self:
                raise
            self.append(str(exc))
            raise ContractError(_listing(self.what, self)) from exc
        except Exception as exc:  # noqa: BLE001 - whatever the component raises is reported
            self.append(raised(call, exc))
            raise ContractError(_listing(self.what, self)) from exc


def _listing(what: str, problems: list[str]) -> str:
    try:
        raise_problems(what, problems)
    except ContractError as exc:
        return str(exc)
    return what


def contract_check(func: F) -> F:
    """Decorate a public check: an exception other than :class:`ContractError` escaping it
    becomes one naming the check (``check_meter: meter.mark() raised ...``)."""

    @functools.wraps(func)
    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ContractError:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the component raises is reported
            raise ContractError(f"{func.__name__}: {raised('the checked component', exc)} "
                                f"(see the traceback's cause for where)") from exc

    return checked  # type: ignore[return-value]
