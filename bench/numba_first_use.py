"""What numba costs a fresh process before the first count: its import, and the first
call of a cached kernel (numba then loads its typing and target registries, about 40
modules of its own, and the kernel from its on-disk cache).

Each of ``--processes`` fresh interpreters imports numpy and torch first (both routes of
``bench/e2e_shd.py`` have them loaded before their timers), then times in CPU seconds:
``import neuromark._numba`` (numba itself), the import of the kernel module, the first
call of the neuron kernel (registries + cache load), then the first call of the Linear
kernel (a second kernel from the cache, registries already loaded). Medians and ranges.
Run: ``python bench/numba_first_use.py [--processes 5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, time
import numpy as np, torch
clock = time.process_time
t = clock(); from neuromark._numba import numba; a = clock() - t
t = clock(); from neuromark.instrument import kernels; k = kernels.compiled(); b = clock() - t
z = np.zeros(4, np.float32)
t = clock(); k[1](z, z, z); c = clock() - t
t = clock(); k[0](np.zeros((2, 1, 4), np.float32), 0, z, *kernels.UNITS["f"], 1, kernels.NO_SAMPLES)
d = clock() - t
print("RESULT " + json.dumps([a, b, c, d]))
"""
PARTS = ("import numba", "import kernel module", "first kernel call", "second kernel's first call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=5)
    args = parser.parse_args()
    runs = []
    for _ in range(args.processes):
        out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
        runs.append(json.loads([x for x in out.stdout.splitlines() if x.startswith("RESULT ")][-1][7:]))
    for i, part in enumerate(PARTS):
        values = [r[i] for r in runs]
        print(f"{part:28s} {statistics.median(values):6.3f} s CPU (range {min(values):.3f}-"
              f"{max(values):.3f}, {args.processes} fresh processes)")


if __name__ == "__main__":
    main()
