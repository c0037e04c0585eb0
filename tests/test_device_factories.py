"""Device audit: every tensor factory in ``instrument/`` and ``metrics/`` names its device.

A factory without ``device=`` builds a CPU tensor; mixed with a model's CUDA tensors it
fails (or silently moves data) only on a GPU, which CPU-only CI never runs, so the rule is
checked on the source. ``*_like`` factories follow their argument and are fine."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "neuromark"
AUDITED = ("instrument", "metrics")
FACTORIES = frozenset({"zeros", "ones", "empty", "full", "tensor", "arange"})


def factory_calls_without_device(path: Path, root: Path = SOURCE.parent) -> list[str]:
    """``file:line name`` of each ``torch.<factory>(...)`` call in ``path`` lacking
    ``device=`` (a ``**kwargs`` call is given the benefit of the doubt)."""
    tree = ast.parse(path.read_text(), str(path))
    imported = {alias.asname or alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == "torch"
                for alias in node.names if alias.name in FACTORIES}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == "torch" and func.attr in FACTORIES:
            name = func.attr
        elif isinstance(func, ast.Name) and func.id in imported:
            name = func.id
        else:
            continue
        if not any(k.arg == "device" or k.arg is None for k in node.keywords):
            found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return found


def test_tensor_factories_name_their_device():
    files = sorted(p for folder in AUDITED for p in (SOURCE / folder).rglob("*.py"))
    assert len(files) > 10  # the folders were found
    missing = [hit for path in files for hit in factory_calls_without_device(path)]
    assert not missing, "tensor factories without device= (CPU tensors on a GPU run):\n" \
        + "\n".join(missing)


def test_the_audit_finds_a_factory_without_device(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import torch\nfrom torch import zeros as z\n"
                      "a = torch.zeros(3)\nb = z(2)\nc = torch.ones(1, device=x.device)\n"
                      "d = torch.zeros_like(a)\ne = torch.full((2,), 1.0, **kw)\n")
    assert factory_calls_without_device(sample, tmp_path) == ["sample.py:3 zeros", "sample.py:4 z"]
