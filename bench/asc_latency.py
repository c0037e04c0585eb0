"""ASC reference pipeline on this CPU: float32 vs int8 CNN, MFE vs CNN, side by side.

Times pre-processing (MFE) and inference (CNN) per 1-s sample at batch size 1 with the
StagedSUT timer (the same code path the system benchmark uses), interleaving the two
variants in rounds so machine drift hits both alike.

Run: ``python bench/asc_latency.py [--samples 64] [--rounds 5] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import statistics

from neuromark.benchmarks.acoustic_scenes.sut import build_pipeline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    pipes = {name: build_pipeline(data="synthetic", samples=args.samples, seed=0, train_epochs=1,
                                  int8=int8, threads=args.threads, weights=None)
             for name, int8 in (("float32", False), ("int8", True))}
    medians: dict[str, dict[str, list[float]]] = {n: {"preprocess": [], "inference": []} for n in pipes}
    for pipe in pipes.values():
        pipe.library.load(range(args.samples))
        pipe.sut.issue(list(range(min(10, args.samples))))  # warm-up
    for _ in range(args.rounds):
        for name, pipe in pipes.items():
            pipe.sut.timer.reset()
            pipe.sut.issue(list(range(args.samples)))
            stats = pipe.sut.timer.stats()
            for stage in ("preprocess", "inference"):
                medians[name][stage].append(stats[stage]["median_s"])
    print(f"ASC MFE + CNN, {args.samples} samples x {args.rounds} rounds, {args.threads} thread(s); "
          "median of per-round medians (ms)")
    f, q = medians["float32"], medians["int8"]
    for stage in ("preprocess", "inference"):
        a, b = statistics.median(f[stage]) * 1e3, statistics.median(q[stage]) * 1e3
        print(f"  {stage:<10}  float32 {a:8.4f}   int8 {b:8.4f}   int8/float32 {b / a:6.3f}")
    inf, pre = statistics.median(f["inference"]), statistics.median(f["preprocess"])
    print(f"  float32 inference / pre-processing: {inf / pre:6.3f}")


if __name__ == "__main__":
    main()
