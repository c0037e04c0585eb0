"""Every ```python block under an "Adding ..." heading of docs/*.md runs as it stands.

Each block runs in a fresh namespace inside a temp folder; registries (and ``sys.path``,
and the modules an example imports from its folder) are restored afterwards, so an
example's entries do not leak into other tests. Every registry re-reads the installed
families before each example, so that a family an example installs (a package with a
``.dist-info`` declaring ``family.NAME``, put on ``sys.path``) is loaded as a plugin is.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest

from neuromark import registry

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _script(name: str) -> types.ModuleType:
    """``scripts/<name>.py`` as a module (shared with tests/test_doc_figures.py)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def examples() -> list[tuple[str, str]]:
    """(``file#heading``, code) of every python block under an ``## Adding ...`` heading."""
    found = []
    for path in sorted(DOCS.glob("*.md")):
        heading = ""
        for match in re.finditer(r"^(#+ [^\n]*)$|^```python\n(.*?)^```", path.read_text(), re.M | re.S):
            if match.group(1):
                heading = match.group(1).lstrip("# ").strip()
            elif heading.lower().startswith("adding"):
                found.append((f"{path.name}#{heading}", match.group(2)))
    return found


def test_every_extension_point_has_an_example():
    headings = {name.split("#", 1)[1].lower() for name, _ in examples()}
    for kind in ("dataset", "model", "task", "benchmark family", "system under test", "power meter",
                 "solver", "metric"):
        assert any(kind in h for h in headings), f"no runnable 'Adding a {kind}' example in docs/"


def test_every_task_example_passes_the_benchmark_check():
    """A docs example that registers a task runs it through neuromark.testing's
    check_task (issue 46: the extending example passes the checks the built-ins pass),
    which test_docs_example_runs then executes."""
    registering = [name for name, code in examples() if _registers_a_task(code)]
    assert any(name.endswith("#Adding a benchmark") for name in registering)
    assert any(name.endswith("#Adding a benchmark family") for name in registering)
    for name, code in examples():
        if _registers_a_task(code):
            assert re.search(r"^\s*check = check_task\(|^check_task\(", code, re.M), \
                f"{name}: registers a task but does not run neuromark.testing.check_task on it"


def _registers_a_task(code: str) -> bool:
    """Whether an example registers a task: through the API, or in a family's MANIFEST."""
    return "tasks.register(" in code or ("MANIFEST" in code and '"tasks":' in code)


@pytest.mark.parametrize("name, code", examples(), ids=[name for name, _ in examples()])
def test_docs_example_runs(name, code, tmp_path, monkeypatch):
    for reg in vars(registry).values():
        if isinstance(reg, registry.Registry):
            reg.names()  # the installed families' entries first, so that the copies hold them
            for attr in ("_entries", "_origins", "_families"):
                monkeypatch.setattr(reg, attr, dict(getattr(reg, attr)))
            monkeypatch.setattr(reg, "_plugins_loaded", False)  # re-read: sees what it installs
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(f"docs_example_{tmp_path.name}")  # a real module, as pydantic needs
    monkeypatch.setitem(sys.modules, module.__name__, module)
    loaded = set(sys.modules)
    try:
        exec(compile(code, name, "exec"), module.__dict__)
    finally:
        folder = tmp_path.resolve()
        for other in set(sys.modules) - loaded:  # the modules of packages it wrote
            if Path(getattr(sys.modules[other], "__file__", None) or "/").resolve().is_relative_to(folder):
                del sys.modules[other]
    _check_quoted_figures(name, tmp_path)


def _check_quoted_figures(name: str, folder: Path) -> None:
    """An example that writes results (a ``scripts/doc_figures.py`` example) produces the
    figures its doc quotes (``<!-- fig:KEY -->`` markers), at the quoted precision."""
    doc_figures, markers = _script("doc_figures"), _script("doc_markers")
    doc, heading = name.split("#", 1)
    stems = [stem for stem, path, head in doc_figures.EXAMPLES if Path(path).name == doc and head == heading]
    if not stems:
        return
    (stem,) = stems
    produced = doc_figures.figures_of(stem, doc_figures.read_results(folder))
    quoted = [q for q in markers.quotes([DOCS / doc]) if q.key.split(".", 1)[0] == stem]
    assert quoted, f"{name}: no quoted figure of {stem!r}"
    for q in quoted:
        assert q.key in produced, f"{q.where}: the example produced no {q.key!r}"
        assert q.agrees(produced[q.key]), f"{q.where}: quotes {q.number}, the example gives {produced[q.key]}"
