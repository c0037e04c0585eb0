"""MLPerf compliance tests (TEST01, TEST04 and the retired TEST05) on the shipped CPU SUTs, plus the
memoising test double, from the shipped configs with a longer run per test.

Each SUT: the submission's performance run and accuracy run, then the three audit runs
(:mod:`neuromark.system.compliance`), each ``--duration`` seconds. Prints PASS/FAIL with the
figures. Not a test: timings depend on the machine and its load.

Run: ``python bench/compliance.py [--duration 5] [--out results/compliance] [--pin CPU...]``
(``--pin`` keeps the process on the given CPUs, as a submission would isolate its cores: on
this VM it narrows the run-to-run spread of a 1.4-ms p90).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from speed_probe import SpeedProbe, loadgen_window, median_us

from neuromark.config import load_config
from neuromark.system.compliance import KNOWN_TESTS, format_verdicts, run_compliance
from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.loadgen_log import parse_detail
from neuromark.system.sut import InMemoryLibrary
from neuromark.system.track.task import TASK
from neuromark.tasks.base import plan_and_run

ROOT = Path(__file__).resolve().parents[1]
#: (config, sut.options overrides, loadgen overrides): the ESN as shipped (stateful), with
#: per-query resets (a query then costs context + 1 reservoir updates), ASC.
#: Every run sets a low ``expected_latency_s`` (LoadGen pre-generates ``min_duration /
#: expected_latency`` queries: an expected latency above the real one leaves too few, and the
#: run is INVALID for "min duration not met") and a longer untimed warm-up, so that the
#: submission run is not the one that pays for cold caches.
CONFIGS = (("configs/mackey_glass/esn_cpu_singlestream.yaml", {}, {}),
           ("configs/mackey_glass/esn_cpu_singlestream.yaml", {"context": 5}, {"min_query_count": 200}),
           ("configs/acoustic_scenes/asc_cpu_singlestream.yaml", {}, {}))
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


def machine_speed(probe: SpeedProbe, folder: Path) -> None:
    """Per LoadGen run of ``folder``: the speed probe's median over the run's window and
    its ratio to the submission run's, next to the SUT's early-stopping p90 ratio."""
    runs = {"submission": folder / "loadgen/performanceonly"}
    runs.update({p.name: p for p in sorted((folder / "compliance").glob("TEST0*"))})
    figures, timings = {}, probe.timings()  # read once: the file grows by ~1,000 rows/s
    for name, run in runs.items():
        detail = run / "mlperf_log_detail.txt"
        if not detail.is_file():
            continue
        values = parse_detail(detail).values
        es = values.get("early_stopping_latency_ss")
        figures[name] = (median_us(timings, *loadgen_window(values)), es * 1e-6 if es else float("nan"))
    if "submission" not in figures:
        return
    probe_ref, sut_ref = figures["submission"]
    for name, (probe_us, sut_ms) in figures.items():
        print(f"    {name}: probe median {probe_us:.0f} us ({probe_us / probe_ref:.3f}x the "
              f"submission run's), SUT early-stopping p90 {sut_ms:.3f} ms "
              f"({sut_ms / sut_ref:.3f}x)")


def run_config(path: str, options: dict, loadgen: dict, duration: float, out: Path,
               probe: SpeedProbe | None = None) -> None:
    config = load_config(ROOT / path)
    config.data["loadgen"] = {**config.data["loadgen"], "expected_latency_s": EXPECTED_LATENCY_S,
                              **loadgen, "min_duration_s": duration}
    config.data["timing"] = {**config.data.get("timing", {}), "warmup": WARMUP_SAMPLES}
    config.data["sut"]["options"] = {**config.data["sut"].get("options", {}), **options}
    config.data["compliance"] = list(KNOWN_TESTS)  # the retired TEST05 too, as the docs' tables
    start = time.perf_counter()
    tag = Path(path).stem + "".join(f"-{k}{v}" for k, v in options.items())
    res = plan_and_run(TASK, config, out / tag)[0]
    perf = res.details["loadgen"]["PerformanceOnly"]
    p90 = perf["latency_s"]["percentiles_s"]["90"] * 1e3
    es = (perf.get("early_stopping_latency_s") or float("nan")) * 1e3
    print(f"{tag}: submission run {perf['validity']}, {perf['query_count']} queries, "
          f"p90 {p90:.3f} ms, early-stopping p90 estimate {es:.3f} ms "
          f"({time.perf_counter() - start:.0f} s in all)")
    for line in format_verdicts(res.details["compliance"]):
        print(f"  {line}")
    if probe is not None:
        machine_speed(probe, out / tag)


def run_memoiser(duration: float, out: Path) -> None:
    # a low expected latency: the same-sample audit run answers in microseconds, and LoadGen
    # pre-generates min_duration / expected_latency queries (too few: INVALID, min duration)
    settings = LoadGenSettings(scenario="SingleStream", min_query_count=64, min_duration_s=duration,
                               expected_latency_s=1e-5)
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
    parser.add_argument("--pin", type=int, nargs="+", default=None, metavar="CPU",
                        help="run on these CPUs only (sched_setaffinity; e.g. --pin 1)")
    parser.add_argument("--probe", type=int, default=None, metavar="CPU",
                        help="time a fixed workload on this CPU (not one of --pin) during the "
                             "runs and print the machine's speed per LoadGen run")
    args = parser.parse_args()
    if args.probe is not None and args.pin and args.probe in args.pin:
        parser.error("--probe: choose a CPU outside --pin")
    if args.pin:
        os.sched_setaffinity(0, set(args.pin))  # before LoadGen starts its threads
    print(f"CPUs: {sorted(os.sched_getaffinity(0))}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    probe = None
    if args.probe is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        probe = SpeedProbe(args.probe, args.out / "speed_probe.txt")
        probe.start()
    try:
        for path, options, loadgen in CONFIGS:
            run_config(path, options, loadgen, args.duration, args.out, probe)
        run_memoiser(min(args.duration, 1.0), args.out)
    finally:
        if probe is not None:
            probe.stop()


if __name__ == "__main__":
    main()
