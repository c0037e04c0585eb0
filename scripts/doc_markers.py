"""Figure markers in the README and docs, checked against (or rewritten from) docs/figures.json.

A quoted figure is a number followed directly by an HTML comment, invisible in rendered
Markdown::

    mAP 0.0114<!-- fig:gen4_synthetic_short.coco_map -->
    session average 93.4 %<!-- fig:mswc_fscil_m5_short.session_average x100 -->

``KEY`` is ``<config stem>.<figure>`` as in the figures file (``scripts/doc_figures.py``).
An optional scale follows the key (``x100`` for a fraction quoted as a percentage). Between
the number and the marker only a unit (`` %``, `` B``) and Markdown emphasis (``**``) may
stand. Numbers may carry thousands commas (``281,564``) or an exponent (``1.13e8``); the
quoted precision is that of the last digit written (``0.0114``: 1e-4; ``1.13e8``: 1e6).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures.json"

#: number, optional unit and emphasis, then the marker.
MARKER = re.compile(
    r"(?P<number>[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"(?P<between>(?:\s?%|\s?B)?\**)"
    r"<!-- fig:(?P<key>[A-Za-z0-9_./\-]+)(?:\s+x(?P<scale>[0-9.e+-]+))?\s*-->")
#: a marker whose number is missing or malformed (every marker must match MARKER); a
#: placeholder such as ``<!-- fig:<config stem>.<score> -->`` in prose is not one.
ANY_MARKER = re.compile(r"<!-- fig:[A-Za-z0-9_]")


#: CPU flags that select a numerical library's code path (vector width, fused multiply-add,
#: matrix units): two machines that differ in one of them may round differently.
FLOAT_FLAGS = re.compile(r"^(sse\S*|ssse3|avx\S*|fma\S*|amx\S*|f16c)$")


def float_path() -> str:
    """This machine's floating-point path: architecture, CPU vendor, the digest of the
    vector-ISA flags that BLAS (MKL/OpenBLAS), oneDNN, ATen and numpy dispatch on, the torch
    and numpy versions, torch's CPU capability and thread count.

    A trained model's figures (accuracy, Effective ACs, activation sparsity) pass through
    thousands of rounded sums whose order and fusion follow that path, and training
    amplifies a last-bit difference into a different model: measured on 2026-12-02, the
    quickstart's accuracy came out 0.175, 0.183, 0.208 and 0.217 on four float paths of one
    machine (MKL_CBWR / ONEDNN_MAX_CPU_ISA / ATEN_CPU_CAPABILITY). Untrained figures
    (footprint, Dense) do not depend on it. The figures file records each figure's path;
    a re-derivation is compared to the digit only on the same path."""
    import numpy
    import torch

    vendor, flags = "", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "vendor_id" and not vendor:
                vendor = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = {f for f in value.split() if FLOAT_FLAGS.match(f)}
    except OSError:
        vendor = platform.processor() or "unknown"
    digest = hashlib.sha256(" ".join(sorted(flags)).encode()).hexdigest()[:8]
    capability = torch.backends.cpu.get_cpu_capability()
    pinned = ",".join(f"{k}={os.environ[k]}" for k in
                      ("MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "OPENBLAS_CORETYPE")
                      if os.environ.get(k))
    return (f"{platform.machine()} {vendor or 'unknown'} isa:{digest} torch-{torch.__version__} "
            f"{capability} threads:{torch.get_num_threads()} numpy-{numpy.__version__}"
            + (f" {pinned}" if pinned else ""))


@dataclass(frozen=True)
class Quote:
    """One marked figure: where it is, the quoted text, its key and scale."""

    path: Path
    line: int
    number: str
    key: str
    scale: float
    span: tuple[int, int]  # character span of the number in the file

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path}:{self.line}"

    def quoted(self) -> float:
        """The quoted number as a float (commas dropped)."""
        return float(self.number.replace(",", ""))

    def step(self) -> float:
        """One unit of the last digit written: ``0.0114`` -> 1e-4, ``1.13e8`` -> 1e6."""
        mantissa, _, exponent = self.number.replace(",", "").lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        return 10.0 ** (int(exponent or 0) - decimals)

    def agrees(self, value: float) -> bool:
        """Whether ``value`` (scaled) rounds to the quoted number at the quoted precision."""
        return abs(value * self.scale - self.quoted()) <= 0.5 * self.step() * (1 + 1e-9) + 1e-12


def doc_files(root: Path = ROOT) -> list[Path]:
    """The README and every Markdown file under docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def quotes(paths: list[Path] | None = None) -> list[Quote]:
    """Every marked figure in ``paths`` (default: :func:`doc_files`); a marker that does not
    follow a number raises naming the file and line."""
    found = []
    for path in paths if paths is not None else doc_files():
        text = path.read_text()
        matched = set()
        for m in MARKER.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(Quote(path, line, m["number"], m["key"], float(m["scale"] or 1.0),
                               m.span("number")))
            matched.add(m.start("between") + len(m["between"]))
        for m in ANY_MARKER.finditer(text):
            if m.start() not in matched:
                line = text.count("\n", 0, m.start()) + 1
                raise ValueError(f"{path}:{line}: a figure marker must follow a number "
                                 f"(as 0.0114<!-- fig:KEY -->)")
    return found


def load_figures(path: Path = FIGURES) -> dict[str, dict]:
    """The figures file: ``{key: {"value", "config", "command", "date", "commit"}}``."""
    return json.loads(path.read_text())["figures"]


def disagreements(figures: dict[str, dict], found: list[Quote]) -> list[str]:
    """One line per quoted figure whose key is missing or whose value disagrees."""
    problems = []
    for q in found:
        entry = figures.get(q.key)
        if entry is None:
            problems.append(f"{q.where}: {q.key!r} is not in docs/figures.json")
            continue
        value = entry["value"]
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            problems.append(f"{q.where}: {q.key!r} is {value!r}, not a finite number")
        elif not q.agrees(value):
            problems.append(f"{q.where}: quotes {q.number} for {q.key!r}, the figures file has "
                            f"{value!r}{f' (x{q.scale:g})' if q.scale != 1 else ''}: "
                            f"write {format_like(q.number, value * q.scale)}")
    return problems


def format_like(number: str, value: float) -> str:
    """``value`` written as ``number`` is (decimals, exponent, thousands commas)."""
    mantissa, e, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    if e:
        exp = int(exponent)
        text = f"{value / 10.0 ** exp:.{decimals}f}"
        if abs(float(text)) >= 10:  # rounding moved a digit up: keep the quoted exponent style
            return f"{value:.{decimals}e}".replace("e+0", "e").replace("e+", "e")
        return f"{text}e{exponent}"
    return f"{value:,.{decimals}f}" if "," in number else f"{value:.{decimals}f}"


def rewrite(figures: dict[str, dict], paths: list[Path] | None = None) -> list[str]:
    """Rewrite every marked figure from ``figures`` at its quoted precision; returns one line
    per change (``file:line: old -> new``). Missing keys are left alone (the check names them)."""
    changes = []
    by_path: dict[Path, list[Quote]] = {}
    for q in quotes(paths):
        by_path.setdefault(q.path, []).append(q)
    for path, found in by_path.items():
        text = original = path.read_text()
        for q in sorted(found, key=lambda q: q.span[0], reverse=True):
            entry = figures.get(q.key)
            if entry is None or not isinstance(entry["value"], (int, float)):
                continue
            new = format_like(q.number, entry["value"] * q.scale)
            if new != q.number:
                text = text[:q.span[0]] + new + text[q.span[1]:]
                changes.append(f"{q.where}: {q.number} -> {new} ({q.key})")
        if text != original:
            path.write_text(text)
    return changes
