"""The ESN SUT's accuracy pass against its float forecast, per warm-up window (``context``).

LoadGen's AccuracyOnly run issues every sample once in a seeded random order. This script
issues the ``esn`` SUT's samples the same way (a seeded permutation, one query each), scores
the responses with sMAPE against f(t + dt), and judges them against the float ESN's
teacher-forced forecast of the series in order (``BuiltSUT.reference``) at MLPerf's 99 %
target (lower is better: sMAPE <= reference / 0.99). ``context: 0`` keeps the reservoir
between queries; K > 0 gives each query its K-step warm-up window. It prints one row per
(data, context) with the SUT's sMAPE, the reference, the threshold, the verdict and the mean
time per query (this machine, busy: indicative only). This is the table behind the shipped
ESN configs' ``context: 60`` (docs/system_track.md, "Accuracy rules").

    python bench/esn_accuracy_context.py [--samples 200] [--contexts 0,20,40,60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from neuromark.benchmarks.mackey_glass.sut import esn
from neuromark.system.quality import MLPERF_TARGET, judge
from neuromark.system.track.accuracy import score_outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--contexts", default="0,20,40,60")
    parser.add_argument("--seed", type=int, default=0, help="the issue order's permutation seed")
    args = parser.parse_args()
    print("| data | context | SUT sMAPE (%) | float reference (%) | threshold (%) | verdict | ms/query |")
    print("|---|---|---|---|---|---|---|")
    for data in ("synthetic", "mackey_glass"):
        for context in (int(k) for k in args.contexts.split(",")):
            built = esn(data=data, samples=args.samples, context=context)
            try:
                count = built.library.total_count
                built.library.load(list(range(count)))
                order = np.random.default_rng(args.seed).permutation(count).tolist()
                start = time.perf_counter()
                outputs = {i: built.sut.issue([i])[0] for i in order}
                per_query = (time.perf_counter() - start) / count * 1e3
                mine = score_outputs(outputs, built.labels, "sMAPE", "identity").value
                ref_out = built.reference(list(range(count)))
                ref = score_outputs(dict(enumerate(ref_out)), built.labels, "sMAPE", "identity").value
                v = judge(float(mine), float(ref), MLPERF_TARGET, False)
                print(f"| {data} | {context} | {mine:.4g} | {ref:.4g} | {v['threshold']:.4g} | "
                      f"{v['verdict']} | {per_query:.3g} |")
            finally:
                built.close()


if __name__ == "__main__":
    main()
