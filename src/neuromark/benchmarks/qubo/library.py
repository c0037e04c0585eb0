"""QUBO and graph instances from the field's libraries: readers and writers.

Formats (every index in a file is 1-based; ``.xz``-compressed files are read with
:mod:`lzma`):

- **DIMACS graph** (``.gph``, ``.dimacs``, ``.clq``, ``.col``; QOBLIB's independent-set
  instances): ``c`` comment lines, one ``p edge N M`` line, then ``M`` lines ``e U V``.
  Solved as the maximum-independent-set QUBO of NeuroBench (:func:`~.workloads.mis_qubo`),
  energy ``-|S| + 8 e(S)``.
- **QOBLIB ``.qs``** (``.qs``, ``.qs.xz``; Zimpl-generated): ``#`` comment lines (a
  ``# ObjectiveOffset C`` line sets the constant), one line ``N NNZ``, then ``NNZ`` lines
  ``I J V`` of the upper triangle (``I <= J``), minimisation of ``x^T Q x + C`` with the
  symmetric ``Q_ij = Q_ji = V_ij``, i.e. ``sum_i V_ii x_i + 2 sum_{i<j} V_ij x_i x_j + C``
  (QOBLIB's MIS models then read ``-|S| + 2 e(S)``, the objective line of their Zimpl
  header).
- **MQLib QUBO** (``.mqlib``, ``.mq``; Dunning, Gupta and Silberholz, "What works best
  when? A systematic evaluation of heuristics for Max-Cut and QUBO", INFORMS J. Comput.
  2018): ``#`` comments, one line ``N M``, then ``M`` lines ``A B W`` (``A == B``: the
  diagonal), maximisation of ``x^T W x`` with ``W`` symmetric, i.e. ``sum_i W_ii x_i + 2
  sum_{i<j} W_ij x_i x_j`` (MQLib's ``QUBOSolution::PopulateFromAssignments``); stored
  negated (minimised). MQLib names no suffix: pass ``fmt="mqlib"`` for another one.
- **QOBLIB solution** (``.sol``, ``.opt.sol``): ``#`` comment lines (``# Objective value =
  K`` is checked against the node count), then one chosen node per line.

Input contract, checked before any solving, each failure a :class:`DataError` naming the
file and line: a header before any data line and exactly once; sizes ``N >= 1`` and counts
``>= 0`` that match the data lines; integer indices in ``1..N``; finite values; no repeated
pair (``(u, v)`` and ``(v, u)`` are the same edge or entry); no self-loop in a graph; in a
``.qs`` file ``I <= J``.

Energies: a DIMACS instance is solved with NeuroBench's penalty 8, a ``.qs`` MIS instance
with QOBLIB's 2; the two minima are the same independent sets, so results compare ``|S|``
after a feasibility check, and every result names its ``energy``.
"""

from __future__ import annotations

import lzma
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from neuromark.benchmarks.qubo.workloads import EDGE_PENALTY, Workload, mis_qubo
from neuromark.errors import DataError
from neuromark.io_atomic import atomic_path, write_text_atomic

#: File formats by suffix (after dropping a final ``.xz``).
FORMATS = {".gph": "dimacs", ".dimacs": "dimacs", ".clq": "dimacs", ".col": "dimacs",
           ".qs": "qs", ".mqlib": "mqlib", ".mq": "mqlib"}
#: The most variables (vertices) an instance may have: a solver holds several arrays of this
#: length per worker, and a first pass over 10^7 variables takes longer than usual timeouts.
MAX_VARIABLES = 10_000_000
#: The largest energy bound accepted: ``sum |Q_ij| + |offset|`` (every energy and every
#: one-flip change lies within twice it), far below float64's 1.8e308 so that no energy or
#: energy change can overflow.
MAX_ENERGY_BOUND = 1e300
#: The energy of a graph instance (NeuroBench's MIS QUBO).
NEUROBENCH_ENERGY = f"-|S| + {2 * EDGE_PENALTY:g} e(S) (NeuroBench MIS QUBO, x^T Q x)"


@dataclass
class Instance:
    """One library instance, ready to solve.

    Attributes:
        name: the file name without its format suffixes (``C125-9``).
        path: the file it was read from.
        fmt: ``"dimacs"``, ``"qs"`` or ``"mqlib"``.
        Q: scipy.sparse CSR (n, n), symmetric, minimised: energy = ``x^T Q x + offset``.
        offset: the constant of the energy.
        edges: int32 (m, 2), 0-based, u < v: the graph of an MIS instance (a DIMACS graph,
            or a ``.qs``/MQLib QUBO of MIS form: equal negative diagonal, positive
            off-diagonal), else None: feasibility and |S| are then undefined.
        energy: what ``x^T Q x + offset`` means, stated in every result.
        maximise: the library states its objective as a maximum (MQLib, QOBLIB's MIS); the
            objective is then ``-(x^T Q x + offset)``.
    """

    name: str
    path: Path
    fmt: str
    Q: sp.csr_matrix
    offset: float
    edges: np.ndarray | None
    energy: str
    maximise: bool = False

    @property
    def n(self) -> int:
        return int(self.Q.shape[0])

    @property
    def is_mis(self) -> bool:
        return self.edges is not None

    def cost(self, x: np.ndarray) -> float:
        """The energy ``x^T Q x + offset`` of a binary vector of length n."""
        xv = np.asarray(x, dtype=np.float64)
        return float(xv @ (self.Q @ xv)) + self.offset

    def workload(self) -> Workload:
        """The instance as a :class:`Workload` (density: edges over node pairs; seed 0)."""
        edges = self.edges if self.edges is not None else np.zeros((0, 2), dtype=np.int32)
        pairs = self.n * (self.n - 1) / 2
        return Workload(Q=self.Q, edges=edges, n=self.n,
                        density=float(len(edges) / pairs) if pairs else 0.0, seed=0,
                        label=self.name)


def instance_format(path: Path) -> str:
    """``dimacs``, ``qs`` or ``mqlib`` from the file name (a final ``.xz`` is dropped)."""
    name = path.name[:-3] if path.name.endswith(".xz") else path.name
    suffix = Path(name).suffix.lower()
    if suffix not in FORMATS:
        raise DataError(f"{path}: unknown instance format {suffix or '(no suffix)'!r}; "
                        f"known: {', '.join(sorted(FORMATS))} (optionally .xz-compressed)")
    return FORMATS[suffix]


def instance_name(path: Path) -> str:
    """The file name without ``.xz`` and its format suffix (``C125-9.qs.xz`` -> ``C125-9``)."""
    name = path.name[:-3] if path.name.endswith(".xz") else path.name
    return name[: -len(Path(name).suffix)] if Path(name).suffix else name


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, stripped text) of a text file, ``.xz`` decompressed; blank lines skipped."""
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    try:
        if path.name.endswith(".xz"):
            with lzma.open(path, "rt", encoding="utf-8") as fh:
                text = fh.read()
        else:
            text = path.read_text(encoding="utf-8")
    except (lzma.LZMAError, EOFError) as exc:
        raise DataError(f"{path}: not a valid .xz file ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc})") from exc
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line:
            yield number, line


def _int(token: str, where: str, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise DataError(f"{where}: {what} must be an integer, got {token!r}") from None


def _float(token: str, where: str, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise DataError(f"{where}: {what} must be a number, got {token!r}") from None
    if not math.isfinite(value):
        raise DataError(f"{where}: {what} must be finite, got {token!r}")
    return value


def _index(token: str, n: int, where: str) -> int:
    """A 1-based node index in 1..n, returned 0-based."""
    i = _int(token, where, "index")
    if not 1 <= i <= n:
        raise DataError(f"{where}: index {i} out of range 1..{n} (indices are 1-based)")
    return i - 1


def _header(fields: list[str], where: str, count_what: str) -> tuple[int, int]:
    n = _int(fields[0], where, "the number of variables")
    m = _int(fields[1], where, f"the number of {count_what}")
    if n < 1:
        raise DataError(f"{where}: the number of variables must be >= 1, got {n}")
    if n > MAX_VARIABLES:
        raise DataError(f"{where}: {n} variables is more than this reader accepts "
                        f"({MAX_VARIABLES:,}: the solvers' per-worker arrays and a first pass "
                        f"over them must fit memory and the timeout)")
    if m < 0:
        raise DataError(f"{where}: the number of {count_what} must be >= 0, got {m}")
    return n, m


def _check_count(path: Path, got: int, want: int, what: str, header_line: int) -> None:
    if got != want:
        raise DataError(f"{path}:{header_line}: the header announces {want} {what}, the file "
                        f"has {got}")


def read_dimacs(path: str | Path) -> tuple[int, np.ndarray]:
    """``(n, edges)`` of a DIMACS ``p edge`` graph; edges int32 (m, 2), 0-based, u < v, in
    file order. See the module docstring for the contract."""
    path = Path(path)
    n = m = header_line = None
    edges: list[tuple[int, int]] = []
    seen: dict[tuple[int, int], int] = {}
    for number, line in _lines(path):
        where = f"{path}:{number}"
        fields = line.split()
        kind = fields[0]
        if kind == "c":
            continue
        if kind == "p":
            if header_line is not None:
                raise DataError(f"{where}: a second 'p' line (the first is line {header_line})")
            if len(fields) != 4 or fields[1] not in ("edge", "col"):
                raise DataError(f"{where}: expected 'p edge N M', got {line!r}")
            n, m = _header(fields[2:], where, "edges")
            header_line = number
        elif kind == "e":
            if n is None:
                raise DataError(f"{where}: an edge before the 'p edge N M' line")
            if len(fields) != 3:
                raise DataError(f"{where}: expected 'e U V', got {line!r}")
            u, v = _index(fields[1], n, where), _index(fields[2], n, where)
            if u == v:
                raise DataError(f"{where}: self-loop on node {u + 1}")
            key = (min(u, v), max(u, v))
            if key in seen:
                raise DataError(f"{where}: edge {u + 1}-{v + 1} repeats line {seen[key]}")
            seen[key] = number
            edges.append(key)
        else:
            raise DataError(f"{where}: unknown line kind {kind!r} (expected c, p or e)")
    if n is None or m is None or header_line is None:
        raise DataError(f"{path}: no 'p edge N M' line")
    _check_count(path, len(edges), m, "edges", header_line)
    return n, np.array(edges, dtype=np.int32).reshape(-1, 2)


def _pairs(path: Path, comment: str, count_what: str, upper_only: bool
           ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, float]:
    """(n, rows, cols, values, offset) of an ``N NNZ`` + ``I J V`` file; 0-based."""
    n = m = header_line = None
    offset = 0.0
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    seen: dict[tuple[int, int], int] = {}
    for number, line in _lines(path):
        where = f"{path}:{number}"
        if line.startswith(comment):
            found = re.match(r"#\s*ObjectiveOffset\s+(\S+)", line)
            if found:
                offset = _float(found.group(1), where, "ObjectiveOffset")
            continue
        fields = line.split()
        if header_line is None:
            if len(fields) != 2:
                raise DataError(f"{where}: expected the header 'N {count_what.upper()}', got "
                                f"{line!r}")
            n, m = _header(fields, where, count_what)
            header_line = number
            continue
        assert n is not None
        if len(fields) != 3:
            raise DataError(f"{where}: expected 'I J VALUE', got {line!r}")
        i, j = _index(fields[0], n, where), _index(fields[1], n, where)
        if upper_only and i > j:
            raise DataError(f"{where}: entry ({i + 1}, {j + 1}) below the diagonal; a .qs file "
                            f"lists the upper triangle (I <= J)")
        key = (min(i, j), max(i, j))
        if key in seen:
            raise DataError(f"{where}: entry ({key[0] + 1}, {key[1] + 1}) repeats line "
                            f"{seen[key]}")
        seen[key] = number
        rows.append(key[0])
        cols.append(key[1])
        vals.append(_float(fields[2], where, "value"))
    if n is None or m is None or header_line is None:
        raise DataError(f"{path}: no 'N {count_what.upper()}' header line")
    _check_count(path, len(vals), m, count_what, header_line)
    return (n, np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
            np.array(vals, dtype=np.float64), offset)


def _symmetric(n: int, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray) -> sp.csr_matrix:
    """The symmetric Q with ``Q_ij = Q_ji = v`` for each upper-triangle entry ``(i, j, v)``."""
    off = rows != cols
    q = sp.csr_matrix((np.concatenate([vals, vals[off]]),
                       (np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]]))),
                      shape=(n, n), dtype=np.float64)
    q.eliminate_zeros()
    q.sort_indices()
    return q


def mis_edges(Q: sp.csr_matrix) -> np.ndarray | None:
    """The graph of a QUBO of MIS form (one negative value on the whole diagonal, positive
    off-diagonal entries), as int32 (m, 2) 0-based edges u < v; None for any other QUBO."""
    diag = Q.diagonal()
    if not (np.all(diag < 0) and np.all(diag == diag[0])):
        return None
    upper = sp.triu(Q, k=1).tocoo()
    if upper.nnz and not np.all(upper.data > 0):
        return None
    return np.stack([upper.row, upper.col], axis=1).astype(np.int32)


def read_qs(path: str | Path) -> tuple[sp.csr_matrix, float]:
    """``(Q, offset)`` of a QOBLIB ``.qs`` file (minimised energy ``x^T Q x + offset``)."""
    path = Path(path)
    n, rows, cols, vals, offset = _pairs(path, "#", "nnz", upper_only=True)
    return _symmetric(n, rows, cols, vals), offset


def read_mqlib(path: str | Path) -> sp.csr_matrix:
    """The symmetric ``W`` of an MQLib QUBO file (maximise ``x^T W x``), as written."""
    path = Path(path)
    n, rows, cols, vals, _ = _pairs(path, "#", "entries", upper_only=False)
    return _symmetric(n, rows, cols, vals)


def _times(c: float) -> str:
    """A coefficient written before a symbol: ``-`` for -1, ``-2`` for -2."""
    return "-" if c == -1 else "" if c == 1 else f"{c:g}"


def check_energy_range(path: Path, Q: sp.spmatrix, offset: float) -> float:
    """The bound ``sum |Q_ij| + |offset|`` on every energy ``|x^T Q x + offset|``; a
    :class:`DataError` naming the file when it is not finite or above
    :data:`MAX_ENERGY_BOUND` (energies would overflow float64 or lose all precision)."""
    with np.errstate(over="ignore", invalid="ignore"):
        bound = float(np.sum(np.abs(sp.csr_matrix(Q).data))) + abs(float(offset))
    if not math.isfinite(bound) or bound > MAX_ENERGY_BOUND:
        top = float(np.max(np.abs(sp.csr_matrix(Q).data))) if Q.nnz else 0.0
        raise DataError(f"{path}: the coefficients' magnitudes sum to {bound:.4g} (largest "
                        f"|coefficient| {top:.4g}, |offset| {abs(offset):.4g}); energies of "
                        f"this instance could overflow float64: the bound must be finite and "
                        f"<= {MAX_ENERGY_BOUND:g} (rescale the coefficients)")
    return bound


def load_instance(path: str | Path, fmt: str | None = None) -> Instance:
    """Read any supported instance file (see the module docstring) into an :class:`Instance`;
    ``fmt`` (``dimacs``, ``qs`` or ``mqlib``) overrides the format the suffix gives."""
    path = Path(path)
    if fmt is not None and fmt not in set(FORMATS.values()):
        raise DataError(f"{path}: unknown instance format {fmt!r}; known: "
                        f"{', '.join(sorted(set(FORMATS.values())))}")
    fmt = fmt or instance_format(path)
    name = instance_name(path)
    if fmt == "dimacs":
        n, edges = read_dimacs(path)
        return Instance(name, path, fmt, mis_qubo(n, edges), 0.0, edges, NEUROBENCH_ENERGY,
                        maximise=True)
    if fmt == "qs":
        Q, offset = read_qs(path)
        check_energy_range(path, Q, offset)
        edges = mis_edges(Q)
        energy = ("x^T Q x + offset (QOBLIB .qs, minimised)" if edges is None else
                  f"{_times(float(Q[0, 0]))}|S| + {2 * float(Q.data.max()):g} e(S) (QOBLIB .qs "
                  f"MIS QUBO)")
        return Instance(name, path, fmt, Q, offset, edges, energy, maximise=edges is not None)
    W = read_mqlib(path)
    check_energy_range(path, W, 0.0)
    Q = (-W).tocsr()
    edges = mis_edges(Q)
    return Instance(name, path, fmt, Q, 0.0, edges,
                    "-x^T W x (MQLib QUBO, maximisation negated)", maximise=True)


def read_solution(path: str | Path, n: int) -> np.ndarray:
    """The binary vector (int8, length n) of a QOBLIB node-list solution file.

    ``#`` comment lines; ``# Objective value = K`` must equal the number of nodes listed.
    Each other line is one node in ``1..n``, listed once.
    """
    path = Path(path)
    x = np.zeros(n, dtype=np.int8)
    stated: tuple[int, float] | None = None
    seen: dict[int, int] = {}
    for number, line in _lines(path):
        where = f"{path}:{number}"
        if line.startswith("#"):
            found = re.match(r"#\s*Objective value\s*=\s*(\S+)", line)
            if found:
                stated = (number, _float(found.group(1), where, "the objective value"))
            continue
        fields = line.split()
        if len(fields) != 1:
            raise DataError(f"{where}: expected one node index per line, got {line!r}")
        i = _index(fields[0], n, where)
        if i in seen:
            raise DataError(f"{where}: node {i + 1} repeats line {seen[i]}")
        seen[i] = number
        x[i] = 1
    if stated is not None and stated[1] != len(seen):
        raise DataError(f"{path}:{stated[0]}: objective value {stated[1]:g} but {len(seen)} "
                        f"nodes are listed")
    return x


def write_dimacs(path: str | Path, n: int, edges: np.ndarray, comment: str = "") -> Path:
    """Write a DIMACS ``p edge`` graph (0-based ``edges`` (m, 2) written 1-based)."""
    lines = [f"c {c}" for c in comment.splitlines()] + [f"p edge {n} {len(edges)}"]
    lines += [f"e {u + 1} {v + 1}" for u, v in np.asarray(edges).tolist()]
    return write_text_atomic(path, "\n".join(lines) + "\n")


def _upper_lines(Q: sp.spmatrix) -> list[str]:
    upper = sp.triu(sp.csr_matrix(Q), k=0).tocoo()
    order = np.lexsort((upper.col, upper.row))
    return [f"{r + 1} {c + 1} {v:.17g}"
            for r, c, v in zip(upper.row[order], upper.col[order], upper.data[order])]


def write_qs(path: str | Path, Q: sp.spmatrix, offset: float = 0.0, comment: str = "") -> Path:
    """Write a symmetric ``Q`` as a QOBLIB ``.qs`` file (upper triangle, minimisation;
    a path ending in ``.xz`` is compressed)."""
    body = _upper_lines(Q)
    lines = [f"# {c}" for c in comment.splitlines()] + [f"# ObjectiveOffset {offset:.17g}",
                                                          f"{Q.shape[0]} {len(body)}", *body]
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".xz"):
        path = Path(path)
        with atomic_path(path) as tmp:
            tmp.write_bytes(lzma.compress(text.encode("utf-8")))
        return path
    return write_text_atomic(path, text)


def write_mqlib(path: str | Path, W: sp.spmatrix, comment: str = "") -> Path:
    """Write a symmetric ``W`` (maximise ``x^T W x``) in MQLib's QUBO format."""
    body = _upper_lines(W)
    lines = [f"# {c}" for c in comment.splitlines()] + [f"{W.shape[0]} {len(body)}", *body]
    return write_text_atomic(path, "\n".join(lines) + "\n")


def write_solution(path: str | Path, x: np.ndarray, comment: str = "") -> Path:
    """Write a binary vector as a QOBLIB node-list solution (1-based chosen nodes)."""
    nodes = np.flatnonzero(np.asarray(x)) + 1
    lines = [f"# {c}" for c in comment.splitlines()] + [f"# Objective value = {len(nodes)}"]
    lines += [str(i) for i in nodes.tolist()]
    return write_text_atomic(path, "\n".join(lines) + "\n")
