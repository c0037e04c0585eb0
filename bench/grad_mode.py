"""What leaving ``inference_mode`` costs the plain loop: ``torch.no_grad`` (whose tensors
keep version counters, so that kept outputs could be checked for in-place writes) against
``torch.inference_mode`` (no version counters), on ``bench/overhead.py``'s reference case
(batch 64, 4 seeded spike batches of 100 steps, one thread).

Each ``no_grad`` loop runs between two ``inference_mode`` loops and is divided by their
mean; printed: the median and range of ``--rounds`` such ratios (CPU time).
Run: ``python bench/grad_mode.py [--rounds 30]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_calls import case_batches  # noqa: E402

from neuromark.models.snntorch_model import SNNTorchModel  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    net, batches = case_batches("reference", 64, 100)
    model = SNNTorchModel(net)

    def loop(mode: Callable) -> float:
        start = time.process_time()
        with mode():
            for x, _ in batches:
                model.reset_state()
                model(x)
        return time.process_time() - start

    for _ in range(3):  # warm-up
        loop(torch.inference_mode)
        loop(torch.no_grad)
    ratios = []
    for _ in range(args.rounds):
        before, grad_off, after = loop(torch.inference_mode), loop(torch.no_grad), loop(torch.inference_mode)
        ratios.append(grad_off / ((before + after) / 2))
    print(f"plain loop, no_grad / inference_mode = {statistics.median(ratios):.3f} (median of "
          f"{args.rounds} rounds; range {min(ratios):.2f}-{max(ratios):.2f}; CPU time, one thread)")


if __name__ == "__main__":
    main()
