"""A fake SPEC PTDaemon 1.11.1 for tests: its text protocol over TCP on localhost, and its
log file as the daemon writes it (standard library only).

The replies and log lines follow a real PTDaemon log (the MLPerf v1.0 Xavier NX
submission's ``power/ptd_logs.txt`` in ``tests/fixtures/realdata/mlperf``, daemon 1.9.2)
and the replies power-dev's ``compliance/check.py`` expects of version 1.11.1:

- at start-up, the banner and the analyzer lines, among them ``Uncertainty checking for
  YokogawaWT310 is activated``, then ``Waiting for a connection...``;
- per connection ``Accepted connection from ...`` and, per command, ``Response to client
  sent: <reply>``; ``Identify`` answers ``YokogawaWT310,...,version=1.11.1-...``;
- ``Go,<ms>,0,<mark>``: ``Go with mark '<mark>'`` and a sample line every ``<ms>``
  (``Time,...,Mark,<mark>``; volts cycle 229.0/229.5/230.0 so ranging has a maximum);
- ``Stop``: ``Completed test`` and the averages; a ``Stop`` with nothing running answers
  ``Error: no measurement to stop``.
"""

from __future__ import annotations

import socketserver
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

MODEL = "YokogawaWT310"
VERSION = "1.11.1-c2d9d0d6-20230411"
IDENTIFY = (f"{MODEL},1000,1,1,1,1,0,0,1,version={VERSION},OS=Linux,mode=power,1,1,1,0,0,"
            "no_cal_date,YOKOGAWA;WT310;C3UD12345V;F1.05")


def stamp(unix_s: float) -> str:
    """PTDaemon's time spelling (MM-DD-YYYY HH:MM:SS.mmm, UTC here)."""
    d = datetime.fromtimestamp(unix_s, tz=timezone.utc)
    return d.strftime("%m-%d-%Y %H:%M:%S.") + f"{d.microsecond // 1000:03d}"


def spl(unix_s: float, watts: float, mark: str, volts: float = 230.0, amps: float = 0.2) -> str:
    return (f"Time,{stamp(unix_s)},Watts,{watts:.6f},Volts,{volts:.6f},Amps,{amps:.6f},"
            f"PF,0.550000,Mark,{mark}\n")


BANNER = f"""Yokogawa ethernet/USB interface specified.
Selected power meter 'Yokogawa WT310' from wt310.cpp
  ****************************************************************************
                               SPEC PTDaemon Tool
                        Version {VERSION}
  ****************************************************************************

"""


class FakePtd:
    """A PTDaemon 1.11.1 lookalike (module docstring) logging to ``log``."""

    def __init__(self, log: Path, watts: float = 40.0, startup: bool = True) -> None:
        self.log, self.watts = log, watts
        self.received: list[str] = []
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None
        self._lock = threading.Lock()
        if startup:
            with self.log.open("a") as f:
                f.write(BANNER)
            for text in ("Attempting to connect to measurement device type 49...",
                         f"Uncertainty checking for {MODEL} is activated",
                         f"Connected to {MODEL} successfully",
                         "Establishing the listener on port 8888...", "Waiting for a connection..."):
                self.message(text)
        fake = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                fake.message(f"Accepted connection from {self.client_address[0]}:"
                             f"{self.client_address[1]}")
                buf = b""
                while True:
                    chunk = self.request.recv(1024)
                    if not chunk:
                        fake.message("No data returned by socket read.")
                        fake.message("Connection is down.")
                        return
                    buf += chunk
                    while b"\r\n" in buf:
                        line, buf = buf.split(b"\r\n", 1)
                        reply = fake.reply(line.decode())
                        fake.message(f"Response to client sent: {reply}")
                        self.request.sendall(reply.encode() + b"\r\n")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def write(self, text: str) -> None:
        with self._lock, self.log.open("a") as f:
            f.write(text)

    def message(self, text: str) -> None:
        self.write(f"{stamp(time.time())}: {text}\n")

    def reply(self, cmd: str) -> str:
        self.received.append(cmd)
        parts = cmd.split(",")
        if cmd == "Hello":
            return "Hello, PTDaemon here!"
        if cmd == "Identify":
            return IDENTIFY
        if cmd == "RR":
            return "Ranges,0,2.5,0,300"
        if parts[0] == "SR" and len(parts) == 3:
            self.message(f"{'Volt' if parts[1] == 'V' else 'Ampere'} range set to {parts[2]}")
            return f"Range {parts[1]} changed"
        if parts[0] == "Go" and len(parts) == 4:
            ms, mark = int(parts[1]), parts[3]
            self.message(f"Go with mark {mark!r}")
            self._stop.clear()
            self._sampler = threading.Thread(target=self.sample, args=(ms, mark), daemon=True)
            self._sampler.start()
            return (f"Starting untimed measurement, maximum 500000 samples at {ms}ms with 0 "
                    "rampup samples")
        if cmd == "Stop":
            if self._sampler is None:
                return "Error: no measurement to stop"
            self._stop.set()
            self._sampler.join()
            self._sampler = None
            self.message("Completed test")
            return "Stopping untimed measurement"
        return "Error: unknown command"

    def sample(self, ms: int, mark: str) -> None:
        i = 0
        while not self._stop.wait(ms / 1000):
            self.write(spl(time.time(), self.watts, mark, volts=229.0 + 0.5 * (i % 3), amps=0.17))
            i += 1

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
