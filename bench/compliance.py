"""MLPerf compliance tests (TEST01, TEST04, TEST05) on the shipped CPU SUTs, plus the
memoising test double, from the shipped configs with a longer run per test.

Each SUT: the submission's performance run and accuracy run, then the three audit runs
(:mod:`neuromark.system.compliance`), each ``--duration`` seconds. Prints PASS/FAIL with the
figures. Not a test: timings depend on the machine and its load.

Run: ``python bench/compliance.py [--duration 5] [--out results/compliance]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from neuromark.config import load_config
from neuromark.system.compliance import format_verdicts, run_compliance
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.sut import InMemoryLibrary
from neuromark.tasks.system import TASK

ROOT = Path(__file__).resolve().parents[1]
#: (config, sut.options overrides, loadgen overrides): the ESN as shipped (stateful), with
#: per-query resets (a query then costs context + 1 reservoir updates), ASC.
#: Every run sets a low ``expected_latency_s`` (LoadGen pre-generates ``min_duration /
#: expected_latency`` queries: an expected latency above the real one leaves too few, and the
#: run is INVALID for "min duration not met") and a longer untimed warm-up, so that the
#: submission run is not the one that pays for cold caches.
CONFIGS = (("configs/system/esn_cpu_singlestream.yaml", {}, {}),
           ("configs/system/esn_cpu_singlestream.yaml", {"context": 5}, {"min_query_count": 200}),
           ("configs/system/asc_cpu_singlestream.yaml", {}, {}))
EXPECTED_LATENCY_S = 0.0002
WARMUP_SAMPLES = 2000


class Memoiser:
    """Answers a repeated sample from its cache (2 ms for a new one): must fail TEST04."""

    name = "memoiser"
    response_dtype = "<f4"

    def __init__(self) -> None:
        self.cache: dict[int, np.ndarray] = {}

    def issue(self, indices: list[int]) -> list[np.ndarray]:
        out = []
        for i in indices:
            if i not in self.cache:
                time.sleep(0.002)
                self.cache[i] = np.array([float(i)], dtype="<f4")
            out.append(self.cache[i])
        return out


def run_config(path: str, options: dict, loadgen: dict, duration: float, out: Path) -> None:
    config = load_config(ROOT / path)
    config.data["loadgen"] = {**config.data["loadgen"], "expected_latency_s": EXPECTED_LATENCY_S,
                              **loadgen, "min_duration_s": duration}
    config.data["timing"] = {**config.data.get("timing", {}), "warmup": WARMUP_SAMPLES}
    config.data["sut"]["options"] = {**config.data["sut"].get("options", {}), **options}
    config.data["compliance"] = True
    start = time.perf_counter()
    tag = Path(path).stem + "".join(f"-{k}{v}" for k, v in options.items())
    res = TASK.run(config, out / tag)[0]
    perf = res.details["loadgen"]["PerformanceOnly"]
    p90 = perf["latency_s"]["percentiles_s"]["90"] * 1e3
    print(f"{tag}: submission run {perf['validity']}, {perf['query_count']} queries, "
          f"p90 {p90:.3f} ms ({time.perf_counter() - start:.0f} s in all)")
    for line in format_verdicts(res.details["compliance"]):
        print(f"  {line}")


def run_memoiser(duration: float, out: Path) -> None:
    settings = LoadGenSettings(scenario="SingleStream", min_query_count=64, min_duration_s=duration,
                               expected_latency_s=0.002)
    library = InMemoryLibrary("ids", lambda i: i, 1_000_000)
    sut = Memoiser()
    reference = run_test(sut, library, settings, out / "memoiser/perf")
    verdicts = run_compliance(sut, library, settings, reference, None, out / "memoiser/audit",
                              ("TEST04",))
    print("memoiser (test double):")
    for line in format_verdicts(verdicts):
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per LoadGen run")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "compliance")
    args = parser.parse_args()
    for path, options, loadgen in CONFIGS:
        run_config(path, options, loadgen, args.duration, args.out)
    run_memoiser(min(args.duration, 1.0), args.out)


if __name__ == "__main__":
    main()
