"""The BKS table a QUBO sweep uses, and ``bks: auto``: missing rows computed before the sweep.

Which table (:func:`sweep_table`): the config's ``bks:`` file; else the user's table that
``neuromark qubo bks`` keeps in the cache folder (``<cache>/qubo/bks.csv``) when it exists;
else the shipped table. So the advice of the "no best-known solution" error (run ``neuromark
qubo bks ...``) works for the next run with the same cache folder.

With ``bks: auto`` the workloads missing from that table are computed before any solving
(:func:`fill_missing`), within ``bks_budget_s`` seconds in all: exact optima up to
:data:`EXACT_MAX` nodes first, then an even share of what is left for each larger workload
(``neuromark-sa``, at least :data:`MIN_HEURISTIC_S` s each). Each row is written to the
user's table as soon as it is found, with its provenance (method, solver, version, budget,
date, solution); a budget too small to finish raises before the sweep, naming what is
missing and what to raise.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from neuromark.benchmarks.qubo.bks import BKS_PATH, BKSRow, BKSTable, Key, load_bks
from neuromark.benchmarks.qubo.bks_runs import best_known
from neuromark.config import ConfigFile, resolve_path
from neuromark.errors import ConfigError, NeuromarkError

AUTO = "auto"
EXACT_MAX = 100  # as ``neuromark qubo bks --exact-max``
MIN_HEURISTIC_S = 0.1  # below this a heuristic row is not worth calling best-known


def user_table_path(cache: Path) -> Path:
    """``<cache>/qubo/bks.csv``: the table ``neuromark qubo bks`` and ``bks: auto`` write."""
    return Path(cache) / "qubo" / "bks.csv"


def open_table(path: Path) -> BKSTable:
    """The table at ``path``, or (when absent) a copy of the shipped one that saves to
    ``path``; nothing is written here."""
    table = load_bks(path if path.is_file() else BKS_PATH)
    return BKSTable(list(table.rows.values()), path=path)


def workload_keys(cfg: Any) -> list[Key]:
    """(n, density, seed) of every workload a QUBO config's gap scenarios solve."""
    if not (cfg.fixed_timeout or cfg.time_to_solution) or cfg.workloads is None:
        return []
    w = cfg.workloads
    return [(int(n), float(d), int(g)) for n in w.sizes for d in w.densities for g in w.seeds]


def sweep_table(cfg: Any, config: ConfigFile, cache: Path) -> tuple[BKSTable, list[Key]]:
    """The sweep's table and the workloads missing from it (computed later only with
    ``bks: auto``; otherwise a missing one is a :class:`ConfigError` naming ``workloads``
    and the command that computes it)."""
    auto = cfg.bks == AUTO
    if cfg.bks_budget_s is not None and not auto:
        raise ConfigError(f"{config.where(('bks_budget_s',))}: bks_budget_s: only with bks: auto")
    user = user_table_path(cache)
    try:
        if auto:
            table = open_table(user)
        else:
            table = load_bks(resolve_path(cfg.bks, config) if cfg.bks else
                             user if user.is_file() else None)
    except NeuromarkError as exc:
        raise ConfigError(f"{config.where(('bks',))}: bks: {exc}") from None
    missing = [k for k in workload_keys(cfg) if k not in table]
    if missing and not auto:
        n, d, g = missing[0]
        raise ConfigError(
            f"{config.where(('workloads',))}: workloads: no best-known solution for n={n}, "
            f"density={d:g}, seed={g} in {table.path}; compute it with `neuromark qubo bks "
            f"--sizes {n} --densities {d:g} --seeds {g}` (same --cache-dir as the run), set "
            f"'bks: auto' to compute missing rows before the sweep, or set 'bks' to a table "
            f"with it")
    return table, missing


def fill_missing(table: BKSTable, keys: Iterable[Key], budget_s: float, *, where: str = "bks",
                 exact_max: int = EXACT_MAX, solver_seed: int = 0,
                 report: Callable[[BKSRow], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> list[BKSRow]:
    """Compute a row for each of ``keys`` within ``budget_s`` seconds in all and save each
    to ``table.path`` as it is found; returns the new rows. Raises :class:`ConfigError`
    (prefixed by ``where``) before any work when the larger workloads would get less than
    :data:`MIN_HEURISTIC_S` s each, and between rows when the exact ones used the budget up
    (rows found so far are kept)."""
    keys = list(keys)
    exact = [k for k in keys if k[0] <= exact_max]
    heuristic = [k for k in keys if k[0] > exact_max]

    def short(done: list[BKSRow], why: str) -> ConfigError:
        left = [k for k in keys if k not in {r.key for r in done}]
        shown = ", ".join(f"n={n} d={d:g} seed={s}" for n, d, s in left[:4])
        return ConfigError(f"{where}: a budget of {budget_s:g} s is too small to compute the "
                           f"{len(keys)} missing best-known solution(s): {why}; still missing "
                           f"{len(left)} ({shown}{', ...' if len(left) > 4 else ''}); raise "
                           f"bks_budget_s or run `neuromark qubo bks` for them"
                           + (f" ({len(done)} row(s) found were saved in {table.path})"
                              if done else ""))

    if heuristic and budget_s / len(heuristic) < MIN_HEURISTIC_S:
        raise short([], f"{len(heuristic)} workload(s) above {exact_max} nodes need at least "
                        f"{MIN_HEURISTIC_S:g} s of solver time each")
    start, rows = clock(), []

    def keep(row: BKSRow) -> None:
        table.offer(row)
        table.save()
        rows.append(row)
        if report is not None:
            report(row)

    for n, d, s in exact:
        if clock() - start >= budget_s:
            raise short(rows, "the exact optima used it up")
        keep(best_known(n, d, s, budget_s=budget_s, exact_max=exact_max, solver_seed=solver_seed))
    if heuristic:
        share = (budget_s - (clock() - start)) / len(heuristic)
        if share < MIN_HEURISTIC_S:
            raise short(rows, f"after the exact optima {share:.3g} s were left for each "
                              f"workload above {exact_max} nodes (at least {MIN_HEURISTIC_S:g} s)")
        for n, d, s in heuristic:
            keep(best_known(n, d, s, budget_s=share, exact_max=exact_max, solver_seed=solver_seed))
    return rows
