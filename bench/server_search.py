"""Server search on the sleep SUT (1 ms, ``configs/system/sleep_1ms.yaml``) against a manual
sweep: the rate the search reports (the minimum of its five final runs at the rate found)
and the highest rate of a fixed grid whose run is VALID, and how long the search took.

Both use the ``test`` profile's probe length (1 s) and the same Server settings (p99
within ``--bound`` s). The sweep runs the grid upwards and stops after two INVALID rates
in a row; it reports the highest VALID rate before those two. Not a test: the
rates depend on the machine and its load.

Run: ``python bench/server_search.py [--bound 0.01] [--step 25]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from neuromark.config import load_config
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.sut import warm_up
from neuromark.system.track.task import TASK
from neuromark.tasks.base import plan_and_run

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs/system/sleep_1ms.yaml"


def server(bound: float) -> dict:
    return {"scenario": "Server", "latency_bound_s": bound, "min_duration_s": 1.0,
            "target_latency_percentile": 0.99}


def search(bound: float, out: Path) -> tuple[dict, float]:
    config = load_config(CONFIG)
    config.data["loadgen"] = {**server(bound), "search": True}
    start = time.perf_counter()
    res = plan_and_run(TASK, config, out)[0]
    return res.details, time.perf_counter() - start


def sweep(bound: float, rates: list[float], out: Path) -> tuple[float | None, list[str]]:
    from neuromark.registry import suts

    built = suts.get("sleep")(sleep_s=0.001, samples=64)
    warm_up(built.sut, built.library, 10)
    settings = LoadGenSettings(**server(bound), min_query_count=689)  # the search's minimum
    best, log, fails = None, [], 0
    for rate in rates:
        s = LoadGenSettings.model_validate({**settings.model_dump(), "target_qps": rate})
        verdict = run_test(built.sut, built.library, s, out / f"{rate:g}").summary["validity"]
        log.append(f"{rate:g} {verdict}")
        if verdict == "VALID":
            best, fails = rate, 0
        else:
            fails += 1
        if fails >= 2:  # two INVALID rates in a row: past the edge
            break
    return best, log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bound", type=float, default=0.01, help="p99 latency bound (s)")
    parser.add_argument("--step", type=float, default=25.0, help="sweep grid step (queries/s)")
    parser.add_argument("--start", type=float, default=400.0)
    parser.add_argument("--stop", type=float, default=1200.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        details, wall = search(args.bound, Path(tmp) / "search")
        s = details["loadgen"]["search"]
        metric = details["scenario_metric"]
        print(f"search: {len(s['probes'])} probes "
              + ", ".join(f"{p['value']:.0f}{'' if p['passed'] else ' (INVALID)'}" for p in s["probes"])
              + f"; best {s['best']:.1f}; final runs at "
              + ", ".join(f"{r['target_qps']:g}: {r['validity']}" for r in s["final"]))
        print(f"search reports {metric['value']:.1f} samples/s ({metric['validity']}) in {wall:.1f} s")
        rates, r = [], args.start
        while r <= args.stop:
            rates.append(r)
            r += args.step
        start = time.perf_counter()
        best, log = sweep(args.bound, rates, Path(tmp) / "sweep")
        print(f"manual sweep ({time.perf_counter() - start:.1f} s): {'; '.join(log)}")
        print(f"manual sweep's highest VALID rate: {best}")
        if best:  # like with like: single runs; then the paper's five-run figure
            print(f"search's rate / sweep: {s['best'] / best:.3f} "
                  f"({abs(s['best'] / best - 1) * 100:.1f} % apart); reported minimum of five "
                  f"runs / sweep: {metric['value'] / best:.3f}")


if __name__ == "__main__":
    main()
