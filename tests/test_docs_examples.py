"""Every ```python block under an "Adding ..." heading of docs/*.md runs as it stands.

Each block runs in a fresh namespace inside a temp folder; registries are restored
afterwards, so an example's entries do not leak into other tests.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from neuromark import registry

DOCS = Path(__file__).resolve().parents[1] / "docs"


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
    for kind in ("dataset", "model", "task", "system under test", "power meter", "solver", "metric"):
        assert any(kind in h for h in headings), f"no runnable 'Adding a {kind}' example in docs/"


@pytest.mark.parametrize("name, code", examples(), ids=[name for name, _ in examples()])
def test_docs_example_runs(name, code, tmp_path, monkeypatch):
    for reg in vars(registry).values():
        if isinstance(reg, registry.Registry):
            monkeypatch.setattr(reg, "_entries", dict(reg._entries))
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(f"docs_example_{tmp_path.name}")  # a real module, as pydantic needs
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, name, "exec"), module.__dict__)
