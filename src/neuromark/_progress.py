"""Progress for long loops: a tqdm bar on a terminal, one plain line per finished unit in a
log (no carriage-return frames), nothing when quiet.

Example:
    >>> bar = progress(range(3), desc="demo", unit="instance", quiet=True)
    >>> [k for k in bar]
    [0, 1, 2]
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO


class LineProgress:
    """The log form of a bar: ``update`` prints ``desc: 3/30 instance(s) done (key=value)``
    on its own line; ``set_postfix`` sets the figures the next line shows."""

    def __init__(self, iterable: Iterable[Any] | None, *, total: int | None, initial: int,
                 desc: str, unit: str, stream: TextIO, quiet: bool) -> None:
        self.iterable = iterable
        self.total = total
        self.n = initial
        self.desc, self.unit, self.stream, self.quiet = desc, unit, stream, quiet
        self.postfix: dict[str, Any] = {}

    def __iter__(self) -> Iterator[Any]:
        for item in self.iterable or ():
            yield item
            self.update()

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.quiet:
            return
        of = f"/{self.total}" if self.total is not None else ""
        extra = ", ".join(f"{k}={v}" for k, v in self.postfix.items())
        print(f"{self.desc}: {self.n}{of} {self.unit}(s) done{f' ({extra})' if extra else ''}",
              file=self.stream, flush=True)

    def set_postfix(self, **figures: Any) -> None:
        self.postfix = figures

    def close(self) -> None:
        pass


def progress(iterable: Iterable[Any] | None = None, *, desc: str, unit: str, quiet: bool = False,
             total: int | None = None, initial: int = 0, stream: TextIO | None = None) -> Any:
    """A tqdm bar when ``stream`` (default stderr) is a terminal and not ``quiet``; else a
    :class:`LineProgress` (silent when ``quiet``). Both iterate ``iterable`` and offer
    ``update``, ``set_postfix`` and ``close``."""
    stream = stream or sys.stderr
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if not quiet and stream.isatty():
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, initial=initial, desc=desc, unit=unit, leave=False,
                    file=stream)
    return LineProgress(iterable, total=total, initial=initial, desc=desc, unit=unit,
                        stream=stream, quiet=quiet)
