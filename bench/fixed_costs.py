"""A metric run's fixed cost and its cost per time step, apart, on ``bench/overhead.py``'s
reference case (reference LIF net 700-128-20, batch 64, 4 seeded spike batches).

The seven metrics run on the same 4 batches at 2 and at 100 time steps; each metric run
sits between two plain loops (``overhead.plain_loop``) and its CPU time minus their mean is
its extra time. The extra time at 2 steps is the **fixed** cost of a run (set-up,
provenance, per-batch collection, results; 2 steps of probes included); the growth from 2
to 100 steps over 98 x 4 steps is the **per-step** cost of the probes. Medians over
``--rounds`` rounds, the two lengths alternating. To compare with older code, put a copy
of its ``src/`` first on ``PYTHONPATH``. Run: ``python bench/fixed_costs.py [--rounds 30]``.
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

from neuromark.models import SNNTorchModel  # noqa: E402
from neuromark.processors import ChooseMaxCount  # noqa: E402

SHORT, LONG = 2, 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = {}
    for steps in (SHORT, LONG):
        net, batches = case_batches("reference", args.batch, steps)
        runs[steps] = (SNNTorchModel(net), batches, ChooseMaxCount())
        for _ in range(3):  # warm-up: kernels loaded, caches filled
            overhead.plain_loop(*runs[steps])
            overhead.metric_run(*runs[steps])
    extra: dict[int, list[float]] = {SHORT: [], LONG: []}
    plain: list[float] = []
    for _ in range(args.rounds):
        for steps in (SHORT, LONG):
            before = overhead.plain_loop(*runs[steps])[1]
            metrics = overhead.metric_run(*runs[steps])[1]
            after = overhead.plain_loop(*runs[steps])[1]
            extra[steps].append(metrics - (before + after) / 2)
            if steps == LONG:
                plain.append((before + after) / 2)
    fixed = statistics.median(extra[SHORT])
    per_step = (statistics.median(extra[LONG]) - fixed) / ((LONG - SHORT) * BATCHES)
    base = statistics.median(plain)
    print(f"reference, batch {args.batch}, {BATCHES} batches, {args.rounds} rounds (CPU time, "
          f"medians): fixed {fixed * 1e3:.2f} ms per run ({fixed / base:.3f} of the plain "
          f"loop's {base * 1e3:.1f} ms at {LONG} steps); probes {per_step * 1e6:.1f} us per "
          f"step ({per_step * LONG * BATCHES / base:.3f} of it)")


if __name__ == "__main__":
    main()
