"""A metric run's fixed cost and its cost per time step, apart (by default on
``bench/overhead.py``'s reference case: reference LIF net 700-128-20, batch 64).

The seven metrics run on the same 4 seeded spike batches at 2 and at ``--long`` time
steps; each metric run sits between two plain loops (``overhead.plain_loop``) and its
time minus their mean is its extra time. The extra time at 2 steps is the **fixed** cost
of a run (set-up, provenance, per-batch collection and reductions, results; 2 steps of
probes included); the growth from 2 to ``--long`` steps is the **per-step** cost of the
probes. Medians over ``--rounds`` rounds, the two lengths alternating; CPU and wall time
(on a GPU read the wall figures: the host waits for the device). ``--case`` takes
``overhead.py``'s cases; ``--device cuda`` puts net and batches on the GPU and tells a
per-call gap from a per-batch one (issue 34's open GPU question). To compare with older
code, put a copy of its ``src/`` first on ``PYTHONPATH``. Run:
``python bench/fixed_costs.py [--rounds 30] [--case reference] [--device cpu] [--long 100]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import overhead  # noqa: E402
from probe_calls import BATCHES, case_batches  # noqa: E402

from neuromark.models.snntorch_model import SNNTorchModel  # noqa: E402
from neuromark.processors.decoding import ChooseMaxCount  # noqa: E402

SHORT = 2


def extra_times(args: argparse.Namespace, device: torch.device) -> tuple[dict, list]:
    """Per length: [(extra wall s, extra CPU s)] per round; and the plain loop's (wall, CPU)
    at the long length per round."""
    batch = args.batch or overhead.CASES[args.case][1]
    runs = {}
    for steps in (SHORT, args.long):
        net, batches = case_batches(args.case, batch, steps)
        batches = [(x.to(device), y.to(device)) for x, y in batches]
        runs[steps] = (SNNTorchModel(net.to(device)), batches, ChooseMaxCount(), device)
        for _ in range(3):  # warm-up: kernels loaded, caches filled
            overhead.plain_loop(*runs[steps])
            overhead.metric_run(*runs[steps][:3], device=device)
    extra: dict[int, list[tuple[float, float]]] = {SHORT: [], args.long: []}
    plain: list[tuple[float, float]] = []
    for _ in range(args.rounds):
        for steps in (SHORT, args.long):
            before = overhead.plain_loop(*runs[steps])
            metrics = overhead.metric_run(*runs[steps][:3], device=device)
            after = overhead.plain_loop(*runs[steps])
            mean = [(b + a) / 2 for b, a in zip(before, after)]
            extra[steps].append((metrics[0] - mean[0], metrics[1] - mean[1]))
            if steps == args.long:
                plain.append((mean[0], mean[1]))
    return extra, plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--case", default="reference", choices=sorted(overhead.CASES))
    parser.add_argument("--batch", type=int, default=None, help="default: the case's")
    parser.add_argument("--long", type=int, default=100, help="time steps of the long runs")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA GPU is available here")
    torch.set_num_threads(1)
    extra, plain = extra_times(args, device)
    print(f"{args.case} on {device}, {BATCHES} batches, {args.rounds} rounds, medians:")
    for i, clock in enumerate(("wall", "CPU")):
        fixed = statistics.median(e[i] for e in extra[SHORT])
        per_step = (statistics.median(e[i] for e in extra[args.long]) - fixed) / (
            (args.long - SHORT) * BATCHES)
        base = statistics.median(p[i] for p in plain)
        print(f"  {clock:4s}: fixed {fixed * 1e3:.2f} ms per run ({fixed / base:.3f} of the "
              f"plain loop's {base * 1e3:.1f} ms at {args.long} steps); probes "
              f"{per_step * 1e6:.1f} us per step ({per_step * args.long * BATCHES / base:.3f} of it)")


if __name__ == "__main__":
    main()
