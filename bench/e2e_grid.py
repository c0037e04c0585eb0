"""``bench/e2e_shd.py --grid``: one table of the end-to-end ratios at every batch size and
torch thread count (issue 34's targets), measured side by side in one run.

Per cell (batch size, threads):

- **neuromark / plain**: one process runs (after one warm-up of each) ``--rounds`` times
  neuromark's route from the file on disk to the results (``route_neuromark``), each
  between two runs of the plain loop: the same data, pre-binned once by the same loader,
  the adapter's forward passes and the postprocessor under ``inference_mode``, no
  metrics. A round's ratio is the route's CPU seconds (and wall seconds) over the mean of
  its two neighbouring plain loops' (the host's speed drifts within seconds; neighbours
  share the drift); the cell's ratio is the median of the rounds'.
- **peak RSS**: that process's ``ru_maxrss`` after its warm-up route, before the plain
  loop's batches are binned (so it is the route's own peak).
- **neurobench / neuromark** (batch sizes of ``--grid-neurobench``, when the reference venv
  imports neurobench and tonic): each route in its own fresh process, alternately
  (``--grid-nb-rounds`` rounds); ratio of route CPU seconds, median of per-round ratios.
  Otherwise "not measured".
- **spread**: the lowest and highest per-round ratio ours / plain, so a cell's noise is
  read beside its median (on a shared machine one cell moves by 0.1-0.3 between runs).
- **nb / plain**: neurobench's route over the plain loop, both CPU medians: what
  neurobench / neuromark would be if neuromark cost nothing beyond the plain loop in a
  warm process, i.e. the ceiling of the neurobench ratio on this machine; and **fresh**:
  neuromark's route in a fresh process minus the same route warm (CPU s, medians), the
  per-process cost (numba's import and cache load, first buffers) the ratio includes.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_PLAIN, TARGET_NEUROBENCH = 1.3, 8.0


def plain_loop(batches: list, net) -> tuple[float, float]:
    """(wall s, CPU s) of the plain loop over pre-binned ``batches``."""
    import torch

    from neuromark.models.snntorch_model import SNNTorchModel
    from neuromark.processors.decoding import ChooseMaxCount

    model, post = SNNTorchModel(net), ChooseMaxCount()
    wall, cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        for data, _ in batches:
            model.reset_state()
            post(model(data))
    return time.perf_counter() - wall, time.process_time() - cpu


def pair_child(path: Path, batch_size: int, threads: int, rounds: int) -> None:
    """The neuromark route and the plain loop alternately in this process; prints a RESULT."""
    import torch
    from _e2e_common import DT_US, T_MAX_US, reference_lif, route_neuromark

    from neuromark.benchmarks.shd.datasets import SpikeFileDataset

    torch.set_num_threads(threads)
    route_neuromark(path, batch_size)  # warm-up: numba's cache, page cache
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    batches = list(SpikeFileDataset(path).loader(batch_size, DT_US, T_MAX_US))
    net = reference_lif()
    plain_loop(batches, net)  # warm-up
    out: dict[str, list[float]] = {"route_s": [], "route_cpu_s": [], "plain_s": [], "plain_cpu_s": []}
    before = plain_loop(batches, net)
    for _ in range(rounds):  # each route between two plain loops, compared with their mean
        done = route_neuromark(path, batch_size)
        after = plain_loop(batches, net)
        out["route_s"].append(done["route_s"])
        out["route_cpu_s"].append(done["route_cpu_s"])
        out["plain_s"].append((before[0] + after[0]) / 2)
        out["plain_cpu_s"].append((before[1] + after[1]) / 2)
        before = after
    print("RESULT " + json.dumps({**out, "peak_rss_mb": rss}))


def run_pair(path: Path, batch_size: int, threads: int, rounds: int) -> dict:
    proc = subprocess.run([sys.executable, str(Path(__file__).with_name("e2e_shd.py")), "--child-pair",
                           "--file", str(path), "--batch-size", str(batch_size), "--threads",
                           str(threads), "--rounds", str(rounds)], capture_output=True, text=True)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"pair run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][7:])


def median_ratio(num: list[float], den: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(num, den))


def grid(path: Path, args, theirs_py: str | None, run_route) -> None:
    """Print the grid table (see the module docstring)."""
    load = os.getloadavg()
    start = time.perf_counter()
    print(f"grid: {path} ({args.samples} samples), rounds {args.rounds}, neurobench rounds "
          f"{args.grid_nb_rounds}; {os.cpu_count()} cores, load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}")
    if theirs_py is None:
        print("neurobench route: not measured (no reference venv with neurobench and tonic)")
    head = (f"{'batch':>5s} {'thr':>3s} {'plain s':>8s} {'ours s':>7s} {'ours/plain CPU':>14s} "
            f"{'spread':>11s} {'wall':>6s} {'RSS MB':>7s} {'nb s':>6s} {'nb/ours CPU':>11s} "
            f"{'wall':>6s} {'nb/plain':>8s} {'fresh s':>7s}")
    print(head)
    worst = {"plain": 0.0, "nb": float("inf")}
    for threads in args.grid_threads:
        for batch in args.grid_batches:
            pair = run_pair(path, batch, threads, args.rounds)
            cpu = median_ratio(pair["route_cpu_s"], pair["plain_cpu_s"])
            wall = median_ratio(pair["route_s"], pair["plain_s"])
            rounds = [a / b for a, b in zip(pair["route_cpu_s"], pair["plain_cpu_s"])]
            worst["plain"] = max(worst["plain"], cpu)
            cells = (f"{batch:5d} {threads:3d} {statistics.median(pair['plain_s']):8.2f} "
                     f"{statistics.median(pair['route_s']):7.2f} {cpu:14.2f} "
                     f"{min(rounds):5.2f}-{max(rounds):4.2f} {wall:6.2f} "
                     f"{pair['peak_rss_mb']:7.0f}")
            if theirs_py and batch in args.grid_neurobench:
                ours, nb = [], []
                for r in range(args.grid_nb_rounds):
                    order = (("neuromark", sys.executable), ("neurobench", theirs_py))
                    for name, python in (order if r % 2 == 0 else order[::-1]):
                        (ours if name == "neuromark" else nb).append(
                            run_route(python, name, path, batch, threads))
                nb_cpu = median_ratio([t["route_cpu_s"] for t in nb], [o["route_cpu_s"] for o in ours])
                nb_wall = median_ratio([t["route_s"] for t in nb], [o["route_s"] for o in ours])
                worst["nb"] = min(worst["nb"], nb_cpu)
                nb_med = statistics.median(t["route_cpu_s"] for t in nb)
                fresh = statistics.median(o["route_cpu_s"] for o in ours) \
                    - statistics.median(pair["route_cpu_s"])
                cells += (f" {statistics.median(t['route_s'] for t in nb):6.2f} {nb_cpu:11.1f}"
                          f" {nb_wall:6.1f} {nb_med / statistics.median(pair['plain_cpu_s']):8.1f}"
                          f" {fresh:7.2f}")
            else:
                cells += f" {'':6s} {'not measured':>11s}"
            print(cells)
            sys.stdout.flush()
    load = os.getloadavg()
    nb = worst["nb"]
    nb_text = "not measured" if nb == float("inf") else \
        f"worst {nb:.1f}: {'holds' if nb >= TARGET_NEUROBENCH else 'MISSED'}"
    print(f"targets: ours/plain <= {TARGET_PLAIN} everywhere (worst {worst['plain']:.2f}: "
          f"{'holds' if worst['plain'] <= TARGET_PLAIN else 'MISSED'}); neurobench/ours >= "
          f"{TARGET_NEUROBENCH} at batch {'/'.join(map(str, args.grid_neurobench))} ({nb_text}); "
          f"{time.perf_counter() - start:.0f} s, load average now {load[0]:.2f}")
