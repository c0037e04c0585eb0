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
Files are kept in ``.cache/e2e_shd`` (rewritten only when missing).
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

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = ROOT / ".cache/reference-venv/bin/python"
DT_US, T_MAX_US, CHANNELS, CLASSES = 10_000, 1_000_000, 700, 20
#: Figures compared between the routes (footprint is printed apart: neurobench's grows with
#: the batch, snnTorch keeping the membrane as a buffer).
COMPARED = ("parameter_count", "connection_sparsity", "classification_accuracy", "activation_sparsity",
            "synaptic_operations", "membrane_updates")


def write_file(path: Path, n: int, seed: int = 0, chunk: int = 500) -> Path:
    """The SHD layout (vlen float16 times, vlen uint16 units, uint16 labels and speakers,
    class names), written ``chunk`` samples at a time so that 20,000 samples fit in memory;
    each sample sorted by (time, unit) after rounding to float16, as ``write_shd_file`` does."""
    import h5py
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".tmp")
    with h5py.File(tmp, "w") as f:
        times = f.create_dataset("spikes/times", (n,), dtype=h5py.vlen_dtype(np.float16))
        units = f.create_dataset("spikes/units", (n,), dtype=h5py.vlen_dtype(np.uint16))
        f.create_dataset("labels", data=rng.integers(0, CLASSES, n).astype(np.uint16))
        f.create_dataset("extra/speaker", data=rng.integers(0, 10, n).astype(np.uint16))
        f.create_dataset("extra/keys", data=np.array([f"class{i}".encode() for i in range(CLASSES)]))
        f.create_group("extra/meta_info")
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            t_obj, u_obj = np.empty(hi - lo, dtype=object), np.empty(hi - lo, dtype=object)
            for j, count in enumerate(rng.integers(1000, 9001, hi - lo)):
                t = rng.uniform(0.0, 0.999, count).astype(np.float16)
                u = rng.integers(0, CHANNELS, count).astype(np.uint16)
                order = np.lexsort((u, t))
                t_obj[j], u_obj[j] = t[order], u[order]
            for j in range(hi - lo):  # h5py cannot broadcast a 1-element object array
                times[lo + j], units[lo + j] = t_obj[j], u_obj[j]
    tmp.replace(path)
    (path.parent / "shd_test.h5.zip").write_bytes(b"")  # tonic checks only that it exists
    return path


def data_file(folder: Path, n: int, seed: int) -> Path:
    """``folder/n<N>_s<seed>/SHD/shd_test.h5`` (tonic's layout), written when missing."""
    path = folder / f"n{n}_s{seed}" / "SHD" / "shd_test.h5"
    return path if path.is_file() else write_file(path, n, seed)


def reference_lif():
    """The reference snnTorch network (no data drawn: nothing but the net in memory)."""
    import snntorch as snn
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(700, 128), snn.Leaky(beta=0.9, init_hidden=True),
                        nn.Linear(128, 20), snn.Leaky(beta=0.9, init_hidden=True, output=True))
    with torch.no_grad():
        net[0].weight.mul_(4)
    return net


def plain(value):
    """Scores and tensors as plain floats (dicts kept)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return float(value)


def seven_metrics() -> list:
    """Fresh instances of the seven metrics, in neurobench's order (static, then workload)."""
    from neuromark import metrics as m

    return [m.Footprint(), m.ParameterCount(), m.ConnectionSparsity(), m.ClassificationAccuracy(),
            m.ActivationSparsity(), m.SynapticOperations(), m.MembraneUpdates()]


def route_neuromark(path: Path, batch_size: int) -> dict:
    import h5py  # noqa: F401

    from neuromark import Benchmark, metrics, runner  # noqa: F401
    from neuromark.benchmarks.shd.datasets import SpikeFileDataset
    from neuromark.data import hdf5_vlen, spike_stream  # noqa: F401  (numba)
    from neuromark.instrument import probes  # noqa: F401
    from neuromark.models import SNNTorchModel
    from neuromark.processors import ChooseMaxCount

    net = reference_lif()
    start, cpu = time.perf_counter(), time.process_time()
    loader = SpikeFileDataset(path).loader(batch_size, DT_US, T_MAX_US)
    results = Benchmark(SNNTorchModel(net), loader, [], [ChooseMaxCount()], seven_metrics(),
                        quiet=True).run()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    figures = {k: plain(v) for k, v in dict(results).items()}
    return {"route_s": seconds, "route_cpu_s": cpu, "figures": figures}


#: neurobench 2.x result keys -> ours.
NB_KEYS = {"Footprint": "footprint", "ParameterCount": "parameter_count",
           "ConnectionSparsity": "connection_sparsity", "ClassificationAccuracy": "classification_accuracy",
           "ActivationSparsity": "activation_sparsity", "SynapticOperations": "synaptic_operations",
           "MembraneUpdates": "membrane_updates"}


class _Squeeze:
    """ToFrame's (T, 1, 700) int frames -> (T, 700) float32, as the net takes them."""

    def __call__(self, frames):
        import numpy as np

        return frames[:, 0, :].astype(np.float32)


def route_neurobench(path: Path, batch_size: int) -> dict:
    import tonic
    from neurobench.benchmarks import Benchmark as NBBenchmark
    from neurobench.metrics import static as nb_static
    from neurobench.metrics import workload as nb_workload
    from neurobench.models import SNNTorchModel as NBSNNTorchModel
    from torch.utils.data import DataLoader

    net = reference_lif()
    start, cpu = time.perf_counter(), time.process_time()
    to_frame = tonic.transforms.ToFrame(sensor_size=(CHANNELS, 1, 1), time_window=DT_US, start_time=0,
                                        end_time=T_MAX_US)
    dataset = tonic.datasets.SHD(str(path.parents[1]), train=False,
                                 transform=tonic.transforms.Compose([to_frame, _Squeeze()]))
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)
    static = [nb_static.Footprint, nb_static.ParameterCount, nb_static.ConnectionSparsity]
    workload = [nb_workload.ClassificationAccuracy, nb_workload.ActivationSparsity,
                nb_workload.SynapticOperations, nb_workload.MembraneUpdates]
    results = NBBenchmark(NBSNNTorchModel(net), loader, [], [lambda s: s.sum(1).argmax(-1)],
                          [static, workload]).run(quiet=True, verbose=False)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    figures = {NB_KEYS.get(k, k): plain(v) for k, v in results.items()}
    return {"route_s": seconds, "route_cpu_s": cpu, "figures": figures}


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
