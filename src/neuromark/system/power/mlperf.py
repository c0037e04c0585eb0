"""MLPerf Power's two passes over a PTDaemon, and the folder its checkers read.

MLPerf measures power with ``mlcommons/power-dev``: a **ranging** pass runs the workload
with the analyzer autoranging (``SR,V,Auto`` / ``SR,A,Auto``); the largest volts and amps it
logged become the analyzer's fixed ranges for the **testing** pass, whose samples give the
result (``ptd_client_server/lib/server.py``, ``Session.start`` / ``Session.stop``; the
analyzer gets ``settle_s`` to settle after each range change and before the testing
``Stop``). :func:`two_pass` does the same with a :class:`~neuromark.system.power.ptd.PtdMeter`
and any callable that runs LoadGen once into a folder, then lays the submission out as
power-dev's ``compliance/check.py`` and MLPerf's submission checker expect::

    <out>/power/client.json, client.log, ptd_logs.txt, server.json, server.log
    <out>/ranging/mlperf_log_detail.txt, mlperf_log_summary.txt, spl.txt
    <out>/run_1/mlperf_log_detail.txt, mlperf_log_summary.txt, spl.txt

``server.json`` / ``client.json`` carry the fields ``check.py`` requires (``version``,
``timezone``, ``modules``, ``sources``, ``messages``, ``uuid``, ``session_name``,
``results`` = SHA-1 of each result file, ``phases``; the server's also ``ptd_messages``,
``ptd_config``, ``debug``) in power-dev's structure: ``messages`` are the client-server
exchanges of power-dev's protocol v3 (neuromark plays both sides), ``ptd_messages`` only
this session's PTDaemon exchanges (a fresh connection from ``Hello``, a second ``Stop``
answered ``Error: no measurement to stop``, the initial ranges restored), ``ptd_config`` a
list of analyzers with PTDaemon's numeric ``device_type`` (49: WT310), and ``ptd_logs.txt``
the daemon's start-up lines (with its ``Uncertainty checking ... is activated`` line)
followed by every line this session appended. They are written by neuromark, not by
power-dev's client and server, so ``check.py``'s two source-checksum checks fail by design;
its other nine checks pass (``tests/test_power_dev_check.py``).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from neuromark.errors import DataError
from neuromark.system.loadgen_log import DETAIL, SUMMARY, summarize
from neuromark.system.power.spl import SplTail, mlperf_power_metric, read_spl

PASSES = (("ranging", "ranging"), ("testing", "run_1"))
POWER_FILES = ("client.json", "client.log", "ptd_logs.txt", "server.json", "server.log")
PASS_FILES = (DETAIL, SUMMARY, "spl.txt")
SERVER_FIELDS = ("version", "timezone", "modules", "sources", "messages", "uuid",
                 "session_name", "results", "phases")


#: Seconds between a phase stamp and LoadGen's start / after LoadGen's end. LoadGen logs
#: ``power_begin`` / ``power_end`` truncated to the millisecond, so a stamp taken right
#: before LoadGen starts can lie after the truncated ``power_begin`` (power-dev's checker
#: wants phase 1 < power_begin < power_end < phase 2, strictly).
PHASE_MARGIN_S = 0.01
#: power-dev's client-server protocol version whose message sequence ``messages`` follows
#: (``ptd_client_server/lib/common.py``: ``mlcommons/power client v3``).
PROTOCOL_VERSION = "3"
#: Lines that end PTDaemon's start-up block in its log: the first client or measurement.
_SESSION_LINE_MARKERS = ("Accepted connection", "Go with mark", "Response to client sent")
#: At most this many bytes of a PTDaemon log's head are read for its start-up lines.
STARTUP_MAX_BYTES = 1 << 20


def _stamp() -> list[float]:
    return [time.time(), time.monotonic()]


def startup_lines(path: Path) -> list[str]:
    """PTDaemon's start-up lines: the head of its log up to its first client or sample
    (banner, analyzer identity, ``Uncertainty checking for <model> is activated``), as
    power-dev's server keeps them (it starts PTDaemon for each session). Reads at most
    :data:`STARTUP_MAX_BYTES`."""
    try:
        with path.open("rb") as f:
            head = f.read(STARTUP_MAX_BYTES)
    except OSError as exc:
        raise DataError(f"PTDaemon log {path}: cannot be read ({exc})") from None
    lines: list[str] = []
    for raw in head.decode(errors="replace").splitlines():
        if raw.startswith("Time,") or any(m in raw for m in _SESSION_LINE_MARKERS):
            break
        lines.append(raw)
    return lines


def _mark_lines(lines: list[str], mark: str) -> list[str]:
    return [ln for ln in lines if ln.startswith("Time,") and ",".join(ln.split(",")[11:]) == mark]


def _max_range(lines: list[str], mark: str) -> tuple[str, str]:
    """The largest Volts and Amps of ``mark``'s samples, as logged (power-dev's
    ``max_volts_amps``)."""
    rows = [ln.split(",") for ln in _mark_lines(lines, mark)]
    if not rows:
        raise DataError(f"ranging pass {mark!r}: PTDaemon logged no samples (a pass shorter "
                        "than one sample interval?)")
    volts = max((r[5] for r in rows), key=float)
    amps = max((r[7] for r in rows), key=float)
    if float(volts) <= 0 or float(amps) <= 0:
        raise DataError(f"ranging pass {mark!r}: no positive volts/amps to range on")
    return volts, amps


def sha1_files(root: Path, skip: tuple[str, ...] = ("power/server.json", "power/client.json")
               ) -> dict[str, str]:
    """SHA-1 of every file under ``root`` by relative POSIX path (power-dev's ``hash_dir``),
    without ``skip``."""
    out = {}
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = file.relative_to(root).as_posix()
        if rel not in skip:
            h = hashlib.sha1()
            with file.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            out[rel] = h.hexdigest()
    return out


def _exchange(cmd: str, reply: str, t0: float, t1: float | None = None) -> dict[str, Any]:
    return {"cmd": cmd, "cmd_time": t0, "reply": reply, "reply_time": t0 if t1 is None else t1}


def session_messages(session: str, ids: dict[str, str], label: str,
                     phases: dict[str, list[list[float]]]) -> list[dict[str, Any]]:
    """The client-server exchanges of one session in power-dev's protocol
    (``messages`` of client.json and server.json): the version handshake, ``new``, then
    ``session,<name>,start|stop|upload,<mode>`` per pass and ``done``. neuromark plays
    both sides in one process, so the times are the phase stamps."""
    first = phases["ranging"][0][0]
    out = [_exchange(f"mlcommons/power client v{PROTOCOL_VERSION}",
                     f"mlcommons/power server v{PROTOCOL_VERSION}", first),
           _exchange("time", repr(first), first),
           _exchange(f"new,{label},{ids['client']}", f"OK {session},{ids['server']}", first)]
    for mode, _ in PASSES:
        ph = phases[mode]
        out += [_exchange("time", repr(ph[0][0]), ph[0][0]),
                _exchange(f"session,{session},start,{mode}", "OK", ph[0][0], ph[1][0]),
                _exchange(f"session,{session},stop,{mode}", "OK", ph[2][0], ph[3][0]),
                _exchange(f"session,{session},upload,{mode}", "OK", ph[3][0])]
    last = phases["testing"][-1][0]
    return out + [_exchange(f"session,{session},done", "OK", last)]


def two_pass(meter: Any, run_pass: Callable[[Path], Any], out_dir: str | Path,
             label: str = "neuromark") -> dict[str, Any]:
    """Run the ranging and the testing pass through ``meter`` (a driven
    :class:`~neuromark.system.power.ptd.PtdMeter`) in one PTD session of their own (a
    fresh connection: ``Hello``, ``Identify``, ``RR`` ... ``Stop``, ``Stop``, initial
    ranges); ``run_pass(folder)`` runs LoadGen once with its logs in ``folder``. Writes the
    layout (module docstring) under ``out_dir`` and returns MLPerf's power figure of each
    pass (:func:`mlperf_figures`) with the ranges used."""
    out = Path(out_dir)
    (out / "power").mkdir(parents=True, exist_ok=True)
    session = f"{datetime.now(timezone.utc):%Y-%m-%d_%H-%M-%S}_{label}"
    if meter.client is not None:  # one PTD session per measurement: close an earlier one
        meter.halt()
    startup = startup_lines(meter.path) if meter.path.is_file() else []
    tail = SplTail(meter.path, meter.timezone_s, from_end=True)
    phases: dict[str, list[list[float]]] = {"ranging": [], "testing": []}
    log: list[str] = []
    ranges = {"ranging": ("Auto", "Auto")}
    try:
        for mode, folder_name in PASSES:
            mark, folder, ph = f"{session}_{mode}", out / folder_name, phases[mode]
            volts, amps = ranges[mode]
            ph.append(_stamp())
            meter.go(mark, volts, amps, amps_twice=mode == "ranging")
            ph.append(_stamp())
            log.append(f"{time.time():.3f} {mode}: Go with mark {mark} (V {volts}, A {amps})")
            time.sleep(PHASE_MARGIN_S)
            run_pass(folder)
            time.sleep(PHASE_MARGIN_S)
            ph.append(_stamp())
            if mode == "testing":
                time.sleep(meter.settle_s)
            meter.halt(restore=mode == "testing", confirm=mode == "testing")
            ph.append(_stamp())
            log.append(f"{time.time():.3f} {mode}: Stop")
            tail.poll()
            lines = _mark_lines(tail.lines, mark)
            (folder / "spl.txt").write_text("".join(ln + "\n" for ln in lines))
            if mode == "ranging":
                ranges["testing"] = _max_range(tail.lines, mark)
    finally:
        if meter.client is not None:
            meter.halt()
    tail.poll()
    power = out / "power"
    (power / "ptd_logs.txt").write_text("".join(ln + "\n" for ln in startup + tail.lines))
    ptd_messages = meter.session_messages()
    (power / "server.log").write_text("".join(f"{m['cmd']!r} -> {m['reply']!r}\n"
                                              for m in ptd_messages))
    (power / "client.log").write_text("\n".join(log) + "\n")
    ids = {"client": str(uuid.uuid4()), "server": str(uuid.uuid4())}
    common = {"version": "neuromark-ptd-2", "timezone": meter.timezone_s,
              "modules": {"neuromark.system.power": "ptd + mlperf"},
              "sources": {"writer": "neuromark (not power-dev's client/server)"},
              "messages": session_messages(session, ids, label, phases), "uuid": ids,
              "session_name": session, "results": sha1_files(out), "phases": phases}
    (power / "client.json").write_text(json.dumps(common, indent=2))
    analyzer = {"command": [], "device_type": meter.analyzer_type(), "interface_flag": "",
                "device_port": "", "channel": None, "address": meter.address,
                "identify": meter.identify}
    server = {**common, "ptd_messages": ptd_messages, "debug": False, "ptd_config": [analyzer]}
    (power / "server.json").write_text(json.dumps(server, indent=2))
    figures = mlperf_figures(out, meter.timezone_s)
    figures["ranges"] = {mode: {"volts": v, "amps": a} for mode, (v, a) in ranges.items()}
    figures["session_name"] = session
    return figures


def mlperf_figures(root: str | Path, timezone_s: float = 0.0) -> dict[str, Any]:
    """MLPerf's power figure of the ranging and the testing pass of a laid-out folder
    (:func:`~neuromark.system.power.spl.mlperf_power_metric` over each pass's spl.txt and
    LoadGen logs); the testing pass is the result, as in the submission checker."""
    root = Path(root)
    out: dict[str, Any] = {"folder": str(root)}
    for mode, folder_name in PASSES:
        folder = root / folder_name
        summary = summarize(folder)
        if not summary.get("power_begin") or not summary.get("power_end"):
            raise DataError(f"{folder / DETAIL}: no power_begin / power_end records")
        out[mode] = mlperf_power_metric(read_spl(folder / "spl.txt", timezone_s=timezone_s),
                                        summary["power_begin"], summary["power_end"],
                                        str(summary["scenario"]), int(summary["query_count"] or 0))
    out.update(metric=out["testing"]["metric"], unit=out["testing"]["unit"])
    return out


def check_layout(root: str | Path) -> list[tuple[str, str]]:
    """Problems of a laid-out folder as ``(relative file, message)``: missing files, the
    JSON fields power-dev's checker requires, result hashes that do not match the files."""
    root = Path(root)
    problems: list[tuple[str, str]] = []
    wanted = [f"power/{n}" for n in POWER_FILES] + [f"{d}/{n}" for _, d in PASSES for n in PASS_FILES]
    for rel in wanted:
        if not (root / rel).is_file():
            problems.append((rel, "required file is missing (power-dev layout)"))
    for name in ("server.json", "client.json"):
        file = root / "power" / name
        if not file.is_file():
            continue
        try:
            data = json.loads(file.read_text())
        except json.JSONDecodeError as exc:
            problems.append((f"power/{name}", f"not valid JSON ({exc})"))
            continue
        missing = [k for k in SERVER_FIELDS if k not in data]
        if missing:
            problems.append((f"power/{name}", f"fields {', '.join(missing)} missing"))
            continue
        now = sha1_files(root)
        for rel, digest in data["results"].items():
            if now.get(rel) != digest:
                problems.append((rel, f"SHA-1 differs from the one power/{name} recorded"))
    return problems
