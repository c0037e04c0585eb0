"""Primate reaching: the sessions' test streams one after another vs side by side.

Runs the ``primate_reaching`` task twice on the same shared decoder (trained once, cached):
``parallel_sessions: false`` (one stream per session, ``(1, L, C)`` chunks) and ``true``
(``(S, L, C)`` batches), alternating the two ``--rounds`` times, and prints the R² of both
(which must agree) with the median wall and CPU seconds of each and their ratios.

Run: ``python bench/primate_parallel.py [--model snn2] [--duration 60] [--rounds 3]``
(the three 96-channel indy sessions of a surrogate in a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from neuromark.config import ConfigFile
from neuromark.registry import tasks
from neuromark.tasks.base import plan_and_run

SESSIONS = ["indy_20160622_01", "indy_20160630_01", "indy_20170131_02"]


def config(root: Path, model: str, duration: float, parallel: bool) -> ConfigFile:
    data = {"task": "primate_reaching", "benchmark": {"id": "bench-parallel"},
            "data": {"root": str(root / "data"), "surrogate": {"duration_s": duration, "seed": 0},
                     "sessions": SESSIONS, "shared_decoder": True, "parallel_sessions": parallel},
            "model": {"name": model}, "checkpoint_dir": str(root / "ckpt")}
    path = root / "bench.yaml"
    path.write_text(json.dumps(data))
    return ConfigFile(data=data, path=path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="snn2", choices=["ridge_decoder", "ann2d", "snn2"])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds per session")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    task = tasks.get("primate_reaching")
    times: dict[bool, dict[str, list[float]]] = {p: {"wall": [], "cpu": []} for p in (False, True)}
    r2: dict[bool, float] = {}
    with tempfile.TemporaryDirectory(prefix="nm-parallel-") as tmp:
        plan_and_run(task, config(Path(tmp), args.model, args.duration, False), Path(tmp) / "o", quiet=True)
        for _ in range(args.rounds):
            for parallel in (False, True):
                wall, cpu = time.perf_counter(), time.process_time()
                (res,) = plan_and_run(task, config(Path(tmp), args.model, args.duration, parallel),
                                      Path(tmp) / "o", quiet=True)
                times[parallel]["wall"].append(time.perf_counter() - wall)
                times[parallel]["cpu"].append(time.process_time() - cpu)
                r2[parallel] = res["r2"]
                steps = sum(e["samples"] for e in res.details["per_session"].values())
    print(f"{args.model}, 3 indy sessions of {args.duration:g} s ({steps} test steps), "
          f"{args.rounds} rounds; R2 sequential {r2[False]:.6f}, parallel {r2[True]:.6f}")
    for kind in ("wall", "cpu"):
        seq, par = (statistics.median(times[p][kind]) for p in (False, True))
        print(f"  {kind:4s} s: sequential {seq:7.2f}  parallel {par:7.2f}  ratio {seq / par:5.2f}x")


if __name__ == "__main__":
    main()
