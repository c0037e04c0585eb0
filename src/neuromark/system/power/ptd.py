"""The ``ptd`` meter: SPEC PTDaemon's samples, read from its log, optionally driving it.

Two ways to use it:

- **A log only** (no ``address``): ``path`` is an ``spl.txt`` or the PTDaemon log file
  (its ``-l`` file). Finished files are read whole when the meter stops; with
  ``follow: true`` only the lines appended after ``start()`` count and the file is tailed
  while the run goes on (each ``mark`` and ``energy`` call reads what was appended).
- **Driving PTDaemon** (``address: host:port``): the meter speaks PTDaemon's text protocol
  as ``mlcommons/power-dev``'s server does (``ptd_client_server/lib/server.py``; commands
  end in CR LF and each gets one reply line): ``Hello`` (reply ``Hello, PTDaemon here!``),
  ``Identify``, ``RR`` (the initial ranges), ``SR,V,<range|Auto>`` / ``SR,A,<range|Auto>``,
  ``Go,<interval ms>,0,<mark>`` and ``Stop``; at the end the initial ranges are set again.
  The samples are then tailed from ``path``, PTDaemon's log file.

Samples carry the analyzer's wall clock (see :mod:`neuromark.system.power.spl`); they are
put on the host's monotonic clock with ``now_s() - time.time()`` measured at ``start()``
(the analyzer and host clocks must agree, as MLPerf requires: NTP). Energy over a window is
the trapezoid integral, like the other sample meters; MLPerf's own figure (mean of samples
× LoadGen's duration) is :func:`~neuromark.system.power.spl.mlperf_power_metric`.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuromark.errors import DataError
from neuromark.system.power.csv_trace import wall_to_host_offset
from neuromark.system.power.protocol import PowerSamples
from neuromark.system.power.spl import MAX_LINE_BYTES, SplTail, SplTrace
from neuromark.system.timing import now_s

#: PTDaemon's greeting, which power-dev checks before anything else.
HELLO = "Hello, PTDaemon here!"
#: PTDaemon's reply to a ``Stop`` when nothing is measured (power-dev's server sends a
#: second ``Stop`` at the end of every session and expects it).
NOTHING_TO_STOP = "Error: no measurement to stop"
#: PTDaemon's device-type numbers (its ``-y``/``-g`` device argument; SPEC PTDaemon's
#: device list) of the Yokogawa analyzers MLPerf Power accepts, by the model name that
#: starts PTDaemon's ``Identify`` reply. ``ptd_config.device_type`` in server.json.
DEVICE_TYPES = {"YokogawaWT210": 8, "YokogawaWT500": 35, "YokogawaWT310": 49,
                "YokogawaWT310E": 49, "YokogawaWT330": 52, "YokogawaWT330E": 52}


class PtdClient:
    """A PTDaemon connection: one command line out, one reply line back; every exchange
    is kept in ``messages`` (``{"cmd", "reply"}``, power-dev's ``ptd_messages``).

    Each reply line must arrive whole within ``timeout_s`` of its command (however the
    daemon cuts it into packets) and be at most ``max_line_bytes`` long; a daemon that
    never ends its line is an error after whichever comes first. The buffer is searched
    only where new bytes arrived (linear in the bytes read)."""

    def __init__(self, address: str, timeout_s: float = 10.0,
                 messages: list[dict[str, str]] | None = None,
                 max_line_bytes: int = MAX_LINE_BYTES) -> None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise DataError(f"ptd meter: address {address!r} is not host:port")
        self.timeout_s = timeout_s
        self.max_line_bytes = max_line_bytes
        try:
            self.sock = socket.create_connection((host, int(port)), timeout=timeout_s)
        except OSError as exc:
            raise DataError(f"ptd meter: cannot connect to PTDaemon at {address}: {exc}") from None
        self.address = address
        self.messages = messages if messages is not None else []
        self._buf = bytearray()
        try:
            greeting = self.cmd("Hello")
        except BaseException:
            self.close()  # never leave a half-open connection to a daemon that misbehaved
            raise
        if greeting != HELLO:
            self.close()
            raise DataError(f"ptd meter: {address} did not answer Hello as PTDaemon does "
                            f"(expected {HELLO!r})")

    def _read_line(self, command: str) -> bytes:
        """The next CR LF-ended line (without it), by the deadline and within the limit."""
        deadline = time.monotonic() + self.timeout_s
        searched = 0
        while True:
            end = self._buf.find(b"\r\n", max(searched - 1, 0))
            if end >= 0:
                if end > self.max_line_bytes:
                    break
                line = bytes(self._buf[:end])
                del self._buf[:end + 2]
                return line
            searched = len(self._buf)
            if searched > self.max_line_bytes:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                raise DataError(f"ptd meter: PTDaemon at {self.address} sent no whole reply line "
                                f"to {command!r} within {self.timeout_s:g} s (timeout_s; "
                                f"{searched} bytes without a line end)")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue  # the deadline check above reports it
            if not chunk:
                raise DataError(f"ptd meter: PTDaemon at {self.address} closed the "
                                f"connection after {command!r}")
            self._buf += chunk
        raise DataError(f"ptd meter: PTDaemon at {self.address} answered {command!r} with a line "
                        f"longer than {self.max_line_bytes} bytes (max_line_bytes); not PTDaemon?")

    def cmd(self, command: str, accept: str | None = None) -> str:
        """Send ``command``; its reply (a reply starting with ``Error`` raises, unless it is
        exactly ``accept``: e.g. the second ``Stop`` of a session, which PTDaemon answers
        ``Error: no measurement to stop``)."""
        try:
            self.sock.settimeout(self.timeout_s)
            self.sock.sendall(command.encode() + b"\r\n")
            line = self._read_line(command)
        except OSError as exc:
            raise DataError(f"ptd meter: {command!r} to {self.address} failed: {exc}") from None
        reply = line.decode(errors="replace")
        self.messages.append({"cmd": command, "reply": reply})
        if reply.startswith("Error") and reply != accept:
            raise DataError(f"ptd meter: PTDaemon at {self.address} answered {command!r} "
                            f"with {reply!r}")
        return reply

    def close(self) -> None:
        self.sock.close()


def initial_ranges(reply: str) -> tuple[str, str]:
    """``(volts, amps)`` ranges to restore from an ``RR`` reply
    (``Ranges,<A auto>,<A range>,<V auto>,<V range>``): the range where autorange was off
    (0) and the range is known (> 0), else ``Auto`` (as power-dev's server reads it)."""
    parts = reply.split(",")

    def pick(i: int) -> str:
        try:
            return parts[i + 1] if parts[i] == "0" and float(parts[i + 1]) > 0 else "Auto"
        except (IndexError, ValueError):
            return "Auto"

    return pick(3), pick(1)


class PtdMeter(PowerSamples):
    """PTDaemon samples as a :class:`~neuromark.system.power.protocol.PowerMeter`.

    Args:
        path: spl.txt or PTDaemon's log file (its ``-l`` file).
        address: ``host:port`` of PTDaemon to drive; None: only read ``path``.
        mark: the ``Mark`` whose samples count (default: all; with ``address``, the mark
            the meter's ``Go`` gives, default ``neuromark``).
        timezone_s: the analyzer clock's offset in seconds west of UTC (0: UTC).
        follow: tail ``path`` from its end at ``start()`` (always so with ``address``).
        interval_ms: the sample interval asked with ``Go`` (power-dev: 1000).
        volts_range, amps_range: ranges set before ``Go`` (``Auto``: autoranging).
        settle_s: wait after setting ranges (power-dev waits 10 s for the analyzer).
        timeout_s: seconds for each whole PTDaemon reply line (and for a sample to appear).
        max_line_bytes: longest PTDaemon reply line accepted.
        two_pass: also run MLPerf's ranging and testing passes
            (:mod:`neuromark.system.power.mlperf`).
        device_type: PTDaemon's device number of the analyzer (``ptd_config`` in
            server.json); None: read from the model ``Identify`` names (:data:`DEVICE_TYPES`).
    """

    name = "ptd"
    measured = True
    point = "wall"

    def __init__(self, path: str | Path, address: str | None = None, mark: str | None = None,
                 timezone_s: float = 0.0, follow: bool = False, interval_ms: int = 1000,
                 volts_range: str = "Auto", amps_range: str = "Auto", settle_s: float = 10.0,
                 two_pass: bool = False, timeout_s: float = 10.0,
                 components: list[str] | None = None, max_line_bytes: int = MAX_LINE_BYTES,
                 device_type: int | None = None) -> None:
        if interval_ms < 1 or settle_s < 0 or timeout_s <= 0 or max_line_bytes < 64:
            raise DataError(f"ptd meter: interval_ms >= 1, settle_s >= 0, timeout_s > 0 and "
                            f"max_line_bytes >= 64 expected, got {interval_ms}, {settle_s}, "
                            f"{timeout_s}, {max_line_bytes}")
        self.max_line_bytes = max_line_bytes
        self.path = Path(path)
        self.address = address
        self.mark_label = mark if mark is not None or address is None else "neuromark"
        self.timezone_s = timezone_s
        self.follow = follow or address is not None
        self.interval_ms = interval_ms
        self.ranges = {"V": volts_range, "A": amps_range}
        self.settle_s = settle_s
        self.two_pass = two_pass
        self.timeout_s = timeout_s
        self.components = components or ["everything on the analyzer's wall socket"]
        self.client: PtdClient | None = None
        self.messages: list[dict[str, str]] = []  # every PTDaemon exchange, in order
        self.session_start = 0  # index in messages of the current connection's Hello
        self.device_type = device_type
        self.identify = ""
        self.initial: tuple[str, str] | None = None
        self.host_marks: dict[str, float] = {}
        self.offset_s = wall_to_host_offset()
        self._tail: SplTail | None = None

    # -- PTDaemon control ------------------------------------------------------------
    def connect(self) -> PtdClient:
        """The PTDaemon connection (opened once: Hello, Identify, RR)."""
        if self.client is None:
            if self.address is None:
                raise DataError("ptd meter: driving PTDaemon needs 'address' (host:port)")
            self.session_start = len(self.messages)
            client = PtdClient(self.address, self.timeout_s, self.messages, self.max_line_bytes)
            try:
                self.identify = client.cmd("Identify")
                self.initial = initial_ranges(client.cmd("RR"))
            except BaseException:
                client.close()
                raise
            self.client = client
        return self.client

    def go(self, mark: str, volts: str, amps: str, amps_twice: bool = False) -> None:
        """Set the ranges, let the analyzer settle, start sampling under ``mark``. With
        ``amps_twice`` the amps range is sent twice, as power-dev's server does in its
        ranging pass (its ranging-mode branch, then a reset to ``Auto`` that always runs;
        power-dev's checker looks for the initial amps range in the 3rd or 4th ``SR,A``)."""
        client = self.connect()
        client.cmd(f"SR,V,{volts}")
        client.cmd(f"SR,A,{amps}")
        if amps_twice:
            client.cmd(f"SR,A,{amps}")
        time.sleep(self.settle_s)
        client.cmd(f"Go,{self.interval_ms},0,{mark}")

    def halt(self, restore: bool = True, confirm: bool = False) -> None:
        """``Stop`` sampling; with ``confirm`` send a second ``Stop`` that must find nothing
        to stop (power-dev's server does so at a session's end); with ``restore`` set the
        initial ranges again and close the connection (the session ends)."""
        if self.client is None:
            return
        self.client.cmd("Stop", accept=NOTHING_TO_STOP)  # an idle session has nothing to stop
        if confirm:
            self.client.cmd("Stop", accept=NOTHING_TO_STOP)
        if restore:
            volts, amps = self.initial or ("Auto", "Auto")
            self.client.cmd(f"SR,V,{volts}")
            self.client.cmd(f"SR,A,{amps}")
            self.client.close()
            self.client = None

    # -- PowerMeter ------------------------------------------------------------------
    def start(self) -> None:
        self.offset_s = wall_to_host_offset()
        self._tail = SplTail(self.path, self.timezone_s, from_end=self.follow)
        if self.address is not None:
            self.go(self.mark_label or "neuromark", self.ranges["V"], self.ranges["A"])
        if self.follow:  # a window marked from now on starts after a sample
            self._await_sample_after(now_s())

    def _await_sample_after(self, t_host: float) -> None:
        """Read the log until it holds a sample after host time ``t_host`` (the analyzer
        logs one every ``interval_ms``); gives up after ``timeout_s`` (energy over a window
        the samples do not cover then fails, naming the file)."""
        deadline = now_s() + self.timeout_s
        while now_s() < deadline:
            t = self.trace().t
            if t and t[-1] + self.offset_s > t_host:
                return
            time.sleep(min(0.05, self.interval_ms / 4000))

    def stop(self) -> None:
        """Wait for a sample after the last mark (up to ``timeout_s``: the analyzer logs
        every ``interval_ms``), stop PTDaemon (when driven) and read the log to its end."""
        try:
            if self.host_marks and self.follow:
                self._await_sample_after(max(self.host_marks.values()))
            self.halt()
        finally:
            if self._tail is None:
                self._tail = SplTail(self.path, self.timezone_s)
            self._tail.poll()

    def mark(self, label: str) -> float:
        t = now_s()
        self.host_marks[label] = t
        if self._tail is not None and self.path.is_file():
            self._tail.poll()  # keep up with a growing log
        return t

    def trace(self) -> SplTrace:
        """The samples read so far (of ``mark`` only, when set); reads what was appended."""
        if self._tail is None:
            self._tail = SplTail(self.path, self.timezone_s)
        if self.path.is_file() or self._tail.trace.t:
            self._tail.poll()
        return self._tail.trace.select(self.mark_label)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        tr = self.trace()
        return np.asarray(tr.t, dtype=np.float64) + self.offset_s, np.asarray(tr.watts)

    def session_messages(self) -> list[dict[str, str]]:
        """The exchanges of the last connection (one PTD session), from its ``Hello``."""
        return list(self.messages[self.session_start:])

    def analyzer_type(self) -> int | None:
        """PTDaemon's device number of the analyzer: ``device_type`` when given, else the
        one of the model ``Identify`` named (None when unknown)."""
        if self.device_type is not None:
            return self.device_type
        return DEVICE_TYPES.get(self.identify.split(",")[0].strip())

    def _source(self) -> str:
        return f"{self.path} (mark {self.mark_label})"

    def _marks(self) -> list[tuple[str, float]]:
        return sorted(self.host_marks.items(), key=lambda kv: kv[1])

    def metadata(self) -> dict[str, Any]:
        t, _ = self._arrays()
        rate = (t.size - 1) / (t[-1] - t[0]) if t.size > 1 and t[-1] > t[0] else None
        return {"name": self.name, "measured": True, "reason": "", "file": str(self.path),
                "point": self.point, "components": self.components, "sample_rate_hz": rate,
                "nominal_sample_rate_hz": 1000.0 / self.interval_ms, "mark": self.mark_label,
                "timezone_s": self.timezone_s, "offset_s": self.offset_s,
                "aligned_by": "wall clock (analyzer time, UTC + timezone_s)",
                "address": self.address, "identify": self.identify,
                "ptd_messages": list(self.messages)}
