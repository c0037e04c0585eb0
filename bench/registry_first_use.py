"""What loading the families costs: a registry's first use, and ``neuromark --help``, for two
source trees side by side in one run.

Since 0.2.0 the families are found through the ``neuromark.plugins`` entry points and their
manifests (``neuromark.registry.families``) on a registry's first use, where 0.1 listed them in
``registry.py``. Each round runs, in fresh processes and in alternating order, with each
tree's sources (``PYTHONPATH=<tree>/src``): ``import neuromark.registry`` and the names of
every registry (``--what registry``), or the CLI's ``--help``, which builds every verb's
parser (``--what help``). Prints the median wall time per tree and the new/old ratio.

The new tree's families are found through the entry points of the installed distribution
(``pip install -e .``), so run this with the Python of the checkout's ``.venv``.

Usage::

    git archive f48d38e | tar -x -C /tmp/nm_old      # 0.1's source tree
    .venv/bin/python bench/registry_first_use.py --old /tmp/nm_old --rounds 15
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The code each process runs: every registry's names (each kind the tree has).
REGISTRY_CODE = """
from neuromark import registry
kinds = [getattr(registry, k) for k in dir(registry)]
print(sum(len(r.names()) for r in kinds if isinstance(r, registry.Registry)))
"""


def run_once(tree: Path, what: str) -> tuple[float, str]:
    """Seconds of one fresh process with ``tree``'s sources, and what it printed."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    argv = ([sys.executable, "-c", REGISTRY_CODE] if what == "registry"
            else [sys.executable, "-m", "neuromark", "--help"])
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: {proc.stderr.strip()[-2000:]}")
    return wall, proc.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the baseline's source tree")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--what", choices=("registry", "help"), default="registry")
    args = parser.parse_args()
    trees = {"old": args.old.resolve(), "new": ROOT}
    times: dict[str, list[float]] = {name: [] for name in trees}
    for tree in trees.values():  # warm-up: bytecode caches, the OS page cache
        run_once(tree, args.what)
    for round_ in range(args.rounds):
        order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
        for name in order:
            wall, printed = run_once(trees[name], args.what)
            times[name].append(wall)
    for name in trees:
        print(f"{name}: median {statistics.median(times[name]) * 1e3:.1f} ms over {args.rounds} "
              f"runs ({args.what})")
    ratio = statistics.median(times["new"]) / statistics.median(times["old"])
    print(f"new/old: {ratio:.3f}")


if __name__ == "__main__":
    main()
