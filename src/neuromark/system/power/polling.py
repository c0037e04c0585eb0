"""The background polling every sampling meter shares: a sample at ``start``, every
``interval_s`` in a daemon thread, at every ``mark`` and at ``stop``, all on the host's
monotonic clock (:func:`~neuromark.system.timing.now_s`).

Subclasses implement :meth:`PollingMeter._poll_once` (take one sample under ``self._lock``,
return its host time); what a sample holds (cumulative joules, watts) is theirs.
"""

from __future__ import annotations

import threading

from neuromark.errors import DataError


class PollingMeter:
    """Base class of meters sampled in a background thread (see the module docstring)."""

    name = "polling"

    def __init__(self, interval_s: float) -> None:
        if interval_s <= 0:
            raise DataError(f"meter {self.name}: interval_s must be > 0, got {interval_s}")
        self.interval_s = interval_s
        self.marks: list[tuple[str, float]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _poll_once(self) -> float:
        """Take one sample; return its host time (s)."""
        raise NotImplementedError

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._poll_once()

    def start(self) -> None:
        self._poll_once()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=f"{self.name}-meter", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._poll_once()

    def mark(self, label: str) -> float:
        t = self._poll_once()
        self.marks.append((label, t))
        return t
