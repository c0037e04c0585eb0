"""Overhead of all seven metrics vs a plain ``torch.inference_mode()`` loop.

Runs the reference network and data of ``tests/data/reference/neurobench_2_3_0_reference.json``
(snnTorch 700-128-20, 256 samples x 100 steps, batch 64). Plain loop and metric run are
alternated ``--rounds`` times in one process, each metric run between two plain runs and
divided by their mean (the host's speed drifts within seconds; neighbours share it); the
printed ratio is the median of the per-round ratios (these machines are noisy). Then
prints our figures beside the reference ones with their relative differences.

Both wall time and process CPU time are recorded; on a busy machine the CPU-time ratio
(one thread) is the stable one, because time spent descheduled is not counted.

Both loops are warmed up first; the first metric run's time, which includes compiling the
counting kernels (or loading them from numba's on-disk cache), is printed on its own.

With ``--neurobench`` (neurobench importable, e.g. in the scratch venv that
``scripts/reference_checks.sh`` builds: ``.cache/reference-venv/bin/python``), neurobench
2.3.0's own Benchmark with the same seven metrics joins the alternation, so both ratios come
from one run on one machine.

``--conv`` times a convolutional SNN instead (``reference_net.build_conv``; no reference
figures exist for it). ``--intercept`` times the reference network with its first Linear
called functionally (``reference_net.build_intercepted``): counted by interception, with
the same reference figures.

Every round also runs the metrics with the coverage check off
(``Instrument.coverage = False``: no parameter sorting, no interception), so the cost of
coverage is printed beside (on the intercepted net the "off" run misses its first layer).

``--case`` picks cases by name (repeatable): ``reference`` (the default), ``intercept``,
``conv``, and the issue-20 GPU table's ``reference-large`` (2,048 x 100, batch 256),
``wide`` (snnTorch 700-1024-1024-20, 2,048 x 100, batch 256) and ``conv-large`` (512 x 20,
batch 64); ``--samples``/``--batch`` shrink or grow a case (other data: no reference).
``--device cuda`` puts model and pre-collated batches on the GPU (synchronised at the end
of each timed loop) and by default runs the four GPU cases; ``--torch-path`` forces the
device counting path (``Instrument.counting_path = "torch"``) so that it can be timed on
CPU.

Usage: python bench/overhead.py [--rounds 15] [--threads N] [--neurobench]
       [--conv | --intercept | --case NAME ...] [--samples N] [--batch N]
       [--device cpu|cuda] [--torch-path]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference_net import (  # noqa: E402
    build_conv,
    build_intercepted,
    build_reference,
    build_wide,
    reference_figures,
)

from neuromark import Benchmark  # noqa: E402
from neuromark.instrument.probes import Instrument  # noqa: E402
from neuromark.metrics.complexity import ActivationSparsity, MembraneUpdates, SynapticOperations
from neuromark.metrics.correctness import ClassificationAccuracy
from neuromark.metrics.static import ConnectionSparsity, Footprint, ParameterCount
from neuromark.models.snntorch_model import SNNTorchModel  # noqa: E402
from neuromark.processors.decoding import ChooseMaxCount  # noqa: E402

CPU = torch.device("cpu")


def plain_loop(model: SNNTorchModel, loader, post,
               device: torch.device = CPU) -> tuple[float, float]:
    """(wall s, CPU s) of a plain inference loop (the device synchronised at its end)."""
    wall, cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        for data, _ in loader:
            model.reset_state()
            post(model(data))
    synchronize(device)
    return time.perf_counter() - wall, time.process_time() - cpu


def metric_run(model: SNNTorchModel, loader, post, coverage: bool = True,
               device: torch.device = CPU):
    """(wall s, CPU s, results) of a Benchmark run with all seven metrics."""
    Instrument.coverage = coverage
    metrics = [Footprint(), ParameterCount(), ConnectionSparsity(), ClassificationAccuracy(),
               ActivationSparsity(), SynapticOperations(), MembraneUpdates()]
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        results = Benchmark(model, loader, [], [post], metrics, quiet=True).run()
        synchronize(device)
    finally:
        Instrument.coverage = True
    return time.perf_counter() - wall, time.process_time() - cpu, results


class Collated:
    """Pre-collated batches with the ``dataset`` and ``len`` neurobench's loop reads."""

    def __init__(self, batches: list, dataset) -> None:
        self.batches, self.dataset = batches, dataset

    def __iter__(self):
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


def neurobench_run(net, loader: Collated,
                   device: torch.device = CPU) -> tuple[float, float]:
    """(wall s, CPU s) of neurobench 2.3.0's Benchmark with the same seven metrics."""
    from neurobench.benchmarks import Benchmark as NBBenchmark
    from neurobench.metrics import static as nb_static
    from neurobench.metrics import workload as nb_workload
    from neurobench.models import SNNTorchModel as NBSNNTorchModel

    static = [nb_static.Footprint, nb_static.ParameterCount, nb_static.ConnectionSparsity]
    workload = [nb_workload.ClassificationAccuracy, nb_workload.ActivationSparsity,
                nb_workload.SynapticOperations, nb_workload.MembraneUpdates]
    wall, cpu = time.perf_counter(), time.process_time()
    device_kwargs = {} if device.type == "cpu" else {"device": device}
    NBBenchmark(NBSNNTorchModel(net), loader, [], [lambda spikes: spikes.sum(1).argmax(-1)],
                [static, workload]).run(quiet=True, verbose=False, **device_kwargs)
    synchronize(device)
    return time.perf_counter() - wall, time.process_time() - cpu


#: case name -> (builder, batch size, samples); "gpu" cases are the issue's H100 table.
CASES = {
    "reference": (build_reference, 64, 256),
    "reference-large": (build_reference, 256, 2048),
    "wide": (build_wide, 256, 2048),
    "conv": (build_conv, 16, 64),
    "conv-large": (build_conv, 64, 512),
    "intercept": (build_intercepted, 64, 256),
}
GPU_CASES = ("reference-large", "reference", "wide", "conv-large")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--neurobench", action="store_true",
                        help="also time neurobench 2.3.0's Benchmark (must be importable)")
    parser.add_argument("--conv", action="store_true",
                        help="a convolutional SNN instead of the reference network")
    parser.add_argument("--intercept", action="store_true",
                        help="the reference network with a functional first layer")
    parser.add_argument("--case", action="append", choices=sorted(CASES),
                        help="cases to time (repeatable); default: reference, or with "
                             f"--device cuda the four GPU cases {', '.join(GPU_CASES)}")
    parser.add_argument("--samples", type=int, default=None,
                        help="override the case's sample count (other data, no reference)")
    parser.add_argument("--batch", type=int, default=None, help="override the batch size")
    parser.add_argument("--device", default="cpu",
                        help="where model and pre-collated batches live (cpu, cuda, cuda:N)")
    parser.add_argument("--torch-path", action="store_true",
                        help="force the torch counting path (Instrument.counting_path='torch')")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA GPU is available here; use --torch-path to "
                     "time the device counting path on CPU")
    cases = args.case or (["conv"] if args.conv else ["intercept"] if args.intercept
                          else list(GPU_CASES) if device.type == "cuda" else ["reference"])
    if args.torch_path:
        Instrument.counting_path = "torch"
    print(f"device {device}, counting path {'torch (forced)' if args.torch_path else 'auto'}")
    for case in cases:
        bench_case(case, args, device)


def bench_case(case: str, args: argparse.Namespace, device: torch.device) -> None:
    """Time one case and print its ratios (and the reference figures where they hold)."""
    build, batch_size, samples = CASES[case]
    batch_size, samples = args.batch or batch_size, args.samples or samples
    net, loader = build(batch_size, samples)
    net = net.to(device)
    # collate once, on the device: data loading is not what is compared
    batches = [(x.to(device), y.to(device)) for x, y in loader]
    synchronize(device)
    steps = batches[0][0].shape[1]
    print(f"\n== {case}: {samples} samples x {steps} steps, batch {batch_size}")
    model, post = SNNTorchModel(net), ChooseMaxCount()
    plain_loop(model, batches, post, device)  # warm-up
    # warm-up: numba compiles or loads its cache
    first_wall, _, _ = metric_run(model, batches, post, device=device)
    print(f"first metric run (one-time kernel compilation or cache load included): {first_wall:.3f} s")
    walls: list[tuple[float, float]] = []
    cpus: list[tuple[float, float]] = []
    off_walls: list[float] = []  # coverage off: metrics / plain
    off_cpus: list[float] = []
    theirs: list[tuple[float, float]] = []  # neurobench (wall, CPU) over the same plain run
    collated = Collated(batches, loader.dataset)
    if args.neurobench:
        neurobench_run(net, collated, device)  # warm-up
    results = None
    # each metric run between two plain runs, compared with their mean: the machine's
    # speed drifts within seconds on a shared host, and a run's neighbours share its drift
    before = plain_loop(model, batches, post, device)
    for _ in range(args.rounds):
        wall_metrics, cpu_metrics, results = metric_run(model, batches, post, device=device)
        between = plain_loop(model, batches, post, device)
        wall_plain, cpu_plain = (before[0] + between[0]) / 2, (before[1] + between[1]) / 2
        walls.append((wall_plain, wall_metrics))
        cpus.append((cpu_plain, cpu_metrics))
        wall_off, cpu_off, _ = metric_run(model, batches, post, coverage=False, device=device)
        before = plain_loop(model, batches, post, device)
        off_walls.append(wall_off / ((between[0] + before[0]) / 2))
        off_cpus.append(cpu_off / ((between[1] + before[1]) / 2))
        if args.neurobench:
            wall_nb, cpu_nb = neurobench_run(net, collated, device)
            theirs.append((wall_nb / wall_plain, cpu_nb / cpu_plain))
    for label, pairs in (("wall time", walls), ("CPU time", cpus)):
        ratios = [m / p for p, m in pairs]
        print(f"overhead ({label}): all 7 metrics / plain inference_mode loop = "
              f"{statistics.median(ratios):.3f} (median of {args.rounds} rounds; min "
              f"{min(ratios):.3f}, max {max(ratios):.3f}; plain "
              f"{statistics.median(p for p, _ in pairs):.3f} s, metrics "
              f"{statistics.median(m for _, m in pairs):.3f} s, {torch.get_num_threads()} threads)")
    calls = len(batches) * steps
    extra = statistics.median(m - p for p, m in walls) / calls
    print(f"metrics' extra wall time per time step of a batch: {extra * 1e6:.1f} us "
          f"({len(batches)} batches x {steps} steps; plain "
          f"{statistics.median(p for p, _ in walls) / calls * 1e6:.1f} us per step): "
          "per-call probe work when it is flat across batch sizes, per-batch reductions "
          "when it grows with them")
    for label, ratios in (("wall time", off_walls), ("CPU time", off_cpus)):
        print(f"coverage off ({label}): all 7 metrics / plain loop = "
              f"{statistics.median(ratios):.3f} (median of {args.rounds} rounds)")
    if theirs:
        for label, index, pairs in (("wall time", 0, walls), ("CPU time", 1, cpus)):
            nb_ratios = [t[index] for t in theirs]
            ours_ratios = [m / p for p, m in pairs]
            print(f"neurobench 2.3.0 ({label}): all 7 metrics / plain loop = "
                  f"{statistics.median(nb_ratios):.3f} (median of {args.rounds} rounds); "
                  f"neurobench's overhead / ours = "
                  f"{(statistics.median(nb_ratios) - 1) / (statistics.median(ours_ratios) - 1):.1f}x")
    ours = dict(results)
    if case not in ("reference", "intercept") or (samples, batch_size) != (256, 64):
        for key in ("synaptic_operations", "activation_sparsity", "membrane_updates"):
            print(f"{key:20s} ours {ours[key]}")  # no reference figures for this case
        return
    ref = reference_figures()["per_sample"]
    figures = {
        "Effective_ACs": ours["synaptic_operations"]["Effective_ACs"],
        "Effective_MACs": ours["synaptic_operations"]["Effective_MACs"],
        "Dense": ours["synaptic_operations"]["Dense"],
        "activation_sparsity": ours["activation_sparsity"],
        "membrane_updates": ours["membrane_updates"],
    }
    for key, value in figures.items():
        expected = ref[key]
        rel = abs(value - expected) / abs(expected) if expected else abs(value)
        print(f"{key:20s} ours {value!r:>22}  neurobench 2.3.0 {expected!r:>22}  rel.diff {rel:.1e}")
    static = reference_figures()["static"]
    print(f"{'parameter_count':20s} ours {ours['parameter_count']!r:>22}  neurobench 2.3.0 "
          f"{static['parameter_count']!r:>22}")
    print(f"{'footprint':20s} ours {ours['footprint']!r:>22}  neurobench 2.3.0 fresh "
          f"{static['footprint_fresh_bytes']}, after a batch-64 run "
          f"{static['footprint_after_run_bytes_neurobench']} (grows with batch size)")


if __name__ == "__main__":
    main()
