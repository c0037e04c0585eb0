"""LoadGen harness overhead and latency agreement (issue 5 targets), printed side by side.

1. Null SUT: per-query wall time of our wrapper (``run_test`` + ``NullSUT``) against bare
   LoadGen with a trivial Python callback (complete at once with an empty response).
   Targets: ratio <= 1.2 and absolute overhead <= 50 µs per query.
2. 1-ms sleeping SUT: our own mean latency (timed inside the SUT) against LoadGen's
   reported mean latency. Target: within 3 %.

Run: ``python bench/loadgen_overhead.py [--queries 20000] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import mlperf_loadgen as lg

from neuromark.system.loadgen import LoadGenSettings, run_test
from neuromark.system.loadgen_log import summarize
from neuromark.system.sut import InMemoryLibrary
from neuromark.system.suts.null import NullSUT
from neuromark.system.suts.sleep import SleepSUT


def settings(queries: int, expected_s: float) -> LoadGenSettings:
    return LoadGenSettings(scenario="SingleStream", min_query_count=queries, max_query_count=queries,
                           min_duration_s=0.0, expected_latency_s=expected_s)


def per_query(log_dir: Path) -> float:
    """Seconds per query as LoadGen measured it (1 / "QPS w/ loadgen overhead")."""
    return 1.0 / summarize(log_dir)["qps"]["with_loadgen_overhead"]


def bare_loadgen(queries: int, log_dir: Path, fast: bool = False) -> tuple[float, float]:
    """(wall s/query, LoadGen s/query) of bare LoadGen with a trivial Python SUT callback,
    through ``ConstructSUT`` (QuerySample objects) or ``ConstructFastSUT`` (plain int lists,
    the API our wrapper uses)."""
    def issue(query_samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, 0, 0) for q in query_samples])

    def fast_issue(ids, indices):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(i, 0, 0) for i in ids])

    log_dir.mkdir(parents=True, exist_ok=True)
    sut = lg.ConstructFastSUT(fast_issue, lambda: None) if fast else lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(1024, 1024, lambda s: None, lambda s: None)
    out = lg.LogOutputSettings()
    out.outdir = str(log_dir)
    log = lg.LogSettings()
    log.log_output = out
    log.enable_trace = False
    from neuromark.system.loadgen import to_test_settings

    ts = to_test_settings(settings(queries, 1e-6), lg)
    start = time.perf_counter()
    lg.StartTestWithLogSettings(sut, qsl, ts, log)
    wall = time.perf_counter() - start
    lg.DestroyQSL(qsl)
    (lg.DestroyFastSUT if fast else lg.DestroySUT)(sut)
    return wall / queries, per_query(log_dir)


def ours_null(queries: int, log_dir: Path) -> tuple[float, float]:
    """The same through ``run_test`` (wall includes our set-up and log parsing)."""
    library = InMemoryLibrary("bench", lambda i: i, 1024)
    start = time.perf_counter()
    run = run_test(NullSUT(), library, settings(queries, 1e-6), log_dir)
    wall = time.perf_counter() - start
    assert run.summary["query_count"] == queries, run.summary["query_count"]
    return wall / queries, per_query(log_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sleep-queries", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare, fast, ours = [], [], []
        for r in range(args.repeats):  # interleaved, so drift hits all alike
            bare.append(bare_loadgen(args.queries, root / f"bare{r}"))
            fast.append(bare_loadgen(args.queries, root / f"fast{r}", fast=True))
            ours.append(ours_null(args.queries, root / f"ours{r}"))
        print(f"null SUT, {args.queries} SingleStream queries x {args.repeats} runs (median)")
        for i, label in ((1, "LoadGen-timed (1/QPS w/ overhead)"), (0, "wall clock incl. set-up, parsing")):
            b = statistics.median(x[i] for x in bare)
            f = statistics.median(x[i] for x in fast)
            o = statistics.median(x[i] for x in ours)
            print(f"  {label}:")
            print(f"    bare LoadGen, ConstructSUT + trivial callback     : {b * 1e6:8.3f} us/query")
            print(f"    bare LoadGen, ConstructFastSUT + trivial callback : {f * 1e6:8.3f} us/query")
            print(f"    neuromark run_test + NullSUT (FastSUT)            : {o * 1e6:8.3f} us/query")
            print(f"    ratio ours/bare      : {o / b:6.3f}   overhead {(o - b) * 1e6:7.3f} us/query")
            print(f"    ratio ours/bare-fast : {o / f:6.3f}   overhead {(o - f) * 1e6:7.3f} us/query"
                  "   (targets: ratio <= 1.2, overhead <= 50 us)")

        sut = SleepSUT(1e-3)
        library = InMemoryLibrary("bench", lambda i: i, 1024)
        run = run_test(sut, library, settings(args.sleep_queries, 1e-3), root / "sleep")
        ours_mean = sut.timer.stats()["inference"]["mean_s"]
        lg_mean = summarize(run.log_dir)["latency_s"]["mean_s"]
        print(f"\n1-ms sleeping SUT, {args.sleep_queries} SingleStream queries")
        print(f"  our mean latency (inside SUT)   : {ours_mean * 1e3:8.4f} ms")
        print(f"  LoadGen mean latency            : {lg_mean * 1e3:8.4f} ms")
        print(f"  ratio ours/LoadGen              : {ours_mean / lg_mean:8.4f}   "
              f"(|1 - ratio| = {abs(1 - ours_mean / lg_mean) * 100:.2f} %, target <= 3 %)")


if __name__ == "__main__":
    main()
