"""Python and C function calls the probes add per time step: a count, not a time, so it
is the same on a loaded machine as on a quiet one.

For one case of ``bench/overhead.py`` the calls of a metric run (all seven metrics) minus
those of the plain loop are counted with ``sys.setprofile`` ("call" and "c_call" events:
every Python frame and every call of a builtin or C function from Python; numba kernels
and torch ops count as one call each), at T and 2T time steps; the difference over the T
extra steps of each batch is the per-step figure (per-batch work cancels), and what is
left at T is the per-batch figure. Run:
``python bench/probe_calls.py [--case reference conv-large] [--batch 2] [--steps 20]
[--torch-path]`` (``--torch-path``: the GPU's counting path, forced on CPU). To compare
with older code, put a copy of its ``src/`` first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import overhead  # noqa: E402

from neuromark.instrument.probes import Instrument  # noqa: E402
from neuromark.models.snntorch_model import SNNTorchModel  # noqa: E402
from neuromark.processors.decoding import ChooseMaxCount  # noqa: E402

BATCHES = 4


def calls(run: Callable[[], object]) -> int:
    """Function calls (Python frames and C calls) made while ``run`` runs."""
    count = [0]

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count[0]


def case_batches(case: str, batch: int, steps: int) -> tuple[torch.nn.Module, list]:
    """The case's network and ``BATCHES`` seeded spike batches of ``steps`` steps."""
    build = overhead.CASES[case][0]
    net, loader = build(batch, batch)
    shape = next(iter(loader))[0].shape[2:]
    generator = torch.Generator().manual_seed(1)
    batches = [((torch.rand(batch, steps, *shape, generator=generator) < 0.1).float(),
                torch.zeros(batch, dtype=torch.long)) for _ in range(BATCHES)]
    return net, batches


def extra_calls(case: str, batch: int, steps: int) -> int:
    """Calls of a metric run minus those of the plain loop, over ``BATCHES`` batches."""
    net, batches = case_batches(case, batch, steps)
    model, post = SNNTorchModel(net), ChooseMaxCount()
    overhead.plain_loop(model, batches, post)
    overhead.metric_run(model, batches, post)  # warm-up: kernels loaded, caches filled
    plain = calls(lambda: overhead.plain_loop(model, batches, post))
    return calls(lambda: overhead.metric_run(model, batches, post)) - plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs="+", default=["reference", "conv-large"],
                        choices=sorted(overhead.CASES))
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--torch-path", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.torch_path:
        Instrument.counting_path = "torch"
    path = "torch (forced)" if args.torch_path else "auto"
    for case in args.case:
        short = extra_calls(case, args.batch, args.steps)
        long = extra_calls(case, args.batch, 2 * args.steps)
        per_step = (long - short) / (args.steps * BATCHES)
        per_batch = (short - args.steps * BATCHES * per_step) / BATCHES
        print(f"{case}: batch {args.batch}, counting path {path}: {per_step:.1f} calls per "
              f"time step, {per_batch:.0f} per batch besides")


if __name__ == "__main__":
    main()
