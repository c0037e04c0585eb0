"""End to end on an SHD-layout file: neuromark vs neurobench 2.3.0 + tonic 1.7.0, time and memory.

Writes a seeded file in the SHD layout (``--samples``, default 2,264 = the real test split;
1,000-9,000 spikes per sample uniform in [0, 0.999] s, 700 channels, 20 classes), then
evaluates the reference LIF network (snnTorch Linear(700,128) -> Leaky -> Linear(128,20) ->
Leaky, beta 0.9, first weight x4 after ``torch.manual_seed(0)``) on 10-ms bins over 1 s with
seven metrics (footprint, parameters, connection sparsity, accuracy, activation sparsity,
synaptic operations, membrane updates), from the file on disk to the results:

- neuromark: ``SpikeFileDataset.loader`` (chunked read, compiled binning) + ``Benchmark``;
- neurobench: ``tonic.datasets.SHD`` + ``ToFrame`` + ``DataLoader`` + neurobench's
  ``Benchmark`` (run by ``--reference-python``, default the scratch venv of
  ``scripts/reference_checks.sh``; skipped when neurobench or tonic does not import there).

Each route runs in its own subprocess (peak RSS = its ``ru_maxrss``), alternating in
``--rounds`` rounds (first route swapped every round); one warm-up run each first (page cache,
numba's on-disk cache). ``route s`` (and its CPU time) is file open -> results inside the
process; ``process s`` adds interpreter start and imports. Each route imports the packages it
uses before its timer starts: neurobench and tonic load theirs at ``import``; the modules
neuromark loads only on first use (h5py, numba, the probe and metric modules) are imported
explicitly, so neither route's timer holds module imports; first-use costs (numba's cache
load, first buffers, torch's first calls) stay inside both. Both routes use ``--threads``
torch threads (default 1: on a loaded 2-core machine the CPU-time ratio is the steady one).
Then the 1-sample floors (imports, kernels, model) and
neuromark's peak RSS on a ``--large`` file (default 20,000 samples; 0 skips it).

Run: ``python bench/e2e_shd.py [--samples 2264] [--rounds 3] [--batch-size 128] [--large 20000]``;
``--grid [--quick]``: one table of the ratios at batch 16-256 and 1-2 threads
(``bench/e2e_grid.py``).
Files are kept in ``.cache/e2e_shd`` (rewritten only when missing). The file, the network and
the two routes live in ``bench/_e2e_common.py`` (shared with the grid, which imports only it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _e2e_common import DEFAULT_REFERENCE, ROOT, data_file, route_neurobench, route_neuromark

#: Figures compared between the routes (footprint is printed apart: neurobench's grows with
#: the batch, snnTorch keeping the membrane as a buffer).
COMPARED = ("parameter_count", "connection_sparsity", "classification_accuracy", "activation_sparsity",
            "synaptic_operations", "membrane_updates")


def child(route: str, path: Path, batch_size: int, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    out = (route_neuromark if route == "neuromark" else route_neurobench)(path, batch_size)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(out))


def run_route(python: str, route: str, path: Path, batch_size: int, threads: int) -> dict:
    """Run one route in a fresh process; its result plus the process's wall time."""
    start = time.perf_counter()
    proc = subprocess.run([python, __file__, "--child", route, "--file", str(path), "--batch-size",
                           str(batch_size), "--threads", str(threads)], capture_output=True, text=True,
                          cwd=ROOT)
    wall = time.perf_counter() - start
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{route} route failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    result = json.loads(lines[-1][7:])
    result["process_s"] = wall
    return result


def reference_python(given: str | None) -> str | None:
    """The interpreter for the neurobench route, when neurobench and tonic import there."""
    python = given or (str(DEFAULT_REFERENCE) if DEFAULT_REFERENCE.is_file() else None)
    if python is None:
        return None
    ok = subprocess.run([python, "-c", "import neurobench, tonic, snntorch"], capture_output=True)
    if ok.returncode:
        print(f"neurobench route skipped: {python} cannot import neurobench/tonic/snntorch:\n"
              f"{ok.stderr.decode()[-500:]}")
        return None
    return python


def agree(ours: dict, theirs: dict) -> list[str]:
    """Compared figures that differ (relative 1e-6; connection sparsity to neurobench's 4 decimals)."""
    bad = []
    for key in COMPARED:
        a, b = ours.get(key), theirs.get(key)
        pairs = ([(f"{key}.{s}", a[s], b.get(s)) for s in a] if isinstance(a, dict) and isinstance(b, dict)
                 else [(key, a, b)])
        for name, x, y in pairs:
            tol = 5e-5 if key == "connection_sparsity" else 1e-6 * max(abs(x or 0), abs(y or 0), 1e-9)
            if x is None or y is None or not math.isclose(x, y, rel_tol=0, abs_tol=tol):
                bad.append(f"{name}: neuromark {x} vs neurobench {y}")
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2264)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--large", type=int, default=20_000,
                        help="samples of the file for neuromark's memory scaling (0: skip)")
    parser.add_argument("--large-neurobench", action="store_true",
                        help="also run neurobench on the large file (slow: ~9x the main file)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads in each route")
    parser.add_argument("--reference-python", default=None)
    parser.add_argument("--folder", type=Path, default=ROOT / ".cache/e2e_shd")
    parser.add_argument("--grid", action="store_true",
                        help="one table of ratios over batch sizes and thread counts (bench/e2e_grid.py)")
    parser.add_argument("--grid-batches", type=int, nargs="+", default=[16, 32, 64, 128, 256])
    parser.add_argument("--grid-threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--grid-neurobench", type=int, nargs="+", default=[64, 128],
                        help="batch sizes at which the grid also times neurobench + tonic")
    parser.add_argument("--grid-nb-rounds", type=int, default=1)
    parser.add_argument("--quick", action="store_true",
                        help="grid on 566 samples (a quarter of the test split), 3 rounds (a median "
                             "of 2 is their mean: one slow round would decide it)")
    parser.add_argument("--child", choices=("neuromark", "neurobench"), help=argparse.SUPPRESS)
    parser.add_argument("--child-pair", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.file, args.batch_size, args.threads)
        return
    if args.child_pair:
        from e2e_grid import pair_child

        pair_child(args.file, args.batch_size, args.threads, args.rounds)
        return
    ours_py, theirs_py = sys.executable, reference_python(args.reference_python)
    if args.quick:
        args.samples, args.rounds = 566, 3
    path = data_file(args.folder, args.samples, args.seed)
    if args.grid:
        from e2e_grid import grid

        grid(path, args, theirs_py, run_route)
        return
    print(f"{path}: {args.samples} samples, {path.stat().st_size / 1e6:.0f} MB; batch {args.batch_size}; "
          f"{os.cpu_count()} cores")
    routes = [("neuromark", ours_py)] + ([("neurobench", theirs_py)] if theirs_py else [])
    for name, python in routes:  # warm-up: page cache, numba's on-disk cache
        run_route(python, name, path, args.batch_size, args.threads)
    runs: dict[str, list[dict]] = {name: [] for name, _ in routes}
    for r in range(args.rounds):
        for name, python in (routes if r % 2 == 0 else routes[::-1]):
            runs[name].append(run_route(python, name, path, args.batch_size, args.threads))
    print(f"{'route':12s} {'route s':>9s} {'route CPU s':>12s} {'process s':>10s} {'peak RSS MB':>12s}  "
          f"(medians of {args.rounds}; {args.threads} torch thread(s))")
    med = {}
    keys = ("route_s", "route_cpu_s", "process_s", "peak_rss_mb")
    for name, rs in runs.items():
        med[name] = {k: statistics.median(x[k] for x in rs) for k in keys}
        print(f"{name:12s} {med[name]['route_s']:9.2f} {med[name]['route_cpu_s']:12.2f} "
              f"{med[name]['process_s']:10.2f} {med[name]['peak_rss_mb']:12.0f}")
    ours = runs["neuromark"][-1]["figures"]
    if theirs_py:
        per_round = [t["route_s"] / o["route_s"] for o, t in zip(runs["neuromark"], runs["neurobench"])]
        per_cpu = [t["route_cpu_s"] / o["route_cpu_s"] for o, t in zip(runs["neuromark"], runs["neurobench"])]
        per_proc = [t["process_s"] / o["process_s"] for o, t in zip(runs["neuromark"], runs["neurobench"])]
        print(f"speed-up neurobench / neuromark (medians of per-round ratios): route wall "
              f"{statistics.median(per_round):.1f}x (rounds {', '.join(f'{x:.1f}' for x in per_round)}), "
              f"route CPU {statistics.median(per_cpu):.1f}x, whole process wall "
              f"{statistics.median(per_proc):.1f}x")
        print(f"peak RSS neuromark / neurobench: "
              f"{med['neuromark']['peak_rss_mb'] / med['neurobench']['peak_rss_mb']:.2f}")
        theirs = runs["neurobench"][-1]["figures"]
        bad = agree(ours, theirs)
        print(f"figures agree: {not bad}" + "".join(f"\n  {b}" for b in bad))
        print(f"footprint bytes: neuromark {ours.get('footprint'):.0f}, "
              f"neurobench {theirs.get('footprint'):.0f}")
    print("figures (neuromark): " + json.dumps(ours))
    one = data_file(args.folder, 1, args.seed)
    for name, python in routes:
        floor = run_route(python, name, one, args.batch_size, args.threads)
        print(f"floor (1 sample) {name}: peak RSS {floor['peak_rss_mb']:.0f} MB, route "
              f"{floor['route_s']:.2f} s, process {floor['process_s']:.2f} s")
        sys.stdout.flush()
    if args.large:
        large = data_file(args.folder, args.large, args.seed)
        for name, python in routes:
            if name == "neurobench" and not args.large_neurobench:
                continue
            big = run_route(python, name, large, args.batch_size, args.threads)
            print(f"{name} at {args.large} samples: peak RSS {big['peak_rss_mb']:.0f} MB "
                  f"({big['peak_rss_mb'] / med[name]['peak_rss_mb']:.3f}x that at {args.samples}), "
                  f"route {big['route_s']:.1f} s")


if __name__ == "__main__":
    main()
