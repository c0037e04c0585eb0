"""Write or check the QOBLIB MIS library table of docs/qubo.md from a sweep's library.csv.

    python scripts/qubo_library_table.py [--check]  # the doc's block is what the CSV gives?
    python scripts/qubo_library_table.py --write    # rewrite the block from the CSV

The block lies between ``<!-- qubo-library-table from CSV -->`` and
``<!-- /qubo-library-table -->`` in docs/qubo.md; CSV (a path from the checkout's root) is the
``library.csv`` of the ``neuromark qubo library`` run the doc gives the command of, shipped in
the repository (``docs/qubo_library_1s.csv``). The block is the per-solver totals and the
per-instance table exactly as that command writes them into its ``report.md``
(``library_report.solver_totals``, ``library_report.wide_table``), so the figures are those
of the run, and ``tests/test_qubo_library_table.py`` checks that the doc still says them.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "qubo.md"
BLOCK = re.compile(r"^<!-- qubo-library-table from (?P<csv>\S+) -->\n(?P<body>.*?)"
                   r"^<!-- /qubo-library-table -->$", re.M | re.S)


def render(csv_path: Path) -> str:
    """The block's body from ``library.csv``: totals, a blank line, the per-instance table."""
    from neuromark.benchmarks.qubo.library_report import read_csv, solver_totals, wide_table
    from neuromark.benchmarks.qubo.library_sweep import parse_solvers

    rows = read_csv(csv_path)
    choices = parse_solvers(",".join(dict.fromkeys(r["solver"] for r in rows)))
    return solver_totals(rows, choices) + "\n" + wide_table(rows, choices)


def block(text: str, doc: Path) -> re.Match[str]:
    """The one marked block of ``text`` (a ``ValueError`` naming ``doc`` otherwise)."""
    found = list(BLOCK.finditer(text))
    if len(found) != 1:
        raise ValueError(f"{doc}: {len(found)} marked library tables (<!-- qubo-library-table "
                         f"from CSV --> ... <!-- /qubo-library-table -->), expected 1")
    return found[0]


def check(doc: Path = DOC) -> list[str]:
    """Lines that differ between the doc's block and what its CSV gives (empty: agree)."""
    import difflib

    text = doc.read_text(encoding="utf-8")
    match = block(text, doc)
    fresh = render(ROOT / match["csv"])
    if fresh == match["body"]:
        return []
    return list(difflib.unified_diff(match["body"].splitlines(), fresh.splitlines(),
                                     f"{doc} (marked block)", f"from {match['csv']}",
                                     lineterm=""))


def write(doc: Path = DOC, csv_path: str | None = None) -> bool:
    """Rewrite the doc's block from its CSV (or ``csv_path``, then named in the marker);
    True when the doc changed."""
    text = doc.read_text(encoding="utf-8")
    match = block(text, doc)
    source = csv_path or match["csv"]
    new = (f"<!-- qubo-library-table from {source} -->\n{render(ROOT / source)}"
           f"<!-- /qubo-library-table -->")
    changed = text[:match.start()] + new + text[match.end():]
    if changed != text:
        doc.write_text(changed, encoding="utf-8")
    return changed != text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="compare the doc's block with its CSV (the default); exit 1 on a "
                           "difference, printing it")
    mode.add_argument("--write", action="store_true", help="rewrite the block from the CSV")
    parser.add_argument("--csv", default=None, metavar="PATH",
                        help="with --write: another library.csv (a path from the checkout's "
                             "root), named in the marker from then on")
    parser.add_argument("--doc", type=Path, default=DOC)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    if args.csv and not args.write:
        parser.error("--csv goes with --write")
    if args.write:
        print(f"{args.doc}: " + ("table rewritten" if write(args.doc, args.csv) else
                                 "table unchanged"))
        return 0
    problems = check(args.doc)
    print("\n".join(problems) or f"{args.doc}: the library table is what its CSV gives")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
