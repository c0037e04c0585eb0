"""Best-known values of library instances, with where each comes from (``qubo library``).

One entry point, :func:`best_known_for` (``path -> BestKnown | None``), so that another
known-value source (a table matched by content fingerprint) can replace it in one place.
Sources, in QOBLIB's layout (``instances/NAME.gph`` beside ``solutions/``, or the solution
file in the instance's own folder):

- **the QOBLIB solution file** ``NAME.opt.sol`` / ``NAME.bst.sol`` / ``NAME.sol``: a node
  list; its size is the value only after it is checked to be an independent set of this
  very instance (so a solution file of another graph of the same name is refused, not
  believed); ``.opt.sol`` marks a proven optimum (QOBLIB's naming);
- **QOBLIB's results table** (``solutions/README.md``, "Results": instance, "Our Solution"
  with ``*`` for proven optima, "Best Solution in Literature", citation): the value when
  no solution file is there, and always the literature's best and the proven mark.

QOBLIB's table at HEAD de698d4 spells two instance names differently from their files
(``mammalia-kangoroo-interactions``, ``socfb-rtinity100``); :data:`TABLE_ALIASES` maps them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from neuromark.errors import DataError

#: Names in QOBLIB's results table -> the instance file's name (typos in the table).
TABLE_ALIASES = {"mammalia-kangoroo-interactions": "mammalia-kangaroo-interactions",
                 "socfb-rtinity100": "socfb-trinity100"}

#: Solution-file suffixes, strongest first.
SOLUTION_SUFFIXES = (".opt.sol", ".bst.sol", ".sol")


@dataclass(frozen=True)
class TableRow:
    """One row of QOBLIB's results table: its best, whether proven, the literature's best."""

    ours: int
    proven: bool
    literature: int | None
    citation: str


@dataclass(frozen=True)
class BestKnown:
    """A best-known MIS size and its provenance.

    Attributes:
        value: the best-known |S|.
        source: where it comes from ("QOBLIB solution file karate.opt.sol", "QOBLIB results
            table (solutions/README.md)").
        proven: True when the source states it optimal.
        literature: the literature's best |S| in QOBLIB's table (may exceed ``value``: an open
            instance), or None.
        solution: the solution file, when the value comes from one.
    """

    value: int
    source: str
    proven: bool
    literature: int | None = None
    solution: Path | None = None


def _folders(path: Path) -> list[Path]:
    """The instance's folder and QOBLIB's sibling ``solutions/`` folder."""
    return [path.parent, path.parent.parent / "solutions"]


def solution_file(path: str | Path) -> Path | None:
    """The solution file of instance ``path`` (see the module docstring), or None."""
    from neuromark.benchmarks.qubo.library import instance_name

    path = Path(path)
    name = instance_name(path)
    for folder in _folders(path):
        for suffix in SOLUTION_SUFFIXES:
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def _cell_int(text: str, where: str) -> int | None:
    text = text.strip().replace("\\*", "").replace("*", "")
    if not text:
        return None
    if not re.fullmatch(r"\d+", text):
        raise DataError(f"{where}: expected a whole number, got {text!r}")
    return int(text)


@lru_cache(maxsize=16)
def _read_table(readme: Path, stamp: float) -> dict[str, TableRow]:
    """The rows of the table whose header reads ``| Instance | Our Solution | ...`` (QOBLIB's
    "Results"); a README without one gives no rows (it is not QOBLIB's table)."""
    rows: dict[str, TableRow] = {}
    in_table = False
    for number, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), 1):
        if not line.lstrip().startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].lower() == "instance" and \
                cells[1].lower() == "our solution":
            in_table = True
            continue
        if not in_table or set(cells[0]) <= set(":- "):
            continue
        where = f"{readme}:{number}"
        ours = _cell_int(cells[1], where)
        if ours is None:
            continue
        name = TABLE_ALIASES.get(cells[0], cells[0])
        rows[name] = TableRow(ours=ours, proven="*" in cells[1],
                              literature=_cell_int(cells[2], where),
                              citation=cells[3] if len(cells) > 3 else "")
    return rows


def results_table(path: str | Path) -> tuple[Path, dict[str, TableRow]] | None:
    """(README path, rows by instance name) of QOBLIB's results table near ``path``."""
    for folder in _folders(Path(path)):
        readme = folder / "README.md"
        if readme.is_file():
            rows = _read_table(readme, readme.stat().st_mtime)
            if rows:
                return readme, rows
    return None


def best_known_for(path: str | Path, instance: Any = None) -> BestKnown | None:
    """The best-known |S| of the MIS instance file ``path`` and its source, or None.

    ``instance`` (the loaded :class:`~.library.Instance`, optional) is read from ``path``
    when not given; a solution file that is not an independent set of it is a
    :class:`DataError` naming the file.
    """
    from neuromark.benchmarks.qubo.library import instance_name, load_instance, read_solution
    from neuromark.benchmarks.qubo.repeat import check_optimum

    path = Path(path)
    name = instance_name(path)
    table = results_table(path)
    row = table[1].get(name) if table else None
    literature = row.literature if row else None
    sol = solution_file(path)
    if sol is not None:
        instance = instance if instance is not None else load_instance(path)
        x = read_solution(sol, instance.n)
        check_optimum(instance, x, str(sol))
        proven = sol.name.endswith(".opt.sol") or bool(row and row.proven and
                                                       row.ours == int(x.sum()))
        return BestKnown(int(x.sum()), f"QOBLIB solution file {sol.name}", proven, literature,
                         sol)
    if row is not None and table is not None:
        return BestKnown(row.ours, f"QOBLIB results table ({table[0].parent.name}/README.md)",
                         row.proven, literature)
    return None
