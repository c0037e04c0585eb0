"""An attempt at QOBLIB's open MIS instances (issue 54 item 6): frb53-24-1 (QOBLIB's best 52,
literature 53) and frb59-26-2 (58 vs 59), for a stated budget per method.

    nice python bench/qubo_open_instances.py --budget 60 [--ours neuromark-tabu] [--out DIR]

Methods, each with ``--budget`` seconds of wall-clock per instance, seed ``--seed``:

- ``ours``: our solver (``--ours``, default neuromark-tabu) through ``qubo solve``'s run path;
- ``kamis``: KaMIS ReduMIS (extra ``neuromark[kamis]``), the same path;
- ``online_mis``: KaMIS OnlineMIS (``--methods online_mis``), the same path;
- ``kamis+cpsat``: ReduMIS for half the budget, then OR-Tools CP-SAT (extra
  ``neuromark[exact]``) on the clique model with ReduMIS's set as its solution hint for the
  other half: CP-SAT's search (its LNS workers start from the hint) may extend it, and its
  bound says how far an improvement could go.

Every set found is checked to be independent in the instance as read; sizes are compared with
QOBLIB's best (``library_known.best_known_for``: its solution file and the known-value table,
by content). Sets that beat QOBLIB's best are written as QOBLIB node lists under ``--out``. Wall
times include KaMIS's overruns.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from neuromark.benchmarks.qubo.config import SolverSpec  # noqa: E402
from neuromark.benchmarks.qubo.library import load_instance, write_solution  # noqa: E402
from neuromark.benchmarks.qubo.library_known import best_known_for  # noqa: E402
from neuromark.benchmarks.qubo.objective import is_independent_set  # noqa: E402
from neuromark.benchmarks.qubo.repeat import one_run  # noqa: E402
from neuromark.benchmarks.qubo.task import make_solver  # noqa: E402

#: QOBLIB's two open instances, shipped xz-compressed (their README: source, licence, sha256).
FOLDER = ROOT / "tests" / "fixtures" / "realdata" / "qubo_mis" / "qoblib_open"


def _run(name: str, instance, timeout_s: float, seed: int,  # noqa: ANN001
         options: dict | None = None) -> dict:
    run = one_run(make_solver(SolverSpec(name=name, options=options or {})), instance,
                  timeout_s, seed)
    x = run.pop("x")
    return {"size": run["size"], "feasible": run["feasible"], "wall_s": run["wall_s"], "x": x}


def block_cliques(n: int, edges) -> list[list[int]]:  # noqa: ANN001
    """The partition of the vertices into consecutive blocks of equal size k that are all
    cliques, largest k first (the forced-RB generator numbers each CSP variable's domain
    this way: frb53-24-1 is 53 blocks of 24), or [] when there is none."""
    pairs = {(int(u), int(v)) for u, v in edges.tolist()}
    for k in range(n // 2, 1, -1):
        if n % k:
            continue
        blocks = [list(range(b, b + k)) for b in range(0, n, k)]
        if all((i, j) in pairs for bl in blocks for a, i in enumerate(bl) for j in bl[a + 1:]):
            return blocks
    return []


def combined(instance, budget_s: float, seed: int) -> dict:  # noqa: ANN001
    """ReduMIS for half the budget, then CP-SAT (clique cover plus the block cliques, which
    bound |S| by the block count) hinted with ReduMIS's set for the other half."""
    from neuromark.benchmarks.qubo.solvers.cpsat import build_model, run_cpsat

    start = time.perf_counter()
    first = _run("kamis", instance, budget_s / 2, seed)
    model, xs = build_model(instance.n, instance.edges)
    for block in block_cliques(instance.n, instance.edges):
        model.AddAtMostOne([xs[v] for v in block])
    left = max(budget_s - (time.perf_counter() - start), 1.0)
    found = run_cpsat(model, xs, left, seed, 1, hint=first["x"])
    x = found.x if found.size >= first["size"] else first["x"]
    return {"size": int(x.sum()), "feasible": bool(is_independent_set(instance.edges, x)),
            "wall_s": time.perf_counter() - start, "x": x, "kamis_size": first["size"],
            "cpsat_size": found.size, "cpsat_bound": found.bound, "cpsat_status": found.status}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per method")
    parser.add_argument("--ours", default="neuromark-tabu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, default=FOLDER)
    parser.add_argument("--instances", nargs="+", default=["frb53-24-1", "frb59-26-2"])
    parser.add_argument("--methods", nargs="+", default=["ours", "kamis", "kamis+cpsat"],
                        choices=["ours", "kamis", "online_mis", "kamis+cpsat"])
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for sets that beat QOBLIB's best, and results.json")
    args = parser.parse_args(argv)
    results = []
    for name in args.instances:
        path = args.folder / f"{name}.gph"
        if not path.is_file():  # the shipped copies are xz-compressed
            path = path.with_name(f"{name}.gph.xz")
        instance = load_instance(path)
        known = best_known_for(path, instance)
        for method in args.methods:
            if method == "kamis+cpsat":
                got = combined(instance, args.budget, args.seed)
            elif method == "online_mis":
                got = _run("kamis", instance, args.budget, args.seed, {"algorithm": "online_mis"})
            else:
                got = _run(args.ours if method == "ours" else method, instance, args.budget,
                           args.seed)
            x = got.pop("x")
            assert got["feasible"] == bool(is_independent_set(instance.edges, x))
            row = {"instance": name, "n": instance.n, "m": len(instance.edges),
                   "method": args.ours if method == "ours" else method, "budget_s": args.budget,
                   "qoblib_best": known.value if known else None,
                   "literature": known.literature if known else None, **got}
            results.append(row)
            print(json.dumps(row), flush=True)
            if args.out and known and got["feasible"] and got["size"] > known.value:
                write_solution(args.out / f"{name}.{row['method']}.sol", x,
                               comment=f"{name}: {row['method']}, {args.budget:g} s, seed "
                                       f"{args.seed}; beats QOBLIB's best {known.value}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print("\n| instance | QOBLIB best | literature | method | budget (s) | best |S| | wall (s) |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        extra = (f" (ReduMIS {r['kamis_size']}, CP-SAT {r['cpsat_size']}, bound "
                 f"{r['cpsat_bound']})" if "cpsat_bound" in r else "")
        print(f"| {r['instance']} | {r['qoblib_best']} | {r['literature']} | {r['method']} | "
              f"{r['budget_s']:g} | {r['size']}{'' if r['feasible'] else ' (NOT independent)'}"
              f"{extra} | {r['wall_s']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
