"""Wall time of ``neuromark run CONFIG`` for two source trees, side by side in one run.

Measures what the run path costs (planning, the run context, the task protocol, result
writing) against an earlier commit: each round runs every config once with the old tree and
once with the new one (order alternating), in fresh processes, with one warm cache folder
shared by both (first a warm-up round that trains and synthesises). Prints the median wall
time per config and tree and the new/old ratio. Both trees must be importable by the same
Python (``PYTHONPATH=<tree>/src``).

Usage::

    git archive 7fbe410 | tar -x -C /tmp/nm_old          # the baseline's source tree
    python bench/run_path_compare.py --old /tmp/nm_old --rounds 5 \\
        configs/mackey_glass/esn.yaml configs/primate_reaching/ann2d_suite.yaml
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_once(tree: Path, config: Path, cache: Path) -> float:
    """Seconds of one ``neuromark run CONFIG --quiet`` with ``tree``'s sources."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "NEUROMARK_CACHE_DIR": str(cache)}
    with tempfile.TemporaryDirectory(prefix="runpath-") as out:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "neuromark", "run", str(config), "--out",
                               f"{out}/o", "--quiet"], env=env, cwd=tree,
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: {config} failed:\n{proc.stderr[-2000:]}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--old", type=Path, required=True, help="the baseline's source tree")
    parser.add_argument("--new", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    cache = Path(tempfile.mkdtemp(prefix="runpath-cache-"))
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    for config in args.configs:  # warm-up: training, synthesis, numba caches
        for tree in trees.values():
            run_once(tree, (tree / config) if not config.is_absolute() else config, cache)
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for config in args.configs:
            for name in order:
                tree = trees[name]
                path = (tree / config) if not config.is_absolute() else config
                times.setdefault((str(config), name), []).append(run_once(tree, path, cache))
    print(f"{'config':45s} {'old s':>8s} {'new s':>8s} {'new/old':>8s}  ({args.rounds} rounds, "
          f"median)")
    for config in args.configs:
        old = statistics.median(times[str(config), "old"])
        new = statistics.median(times[str(config), "new"])
        print(f"{str(config):45s} {old:8.2f} {new:8.2f} {new / old:8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
