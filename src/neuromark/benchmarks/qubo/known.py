"""Known optima and best-known values of library instances, matched by content.

The table (:data:`KNOWN_VALUES`, ``known_optima.csv``) has one row per instance, keyed by its
fingerprint (:mod:`.fingerprint`), never its file name: ``instance`` (the library's name, for
messages only), ``n``, ``m``, ``fingerprint``, ``value`` (the objective in the library's
sense: ``|S|`` of an MIS instance, else the minimised energy ``x^T Q x + offset``, or MQLib's
maximised ``x^T W x``), ``proven`` (true: an optimum; false: the best known), ``source`` and
``reference``. ``source`` says where the value comes from:

- ``qoblib``: QOBLIB's results table (``07-independentset/solutions/README.md``, ZIB-AOPT/QOBLIB;
  proven where it marks the value with ``*``);
- ``exact:<solver>``: proven optimal here by the named exact solver (within a stated limit);
- ``best-seen:<solver>``: the best value the named solver found here (not proven).

A file whose name matches a row but whose content does not (an empty graph saved as
``karate.gph``) gets no value; :func:`name_mismatch` says so, so that the caller can print it.
"""

from __future__ import annotations

import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuromark.benchmarks.qubo.fingerprint import Fingerprint, instance_fingerprint
from neuromark.benchmarks.qubo.library import load_instance
from neuromark.errors import DataError

#: The table shipped with neuromark.
KNOWN_VALUES = Path(__file__).with_name("known_optima.csv")
#: Its columns, in order.
COLUMNS = ("instance", "n", "m", "fingerprint", "value", "proven", "source", "reference")
SOURCES = re.compile(r"^(qoblib|exact:\S+|best-seen:\S+)$")
#: Names QOBLIB's results table spells otherwise than its instance files (de698d4).
QOBLIB_SPELLINGS = {"mammalia-kangoroo-interactions": "mammalia-kangaroo-interactions",
                    "socfb-rtinity100": "socfb-trinity100"}


@dataclass(frozen=True)
class KnownValue:
    """One row of the table: ``value`` in the library's sense (see the module docstring),
    ``proven`` (an optimum, not only the best known), ``source`` (``qoblib``,
    ``exact:<solver>``, ``best-seen:<solver>``), ``reference`` (where to read it),
    ``instance`` (the table's name for it) and its ``fingerprint``."""

    value: float
    source: str
    proven: bool
    instance: str
    fingerprint: str
    reference: str = ""

    @property
    def literature(self) -> int | None:
        """The literature's best of a ``qoblib`` row (QOBLIB's "Best Solution in Literature":
        the ``literature N`` of ``reference`` where :func:`qoblib_rows` wrote it, because it
        differs, else the value); None for other sources."""
        if self.source != "qoblib":
            return None
        stated = re.search(r"\bliterature (\d+)\b", self.reference)
        return int(stated.group(1)) if stated else int(self.value)

    def energy(self, instance: Any) -> float:
        """The value as ``instance``'s energy ``x^T Q x + offset`` (what a run's energy is
        compared with): ``Q_00 |S| + offset`` for an MIS instance (every vertex has the same
        diagonal), ``-value`` for a maximised QUBO, else ``value``."""
        if instance.is_mis:
            return float(instance.Q[0, 0]) * self.value + instance.offset
        return -self.value if instance.maximise else self.value

    def describe(self) -> str:
        """``34 (proven optimum; qoblib: <reference>)`` in words."""
        kind = "proven optimum" if self.proven else "best known, not proven"
        ref = f": {self.reference}" if self.reference else ""
        return f"{self.value:g} ({kind}; {self.source}{ref})"


def load_table(table: Path = KNOWN_VALUES) -> list[KnownValue]:
    """Every row of a known-value table, checked (columns, fingerprint, value, source)."""
    rows = []
    with open(table, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise DataError(f"{table}: columns {reader.fieldnames}, expected {list(COLUMNS)}")
        for line, row in enumerate(reader, 2):
            where = f"{table}:{line}"
            try:
                fp = Fingerprint.parse(row["fingerprint"])
                value = float(row["value"])
            except ValueError as exc:
                raise DataError(f"{where}: {exc}") from None
            if (fp.n, fp.m) != (int(row["n"]), int(row["m"])):
                raise DataError(f"{where}: n, m ({row['n']}, {row['m']}) disagree with the "
                                f"fingerprint {fp}")
            if row["proven"] not in ("true", "false") or not SOURCES.match(row["source"]):
                raise DataError(f"{where}: proven must be true/false and source one of qoblib, "
                                f"exact:<solver>, best-seen:<solver>; got {row['proven']!r}, "
                                f"{row['source']!r}")
            rows.append(KnownValue(value, row["source"], row["proven"] == "true",
                                   row["instance"], str(fp), row["reference"]))
    return rows


def known_value(instance: Any, table: Path = KNOWN_VALUES) -> KnownValue | None:
    """The table's value for ``instance`` (a :class:`~.library.Instance`), matched by its
    content's fingerprint; None when the table has no row with that content (whatever the
    file is called: see :func:`name_mismatch`). A proven row wins over a best-known one."""
    fp = str(instance_fingerprint(instance))
    found = [r for r in load_table(table) if r.fingerprint == fp]
    found.sort(key=lambda r: not r.proven)
    return found[0] if found else None


def name_mismatch(instance: Any, table: Path = KNOWN_VALUES) -> str | None:
    """A sentence when the table has a row named like ``instance`` whose content differs
    (its value is then not used), else None."""
    fp = instance_fingerprint(instance)
    for row in load_table(table):
        if row.instance == instance.name and row.fingerprint != str(fp):
            theirs = Fingerprint.parse(row.fingerprint)
            return (f"{instance.path}: named {instance.name!r} like the known-value table's row "
                    f"({theirs.describe()}), but its content differs ({fp.describe()}, "
                    f"fingerprint {fp.sha256[:12]}... vs {theirs.sha256[:12]}...): the table's "
                    f"value {row.value:g} is not used")
    return None


def qoblib_rows(folder: Path) -> list[dict[str, str]]:
    """Rows of the table for QOBLIB's MIS class in ``folder`` (``instances/*.gph`` and
    ``solutions/README.md``, the library's results table: "Our Solution", ``*`` = proven):
    one per instance present in both, its fingerprint computed from the file."""
    readme = (folder / "solutions" / "README.md").read_text(encoding="utf-8")
    table = re.findall(r"^\|\s*([\w.-]+)\s*\|\s*(\d+)(\\\*)?\s*\|\s*(\d+)\s*\|", readme, re.M)
    rows = []
    for name, ours, star, literature in table:
        name = QOBLIB_SPELLINGS.get(name, name)
        path = folder / "instances" / f"{name}.gph"
        if not path.is_file():
            continue
        inst = load_instance(path)
        fp = instance_fingerprint(inst)
        note = "" if ours == literature else f"; literature {literature}"
        rows.append({"instance": name, "n": str(fp.n), "m": str(fp.m), "fingerprint": str(fp),
                     "value": ours, "proven": "true" if star else "false", "source": "qoblib",
                     "reference": f"QOBLIB 07-independentset/solutions/README.md (commit "
                                  f"de698d4, CC-BY-4.0){note}"})
    return rows


if __name__ == "__main__":  # python -m neuromark.benchmarks.qubo.known QOBLIB_MIS_DIR > table
    writer = csv.DictWriter(sys.stdout, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(qoblib_rows(Path(sys.argv[1])))
