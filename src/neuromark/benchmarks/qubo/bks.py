"""The best-known-solution (BKS) table, with provenance per row.

The shipped table ``bks.csv`` (beside this module) has one row per MIS workload:

``num_vertices,density,random_seed,cost,method,solver,version,solver_seed,budget_s,date,solution_hex,fingerprint,source``

- ``method``: ``exact`` (proved optimal by :func:`~neuromark.benchmarks.qubo.exact.exact_mis`)
  or ``heuristic`` (best found by a long solver run of ``budget_s`` seconds);
- ``solution_hex``: the solution vector, ``numpy.packbits`` as hex, so that every row can be
  re-checked: its energy must equal ``cost``;
- ``fingerprint``: the workload graph's content (:mod:`.fingerprint`): a row is used only for
  the graph it was computed on (:func:`check_row` compares it with the generated graph's, so a
  changed generator cannot silently reuse old values);
- ``source``: ``exact:<solver>`` (proven optimal) or ``best-seen:<solver>`` (the named solver's
  best, not proven), as in the known-value table (:mod:`.known`).

A row is only ever replaced by a better cost (:meth:`BKSTable.offer`). Files in the NeuroBench
format (``num_vertices,density,random_seed,c_optimal``) load too (no provenance, no solution).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import string
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from neuromark.benchmarks.qubo.exact import exact_mis
from neuromark.errors import DataError
from neuromark.io_atomic import write_text_atomic

BKS_PATH = Path(__file__).with_name("bks.csv")
EXACT_BELOW = 50  # rows of workloads smaller than this are checked against the exact optimum
#: A graph fingerprint (:mod:`.fingerprint`; kept here so that reading a table loads no scipy).
FINGERPRINT = re.compile(r"^graph:n=\d+:m=\d+:sha256=[0-9a-f]{64}$")

Key = tuple[int, float, int]


@dataclass(frozen=True)
class BKSRow:
    """One BKS row; ``key`` = (num_vertices, density, random_seed)."""

    num_vertices: int
    density: float
    random_seed: int
    cost: float
    method: str = ""
    solver: str = ""
    version: str = ""
    solver_seed: str = ""
    budget_s: str = ""
    date: str = ""
    solution_hex: str = ""
    fingerprint: str = ""
    source: str = ""

    @property
    def key(self) -> Key:
        return (self.num_vertices, self.density, self.random_seed)

    def solution(self) -> np.ndarray | None:
        """The stored solution as int8 (num_vertices,), or None when the row has none."""
        if not self.solution_hex:
            return None
        raw = np.frombuffer(bytes.fromhex(self.solution_hex), dtype=np.uint8)
        bits = np.unpackbits(raw)
        if len(bits) < self.num_vertices or bits[self.num_vertices:].any():
            raise DataError(f"BKS row {self.key}: solution_hex has {len(bits)} bits, expected "
                            f"{self.num_vertices} (padded to a whole byte)")
        return bits[: self.num_vertices].astype(np.int8)


def encode_solution(x: np.ndarray) -> str:
    """``numpy.packbits(x)`` as a hex string."""
    return np.packbits(np.asarray(x, dtype=np.uint8)).tobytes().hex()


class BKSTable:
    """BKS rows keyed by (num_vertices, density, random_seed)."""

    def __init__(self, rows: list[BKSRow] | None = None, path: Path | None = None) -> None:
        self.rows: dict[Key, BKSRow] = {r.key: r for r in rows or []}
        self.path = path

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, n: int, density: float, seed: int) -> BKSRow:
        """The row of workload (n, density, seed); :class:`DataError` when absent."""
        key = (int(n), float(density), int(seed))
        if key not in self.rows:
            raise DataError(f"{self.path or 'BKS table'}: no best-known solution for workload "
                            f"n={n}, density={density}, seed={seed}; compute one with "
                            f"`neuromark qubo bks --sizes {n} --densities {density} --seeds {seed}`")
        return self.rows[key]

    def target(self, n: int, density: float, seed: int) -> float:
        """The BKS cost of workload (n, density, seed)."""
        return self.get(n, density, seed).cost

    def offer(self, row: BKSRow) -> bool:
        """Insert ``row`` if its workload is new or its cost is strictly better; True if kept."""
        old = self.rows.get(row.key)
        if old is not None and row.cost >= old.cost:
            return False
        self.rows[row.key] = row
        return True

    def to_csv(self) -> str:
        out = io.StringIO()
        names = [f.name for f in fields(BKSRow)]
        writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        for key in sorted(self.rows):
            row = self.rows[key]
            writer.writerow({k: getattr(row, k) for k in names} |
                            {"density": f"{row.density:g}", "cost": f"{row.cost:g}"})
        return out.getvalue()

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the table as CSV atomically (temp file, fsync, usual permissions, rename) to
        ``path`` or the table's own path; there is no default (the shipped table is read)."""
        target = path or self.path
        if target is None:
            raise DataError("BKS table: no path to save it to (the shipped table is never "
                            "written implicitly)")
        return write_text_atomic(Path(target), self.to_csv())


def load_bks(path: str | os.PathLike[str] | None = None) -> BKSTable:
    """Read a BKS table (ours, or the NeuroBench ``c_optimal`` format); default: shipped one."""
    file = Path(path) if path is not None else BKS_PATH
    if not file.is_file():
        raise DataError(f"BKS file not found: {file}")
    rows = []
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{file}: a BKS table is UTF-8 text (byte 0x{file.read_bytes()[exc.start]:02x} "
                        f"at offset {exc.start} is not)") from None
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        cols = set(reader.fieldnames or ())
        cost_col = "cost" if "cost" in cols else "c_optimal" if "c_optimal" in cols else None
        need = {"num_vertices", "density", "random_seed"}
        if cost_col is None or not need <= cols:
            raise DataError(f"{file}: expected columns num_vertices, density, random_seed and "
                            f"cost (or c_optimal), got {sorted(cols)}")
        extra = [f.name for f in fields(BKSRow)][4:]
        for line, rec in enumerate(reader, start=2):
            try:
                row = BKSRow(int(rec["num_vertices"]), float(rec["density"]),
                             int(rec["random_seed"]), float(rec[cost_col]),
                             **{k: rec.get(k) or "" for k in extra})
            except (TypeError, ValueError) as exc:
                raise DataError(f"{file}:{line}: bad BKS row {rec}: {exc}") from None
            _check_types(row, f"{file}:{line}")
            if row.key in {r.key for r in rows}:
                raise DataError(f"{file}:{line}: duplicate row for workload {row.key}")
            rows.append(row)
    return BKSTable(rows, file)


def _check_types(row: BKSRow, where: str) -> None:
    """A row's values in their ranges: num_vertices >= 1, density in (0, 1], random_seed in
    [0, 2^32), a finite cost, solution_hex hex digits; :class:`DataError` naming the column."""
    bad = next(((col, why) for col, ok, why in (
        ("num_vertices", row.num_vertices >= 1, "a node count >= 1"),
        ("density", 0 < row.density <= 1, "an edge density in (0, 1]"),
        ("random_seed", 0 <= row.random_seed < 2 ** 32, "a graph seed in [0, 2^32)"),
        ("cost", math.isfinite(row.cost), "a finite number"),
        ("solution_hex", all(c in string.hexdigits for c in row.solution_hex) and
         len(row.solution_hex) % 2 == 0, "hex digits, two per byte"),
        ("fingerprint", not row.fingerprint or FINGERPRINT.match(row.fingerprint) is not None,
         "graph:n=N:m=M:sha256=HEX (or empty)"),
        ("source", not row.source or re.match(r"^(exact|best-seen):\S+$", row.source) is not None,
         "exact:<solver> or best-seen:<solver> (or empty)")) if not ok), None)
    if bad is not None:
        raise DataError(f"{where}: BKS column {bad[0]} = {getattr(row, bad[0])!r}: expected {bad[1]}")


def check_row(row: BKSRow, workload: object | None = None, where: str = "BKS") -> None:
    """Check a row against its workload; :class:`DataError` when they contradict.

    A row with a fingerprint must be the workload graph's (identity by content).
    A cost must lie in [-n, 0] (the empty set costs 0, no set beats -n); a stored solution
    must have the row's cost; below :data:`EXACT_BELOW` nodes the cost must equal the exact
    optimum (a lower cost is impossible, a higher one is not the best known).
    """
    from neuromark.benchmarks.qubo.fingerprint import graph_fingerprint
    from neuromark.benchmarks.qubo.objective import energy
    from neuromark.benchmarks.qubo.workloads import mis_workload

    n = row.num_vertices
    tag = f"{where}: row n={n}, density={row.density:g}, seed={row.random_seed}"
    if not -n <= row.cost <= 0:
        raise DataError(f"{tag}: cost {row.cost:g} is outside [-{n}, 0], impossible for an "
                        f"MIS workload of {n} nodes")
    w = workload or mis_workload(n, row.density, row.random_seed)
    if row.fingerprint and row.fingerprint != str(fp := graph_fingerprint(w.n, w.edges)):
        raise DataError(f"{tag}: the row was computed on another graph than this workload "
                        f"({row.fingerprint.split(':sha256=')[0]} vs the generated {fp.describe()}, "
                        f"fingerprints differ): its cost is not used; recompute it with `neuromark "
                        f"qubo bks`")
    x = row.solution()
    if x is not None and energy(w.Q, x) != row.cost:
        raise DataError(f"{tag}: stored solution has cost {energy(w.Q, x):g}, row says "
                        f"{row.cost:g}")
    if n < EXACT_BELOW:
        opt = energy(w.Q, exact_mis(n, w.edges))
        if row.cost != opt:
            reason = "below" if row.cost < opt else "above"
            raise DataError(f"{tag}: cost {row.cost:g} is {reason} the exact optimum {opt:g}")

