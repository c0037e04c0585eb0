"""The import graph of ``src/neuromark``: no cycles, and no lower layer importing a higher one.

Layers (lowest first) are those of ``docs/architecture.md``; imports under
``if TYPE_CHECKING:`` are annotations only and are not counted. Deferred imports (inside
functions) are counted: a cycle through a function body is still a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Module prefixes per layer, lowest first; a module belongs to its longest matching prefix.
LAYERS: list[tuple[str, ...]] = [
    ("neuromark", "neuromark._lazy", "neuromark._threads", "neuromark.errors",
     "neuromark.results", "neuromark.registry", "neuromark.config", "neuromark.components",
     "neuromark.devices"),
    ("neuromark.plotting", "neuromark.metrics", "neuromark.ceilings"),
    ("neuromark.models", "neuromark.data"),
    ("neuromark.processors",),
    ("neuromark.synth", "neuromark.networks", "neuromark.instrument", "neuromark.runner",
     "neuromark.training"),
    ("neuromark.tasks",),
    ("neuromark.system",),
    ("neuromark.suite",),
    ("neuromark.commands", "neuromark.cli", "neuromark.report", "neuromark.__main__",
     "neuromark.testing"),
    # the benchmark families: plugins of the kernel, above all of it; the kernel names none
    ("neuromark.benchmarks",),
]

#: The package of the built-in families.
FAMILIES = "neuromark.benchmarks"


def module_files() -> dict[str, Path]:
    out = {}
    for path in (SRC / "neuromark").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


#: Third-party packages slow or large enough to import only where needed.
HEAVY = {"torch", "numba", "numpy", "scipy", "h5py", "matplotlib", "snntorch", "tonic", "sklearn",
         "mlperf_loadgen", "dwave", "dimod", "networkx", "soundfile", "jitcdde", "librosa", "tqdm",
         "pydantic", "yaml", "pynvml"}


def _imports(tree: ast.AST, module: str, is_package: bool, known: dict[str, Path],
             top_level_only: bool = False, external: set[str] | None = None) -> set[str]:
    """Internal modules imported by ``tree`` (all, or top-level ones only); top-level
    third-party packages are added to ``external`` when given."""
    found: set[str] = set()

    def visit(node: ast.AST, depth: int = 0) -> None:
        if _is_type_checking(node):
            return
        if top_level_only and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join(parts[:keep] + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            if not target.startswith("neuromark"):
                if external is not None and target:
                    external.add(target.split(".")[0])
                continue
            while target and target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != module:
                found.add(target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    return {name: _imports(ast.parse(path.read_text()), name, path.name == "__init__.py", files)
            for name, path in files.items()}


def layer_of(module: str) -> int:
    best, layer = -1, None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, layer = len(prefix), index
    if layer is None:
        raise AssertionError(f"{module} is in no layer; add it to LAYERS and docs/architecture.md")
    return layer


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components with more than one node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def folder_of(module: str) -> str:
    """The sub-package a module sits in (``neuromark.benchmarks.qubo.solvers.tabu`` ->
    ``neuromark.benchmarks.qubo.solvers``); top-level modules are their own folder."""
    files = module_files()
    return module if files[module].name == "__init__.py" or module.count(".") == 1 \
        else module.rsplit(".", 1)[0]


def test_every_module_has_a_layer() -> None:
    for module in module_files():
        layer_of(module)


def test_no_lower_layer_imports_a_higher_one() -> None:
    bad = [f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
           for m, targets in sorted(import_graph().items()) for t in sorted(targets)
           if layer_of(t) > layer_of(m)]
    assert not bad, "upward imports:\n" + "\n".join(bad)


def _family(module: str) -> str | None:
    """``neuromark.benchmarks.qubo`` for any module of that family; None outside the families."""
    parts = module.split(".")
    return ".".join(parts[:3]) if module.startswith(FAMILIES + ".") and len(parts) > 2 else None


def test_no_family_imports_another() -> None:
    """A family is a plugin of the kernel: it imports the kernel, never another family (what two
    families share belongs to the kernel)."""
    bad = [f"{m} imports {t}" for m, targets in sorted(import_graph().items()) for t in sorted(targets)
           if _family(m) and _family(t) and _family(m) != _family(t)]
    assert not bad, "families importing each other:\n" + "\n".join(bad)


def test_no_string_outside_the_families_names_a_family_module() -> None:
    """The kernel names no family, not even lazily: no string constant (registry entries,
    docstrings, messages) outside ``benchmarks/`` names a module under it. The families are
    found through their manifests (``neuromark.registry.families``)."""
    bad = []
    for name, path in sorted(module_files().items()):
        if name == FAMILIES or name.startswith(FAMILIES + "."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and FAMILIES in node.value:
                bad.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value.strip()[:80]!r}")
    assert not bad, "strings naming a family's module outside benchmarks/:\n" + "\n".join(bad)


def test_no_import_cycle_between_modules() -> None:
    cycles = strongly_connected(import_graph())
    assert not cycles, f"import cycles: {cycles}"


def test_no_two_way_folders() -> None:
    folders: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        for target in targets:
            a, b = folder_of(module), folder_of(target)
            # a package's __init__ may re-export its own modules
            if a != b and not b.startswith(a + ".") and not a.startswith(b + "."):
                folders.setdefault(a, set()).add(b)
    cycles = strongly_connected(folders)
    assert not cycles, f"folders that import each other: {cycles}"


def heavy_closure() -> dict[str, set[str]]:
    """The heavy third-party packages each module pulls in when imported (top-level imports,
    followed through internal modules)."""
    files = module_files()
    direct: dict[str, set[str]] = {}
    inner: dict[str, set[str]] = {}
    for name, path in files.items():
        external: set[str] = set()
        inner[name] = _imports(ast.parse(path.read_text()), name, path.name == "__init__.py", files,
                               top_level_only=True, external=external)
        direct[name] = external & HEAVY

    def closure(name: str, seen: set[str]) -> set[str]:
        if name in seen:
            return set()
        seen.add(name)
        out = set(direct[name])
        for target in inner[name]:
            out |= closure(target, seen)
        return out

    return {name: closure(name, set()) for name in files}


def test_deferred_imports_only_defer_heavy_packages() -> None:
    """An import inside a function is kept only when it spares the importer a heavy package."""
    heavy = heavy_closure()
    files = module_files()
    needless = []
    for name, targets in import_graph().items():
        path = files[name]
        top = _imports(ast.parse(path.read_text()), name, path.name == "__init__.py", files,
                       top_level_only=True)
        needless += [f"{name} -> {t}" for t in sorted(targets - top)
                     if name != "neuromark" and heavy[t] <= heavy[name]]
    assert not needless, "deferred imports that defer nothing heavy (move them to the top):\n" + \
        "\n".join(needless)


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
])
def test_cycle_finder(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert strongly_connected(graph) == expected


def test_no_import_cycle_among_the_bench_and_script_files():
    """``bench/*.py`` and ``scripts/*.py`` import their siblings by file name (issue 46: the
    ``e2e_grid`` <-> ``e2e_shd`` circle); no two of them may import each other."""
    root = SRC.parent
    for folder in ("bench", "scripts"):
        names = {p.stem: p for p in (root / folder).glob("*.py")}
        graph: dict[str, set[str]] = {}
        for name, path in names.items():
            found: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    found |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
            graph[name] = {n for n in found if n in names and n != name}
        assert not strongly_connected(graph), f"{folder}/: import cycles {strongly_connected(graph)}"
