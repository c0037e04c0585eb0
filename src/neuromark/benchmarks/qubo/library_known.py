"""Best-known values of library instances, with where each comes from (``qubo library``).

One entry point, :func:`best_known_for` (``path -> BestKnown | None``). Two sources, both
tied to the instance's content, never to its file name alone:

- **the QOBLIB solution file** beside the instance or in QOBLIB's sibling ``solutions/``
  folder (``NAME.opt.sol`` / ``NAME.bst.sol`` / ``NAME.sol``, the layout of QOBLIB's
  ``07-independentset``): a node list whose size is the value only after it is checked to
  be an independent set of this very instance (a solution file of another graph of the same
  name is refused, not believed); ``.opt.sol`` marks a proven optimum (QOBLIB's naming);
- **the known-value table** (:func:`~.known.known_value`, ``known_optima.csv``), matched by
  the instance's fingerprint: QOBLIB's results table (its value, the ``*`` proven marks and
  the literature's best), or values proven or seen here.

The larger value wins (a witness, the solution file, on a tie); it is proven when a source
of that value says so. A file named like a row of the table whose content differs gets no
value from that row, and :attr:`BestKnown.notes` (or :func:`mismatch_note`) says so.

Provenance vocabulary (the ``best_known_source`` column of ``qubo library``):
:data:`SOLUTION_FILE`, :data:`QOBLIB_TABLE`, ``proven by <solver> here``
(:func:`proven_here`) and ``best seen by <solver>`` (:func:`best_seen_by`); the file or the
table row is in :attr:`BestKnown.reference`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

#: Solution-file suffixes, strongest first.
SOLUTION_SUFFIXES = (".opt.sol", ".bst.sol", ".sol")
#: Source words: a QOBLIB solution file checked on this instance.
SOLUTION_FILE = "QOBLIB solution file"
#: Source words: QOBLIB's results table (through ``known_optima.csv``, by content).
QOBLIB_TABLE = "QOBLIB table"


def proven_here(solver: str) -> str:
    """Source words of a value an exact solver proved optimal here."""
    return f"proven by {solver} here"


def best_seen_by(solver: str) -> str:
    """Source words of the best value a named solver found (not proven)."""
    return f"best seen by {solver}"


def table_source(source: str) -> str:
    """The words of a ``known_optima.csv`` source (``qoblib``, ``exact:<solver>``,
    ``best-seen:<solver>``)."""
    kind, _, solver = source.partition(":")
    if kind == "exact":
        return proven_here(solver)
    if kind == "best-seen":
        return best_seen_by(solver)
    return QOBLIB_TABLE


@dataclass(frozen=True)
class BestKnown:
    """A best-known MIS size and its provenance.

    Attributes:
        value: the best-known |S|.
        source: where it comes from, in the vocabulary of the module docstring.
        proven: True when a source of this value states it optimal.
        literature: the literature's best |S| in QOBLIB's table (may exceed ``value``: an open
            instance), or None.
        solution: the solution file, when the value comes from one.
        reference: the file's name, or the table row and where to read it.
        notes: sentences about the sources (a name that matches another graph's row, sources
            that disagree).
    """

    value: int
    source: str
    proven: bool
    literature: int | None = None
    solution: Path | None = None
    reference: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


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


def mismatch_note(instance: Any) -> str | None:
    """The sentence of :func:`~.known.name_mismatch` (a file named like a row of the table
    whose content differs: that row's value is not used), or None."""
    from neuromark.benchmarks.qubo.known import name_mismatch

    return name_mismatch(instance)


def best_known_for(path: str | Path, instance: Any = None) -> BestKnown | None:
    """The best-known |S| of the MIS instance file ``path`` and its source, or None.

    ``instance`` (the loaded :class:`~.library.Instance`, optional) is read from ``path``
    when not given; a solution file that is not an independent set of it is a
    :class:`~neuromark.errors.DataError` naming the file.
    """
    from neuromark.benchmarks.qubo.known import known_value
    from neuromark.benchmarks.qubo.library import load_instance, read_solution
    from neuromark.benchmarks.qubo.repeat import check_optimum

    path = Path(path)
    instance = instance if instance is not None else load_instance(path)
    notes = [note] if (note := mismatch_note(instance)) else []
    row = known_value(instance)
    literature = row.literature if row is not None else None
    found: list[BestKnown] = []
    sol = solution_file(path)
    if sol is not None:
        x = read_solution(sol, instance.n)
        check_optimum(instance, x, str(sol))
        found.append(BestKnown(int(x.sum()), SOLUTION_FILE, sol.name.endswith(".opt.sol"),
                               literature, sol, sol.name))
    if row is not None:
        found.append(BestKnown(int(row.value), table_source(row.source), row.proven, literature,
                               None, f"known_optima.csv row {row.instance}"
                               + (f": {row.reference}" if row.reference else "")))
    if not found:
        return None
    best = max(found, key=lambda k: k.value)  # the first (the solution file) on a tie
    if len(found) == 2 and found[0].value != found[1].value:
        other = found[1] if best is found[0] else found[0]
        notes.append(f"{path}: {other.source} ({other.reference}) gives |S| = {other.value}, "
                     f"{best.source} ({best.reference}) {best.value}: the larger is used"
                     + ("; a PROVEN optimum was beaten, so one of them is wrong"
                        if other.proven else ""))
    proven = any(k.proven for k in found if k.value == best.value)
    return replace(best, proven=proven, notes=tuple(notes))
