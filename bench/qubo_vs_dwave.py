"""neuromark's QUBO annealer vs D-Wave Tabu on MIS workloads, side by side in one run.

Target (issue 6), on 1000 nodes / 5% density, graph seeds 0-4:
- at timeouts 0.01, 0.1 and 1 s, our mean BKS-gap <= Tabu's (one read, same timeout);
- our median time to reach gap <= 0.05 is at least 2x shorter than Tabu's with
  ``energy_threshold``.

Both solvers get the workload loaded before the clock starts (our numba kernels compiled,
Tabu's BQM built); runs alternate ours / Tabu per seed so machine load hits both alike.
BKS targets come from the shipped table (``neuromark qubo bks``).

Usage: python bench/qubo_vs_dwave.py [--n 1000] [--density 0.05] [--seeds 0 1 2 3 4]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np


def main() -> None:
    from neuromark.benchmarks.qubo import bks_gap, load_bks, mis_workload
    from neuromark.benchmarks.qubo.gap import cost_at_gap
    from neuromark.benchmarks.qubo.solvers.anneal import Annealer
    from neuromark.benchmarks.qubo.solvers.dwave import DWaveTabu

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--timeouts", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    ap.add_argument("--tts-gap", type=float, default=0.05)
    ap.add_argument("--cap", type=float, default=10.0, help="time-to-solution cap (s)")
    ap.add_argument("--bks", default=None,
                    help="BKS CSV for the targets (default: the shipped table); e.g. "
                         "tests/data/reference/qubo_mis_bks.csv for NeuroBench's values")
    args = ap.parse_args()

    table = load_bks(args.bks)
    loads = {}
    for s in args.seeds:
        w = mis_workload(args.n, args.density, s)
        ours, tabu = Annealer(), DWaveTabu()
        t0 = time.perf_counter()
        ours.prepare(w.Q)
        t1 = time.perf_counter()
        tabu.prepare(w.Q)
        t2 = time.perf_counter()
        loads[s] = (w, ours, tabu, table.target(args.n, args.density, s), t1 - t0, t2 - t1)
    print(f"MIS QUBO n={args.n} density={args.density} graph seeds {args.seeds}; "
          f"BKS ({table.path}): {[loads[s][3] for s in args.seeds]}")
    print(f"load into SUT (untimed): ours {np.mean([v[4] for v in loads.values()]):.3f} s "
          f"(incl. numba warm-up), Tabu {np.mean([v[5] for v in loads.values()]):.3f} s\n")

    print(f"{'timeout_s':>9} {'seed':>4} {'ours_cost':>9} {'tabu_cost':>9} {'ours_gap':>9} "
          f"{'tabu_gap':>9} {'ours_wall':>9} {'tabu_wall':>9}")
    summary = []
    for t in args.timeouts:
        gaps_o, gaps_t, wall_o, wall_t = [], [], [], []
        for s in args.seeds:
            w, ours, tabu, bks, *_ = loads[s]
            start = time.perf_counter()
            ro = ours.solve(w.Q, t, s)
            wo = time.perf_counter() - start
            start = time.perf_counter()
            rt = tabu.solve(w.Q, t, s)
            wt = time.perf_counter() - start
            go, gt = bks_gap(ro.cost, bks), bks_gap(rt.cost, bks)
            gaps_o.append(go)
            gaps_t.append(gt)
            wall_o.append(wo)
            wall_t.append(wt)
            print(f"{t:9g} {s:4d} {ro.cost:9g} {rt.cost:9g} {go:9.4f} {gt:9.4f} {wo:9.4f} {wt:9.4f}")
        summary.append((t, np.mean(gaps_o), np.mean(gaps_t), np.median(gaps_o), np.median(gaps_t),
                        sum(o < g for o, g in zip(gaps_o, gaps_t)),
                        sum(o > g for o, g in zip(gaps_o, gaps_t)),
                        np.mean(wall_o), np.mean(wall_t)))

    print(f"\ntime to gap <= {args.tts_gap} (cap {args.cap:g} s; ours: target stop, "
          f"Tabu: energy_threshold)")
    print(f"{'seed':>4} {'threshold':>9} {'ours_s':>9} {'tabu_s':>9} {'ours_cost':>9} {'tabu_cost':>9}")
    tts_o, tts_t = [], []
    for s in args.seeds:
        w, ours, tabu, bks, *_ = loads[s]
        thr = math.floor(cost_at_gap(bks, args.tts_gap) + 1e-9)
        start = time.perf_counter()
        ro = ours.solve(w.Q, args.cap, s, target=thr)
        wo = time.perf_counter() - start
        start = time.perf_counter()
        rt = tabu.solve(w.Q, args.cap, s, target=thr)
        wt = time.perf_counter() - start
        tts_o.append(wo if ro.cost <= thr else math.inf)
        tts_t.append(wt if rt.cost <= thr else math.inf)
        print(f"{s:4d} {thr:9g} {tts_o[-1]:9.4f} {tts_t[-1]:9.4f} {ro.cost:9g} {rt.cost:9g}")

    print("\nsummary (BKS-gap, lower is better; wins = seeds where one is strictly better; "
          "wall = mean actual seconds used)")
    print(f"{'timeout_s':>9} {'ours_mean':>9} {'tabu_mean':>9} {'target_met':>10} {'ours_med':>9} "
          f"{'tabu_med':>9} {'wins o:t':>8} {'ours_wall':>9} {'tabu_wall':>9}")
    for t, go, gt, mo_, mt_, wo_n, wt_n, wo, wt in summary:
        print(f"{t:9g} {go:9.4f} {gt:9.4f} {str(go <= gt):>10} {mo_:9.4f} {mt_:9.4f} "
              f"{f'{wo_n}:{wt_n}':>8} {wo:9.4f} {wt:9.4f}")
    mo, mt = statistics.median(tts_o), statistics.median(tts_t)
    missed_o = sum(math.isinf(v) for v in tts_o)
    missed_t = sum(math.isinf(v) for v in tts_t)
    print(f"not reached within the {args.cap:g} s cap: ours {missed_o}/{len(tts_o)}, "
          f"Tabu {missed_t}/{len(tts_t)}")
    if math.isinf(mo):
        print(f"median time to gap <= {args.tts_gap}: ours not reached within the cap")
    elif math.isinf(mt):
        print(f"median time to gap <= {args.tts_gap}: ours {mo:.4f} s, Tabu not reached within "
              f"{args.cap:g} s; ratio Tabu/ours > {args.cap / mo:.2f}x (target >= 2x: "
              f"{args.cap / mo >= 2})")
    else:
        print(f"median time to gap <= {args.tts_gap}: ours {mo:.4f} s, Tabu {mt:.4f} s, "
              f"ratio Tabu/ours = {mt / mo:.2f}x (target >= 2x: {mt / mo >= 2})")

if __name__ == "__main__":
    main()
