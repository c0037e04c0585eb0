"""The remote SUT's added latency: the null SUT in neuromark's process against the null SUT
served by ``neuromark.system.remote_server`` in another process on localhost, side by side.

Each repeat runs one LoadGen SingleStream test of each (interleaved, same settings) and
reads LoadGen's median and p90 latency; the added latency is remote minus local per
repeat. The remote SUT's own transport calibration (a LoadGen test on the server's null
path before the run, the ``transport_latency`` score) is printed beside it. The server
runs with ``python -S`` (no site-packages), as in a device SDK's environment.

Run: ``python bench/remote_sut.py [--queries 5000] [--repeats 5] [--calibration 1000]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from neuromark.system import remote_server
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.suts.null import NullSUT, index_library
from neuromark.system.suts.remote import remote


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-S", remote_server.__file__, "--port", "0",
                             "--sut", "null", "--options", '{"samples": 1024}'],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return proc, line.split()[-1]


def latencies(sut, library, queries: int, log_dir: Path) -> tuple[float, float, float]:
    """LoadGen's (median, p90, mean) latency in µs of one SingleStream test."""
    settings = LoadGenSettings(scenario="SingleStream", min_query_count=queries,
                               max_query_count=queries, min_duration_s=0.0, expected_latency_s=1e-5)
    run = run_test(sut, library, settings, log_dir)
    lat = run.summary["latency_s"]
    return lat["percentiles_s"]["50"] * 1e6, lat["percentiles_s"]["90"] * 1e6, lat["mean_s"] * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calibration", type=int, default=1000)
    args = parser.parse_args()
    proc, address = start_server()
    try:
        built = remote(address=address, calibration=args.calibration)
        local_sut, local_lib = NullSUT(), index_library("null", 1024)
        rows = {"local": [], "remote": []}
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.repeats):
                rows["local"].append(latencies(local_sut, local_lib, args.queries, Path(tmp) / f"l{r}"))
                rows["remote"].append(latencies(built.sut, built.library, args.queries,
                                                Path(tmp) / f"r{r}"))
        cal = built.info["transport"]
        built.close()
    finally:
        proc.kill()
        proc.wait()
    print(f"{time.strftime('%Y-%m-%d %H:%M')} {os.uname().nodename}: load average "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs; {args.repeats} repeats x "
          f"{args.queries} SingleStream queries; server {address} (python -S)")
    print("LoadGen latency, µs (median over repeats [min-max]):")
    print(f"{'SUT':<28}{'median':>22}{'p90':>22}{'mean':>22}")
    for name, label in (("local", "null, in process"), ("remote", "null, remote (localhost)")):
        cells = []
        for k in range(3):
            vals = [row[k] for row in rows[name]]
            cells.append(f"{statistics.median(vals):8.1f} [{min(vals):.1f}-{max(vals):.1f}]")
        print(f"{label:<28}" + "".join(f"{c:>22}" for c in cells))
    added = [[rem[k] - loc[k] for loc, rem in zip(rows["local"], rows["remote"])] for k in range(3)]
    print(f"{'added by the transport':<28}" + "".join(
        f"{f'{statistics.median(a):8.1f} [{min(a):.1f}-{max(a):.1f}]':>22}" for a in added))
    trip, lg = cal["round_trip"], cal["loadgen"]
    print(f"transport calibration ({cal['round_trips']} LoadGen queries to the null path before "
          f"the run): round trip median {trip['median_s'] * 1e6:.1f} µs, p90 "
          f"{trip['p90_s'] * 1e6:.1f} µs, mean {trip['mean_s'] * 1e6:.1f} ± "
          f"{trip['stderr_s'] * 1e6:.1f} µs (SE) = transport_latency; LoadGen's median "
          f"{lg['median_s'] * 1e6:.1f} µs, p90 {lg['p90_s'] * 1e6:.1f} µs, mean {lg['mean_s'] * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
