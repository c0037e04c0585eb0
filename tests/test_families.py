"""Every benchmark family has the one shape, and a third-party family plugs in the same way.

The shape (``docs/extending.md``, "Adding a benchmark family"): a package whose ``__init__``
holds a docstring and a ``MANIFEST``, a ``cases`` module with the tables the central tests
run (:mod:`family_cases`), a ``README.md``, and a ``configs/<family>/`` folder; ``neuromark
list`` shows it. Every registered task has exactly one case, in the family that declares it
(the kernel's in ``tests/family_cases.py``).

A third-party family is a package written into a temp folder with a
``<name>-0.1.dist-info/entry_points.txt`` declaring ``family.NAME = package`` (the way
``tests/test_plugins.py`` fakes an installed plugin), put on ``sys.path``: its task, data set
and CLI verb are registered under its name, and ``neuromark run`` runs its task. A malformed
manifest, and two families declaring one task, fail naming what is wrong.
"""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from family_cases import TABLES, cases_module, gather, run_task_case, task_cases

from neuromark import registry
from neuromark.cli import main
from neuromark.registry import DuplicateEntryError, ManifestError, families, tasks
from neuromark.testing import check_task

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = families()


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_every_family_has_the_one_shape(family):
    package = importlib.import_module(family.package)
    folder = Path(package.__file__).parent
    assert family.summary, f"{family.package}: the __init__ has no docstring (what it measures)"
    assert family.entries and any(family.entries.values()), f"{family.package}: an empty MANIFEST"
    cases = cases_module(family)
    for table in TABLES:
        assert isinstance(getattr(cases, table, None), dict), f"{cases.__name__}: no {table} dict"
        assert cases.__doc__, f"{cases.__name__}: no docstring"
    readme = folder / "README.md"
    assert readme.is_file(), f"{family.package}: no README.md"
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# ") and f"configs/{family.name}/" in text, \
        f"{readme}: a title, and the configs folder configs/{family.name}/"
    configs = ROOT / "configs" / family.name
    assert configs.is_dir() and any(configs.glob("*.yaml")), f"no configs in configs/{family.name}/"


def test_neuromark_list_prints_every_family(capsys):
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    families_part = listing.split("families:\n", 1)[1]
    for family in FAMILIES:
        assert f"  {family.name:<18s} {family.summary}" in families_part


def test_every_task_has_exactly_one_case():
    cases = task_cases()  # a task two families give a case fails there, naming both
    missing = [f"{name} (declared by family {tasks.family_of(name)!r})" for name in tasks.names()
               if name not in cases]
    assert not missing, f"tasks without a case in their family's cases.TASK_CASES: {', '.join(missing)}"
    assert set(cases) <= set(tasks.names()), f"cases of no task: {sorted(set(cases) - set(tasks.names()))}"
    for name, found in cases.items():
        assert found.family == tasks.family_of(name), \
            f"task {name!r} of family {tasks.family_of(name)!r} has its case in family {found.family!r}"


# --- a third-party family -------------------------------------------------------------------

INIT = '''
"""{name}: the sum of the first numbers of a toy data set (a third-party family of the tests)."""

MANIFEST = {{
    "tasks": {{"{name}_sum": ".task:TASK"}},
    "datasets": {{"{name}_numbers": ".data:numbers"}},
    "commands": {{"{name}-hello": ".cli:register"}},
}}
'''

DATA = '''
def numbers(split="test", limit=10):
    """The numbers 0 .. limit - 1 (the split does not matter)."""
    return list(range(limit))
'''

TASK = '''
from neuromark.config import IdentitySettings, StrictModel
from neuromark.registry import datasets
from neuromark.results import Score
from neuromark.tasks.base import TaskBase, task_results


class SumSettings(StrictModel):
    task: str
    benchmark: IdentitySettings
    limit: int = 10


class SumTask(TaskBase):
    """The sum of the family's first ``limit`` numbers."""

    name = "{name}_sum"
    settings_model = SumSettings

    def execute(self, plan, ctx):
        s = plan.settings
        total = float(sum(datasets.get("{name}_numbers")(split="test", limit=s.limit)))
        return [task_results({{"total": Score(total)}}, benchmark=s.benchmark.info(), model=None,
                             effective=s, device=None)]


TASK = SumTask()
'''

CLI = '''
def register(subparsers):
    parser = subparsers.add_parser("{name}-hello", help="say hello from the {name} family")
    parser.set_defaults(func=lambda args: print("hello from {name}") or 0)
'''

CASES = '''
"""The cases of the {name} family."""

TASK_CASES = {{"{name}_sum": lambda tmp_path, cache, monkeypatch: {{
    "config": {{"task": "{name}_sum", "benchmark": {{"id": "{name}-sum", "version": "1.0"}}, "limit": 4}},
    "repeat": True, "flags": {{"device": False, "evaluated": False}}}}}}
DATASET_CASES = {{}}
SUT_CASES = {{}}
'''


def write_family(folder: Path, name: str, *, manifest: str | None = None, cases: bool = True) -> str:
    """The package ``<name>_pkg`` of the family ``name`` in ``folder``, with its dist-info
    declaring ``family.<name>``; ``manifest`` replaces the MANIFEST. Returns the package."""
    package = f"{name}_pkg"
    root = folder / package
    root.mkdir(parents=True)
    init = INIT.format(name=name)
    if manifest is not None:
        init = init[:init.index("MANIFEST")] + f"MANIFEST = {manifest}\n"
    files = {"__init__.py": init, "data.py": DATA, "task.py": TASK, "cli.py": CLI}
    if cases:
        files["cases.py"] = CASES
    for file, text in files.items():
        (root / file).write_text(textwrap.dedent(text.format(name=name) if file != "__init__.py" else text))
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[neuromark.plugins]\nfamily.{name} = {package}\n")
    return package


@pytest.fixture
def plugin_folder(tmp_path, monkeypatch):
    """A folder on ``sys.path`` for plugin packages; every registry re-reads the plugins, and
    is restored (with ``sys.modules``) afterwards."""
    for reg in registry.REGISTRIES.values():
        reg.names()  # the installed families' entries first, so the copies hold them
        for attr in ("_entries", "_origins", "_families"):
            monkeypatch.setattr(reg, attr, dict(getattr(reg, attr)))
        monkeypatch.setattr(reg, "_plugins_loaded", False)
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    before = set(sys.modules)
    yield folder
    for module in set(sys.modules) - before:
        if module.split(".")[0].endswith("_pkg"):
            del sys.modules[module]


def test_a_third_party_family_is_loaded(plugin_folder, tmp_path, capsys):
    package = write_family(plugin_folder, "toyfam")
    assert [f.package for f in families() if f.name == "toyfam"] == [package]
    assert tasks.family_of("toyfam_sum") == "toyfam"
    assert registry.datasets.family_of("toyfam_numbers") == "toyfam"
    assert registry.commands.family_of("toyfam-hello") == "toyfam"
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "toyfam-hello" in capsys.readouterr().out
    assert main(["toyfam-hello"]) == 0
    assert capsys.readouterr().out == "hello from toyfam\n"
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "toyfam" in listing.split("families:\n", 1)[1] and "toyfam_sum (toyfam)" in listing
    config = tmp_path / "sum.yaml"
    config.write_text('task: toyfam_sum\nbenchmark: {id: toyfam-sum, version: "1.0"}\nlimit: 5\n')
    assert main(["run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    (saved,) = (tmp_path / "out").glob("*.json")
    assert json.loads(saved.read_text())["scores"]["total"]["value"] == 0 + 1 + 2 + 3 + 4
    assert task_cases()["toyfam_sum"].family == "toyfam"  # its cases join the central tests'
    (tmp_path / "check").mkdir()
    case = run_task_case("toyfam_sum", tmp_path / "check", tmp_path / "check" / "cache", None)
    check = check_task("toyfam_sum", case["config"], tmp_path / "check", repeat=case["repeat"])
    assert check.results[0].scores["total"].value == 0 + 1 + 2 + 3


def test_a_family_without_cases_fails_naming_it(plugin_folder):
    write_family(plugin_folder, "nocases", cases=False)
    with pytest.raises(AssertionError, match=r"family 'nocases' \(nocases_pkg\) has no cases module"):
        gather("TASK_CASES")


@pytest.mark.parametrize("manifest, said", [
    ('{"taks": {"x": ".task:TASK"}}', r"family 'badfam' \(badfam_pkg.MANIFEST\): unknown registry kind "
                                      r"'taks' \(did you mean 'tasks'\?\)"),
    ('{"tasks": {"badfam_sum": 3}}', r"family 'badfam' \(badfam_pkg.MANIFEST\)\['tasks'\]\['badfam_sum'\]: "
                                     r"a non-empty name and a 'module:attr' string; got 3"),
    ('{"tasks": [".task:TASK"]}', r"family 'badfam' \(badfam_pkg.MANIFEST\)\['tasks'\]: a mapping"),
    ('[]', r"family 'badfam' \(badfam_pkg.MANIFEST\): a family's __init__ defines MANIFEST"),
])
def test_a_malformed_manifest_names_the_family_and_the_key(plugin_folder, manifest, said):
    write_family(plugin_folder, "badfam", manifest=manifest)
    with pytest.raises(ManifestError, match=said):
        families()
    with pytest.raises(ManifestError, match=said):  # and on any registry's first use
        tasks.names()


def test_two_families_declaring_one_task_name_both(plugin_folder):
    write_family(plugin_folder, "onefam")
    write_family(plugin_folder, "twofam", manifest='{"tasks": {"onefam_sum": ".task:TASK"}}')
    with pytest.raises(DuplicateEntryError) as info:
        tasks.names()
    message = str(info.value)
    assert "tasks entry 'onefam_sum' is declared twice" in message
    assert "family 'onefam' (onefam_pkg)" in message and "family 'twofam' (twofam_pkg)" in message


def test_a_family_whose_package_fails_to_import_is_named(plugin_folder):
    """A broken plugin package (its ``__init__`` raises) is refused naming the family, its
    package and the cause, on any registry's first use; never a bare ImportError."""
    write_family(plugin_folder, "brokenfam",
                 manifest='{}\nimport no_such_module_of_brokenfam  # noqa: F401')
    said = (r"family 'brokenfam': its package brokenfam_pkg cannot be imported: "
            r"ModuleNotFoundError: No module named 'no_such_module_of_brokenfam'")
    with pytest.raises(ManifestError, match=said):
        families()
    with pytest.raises(ManifestError, match=said):
        registry.models.names()


def test_an_uninstalled_source_tree_says_so_instead_of_losing_the_families(monkeypatch):
    """Without neuromark's own entry point (a source tree on PYTHONPATH, never installed) the
    families cannot be found: the first registry use says why and what to do, instead of
    reporting the built-in tasks as unknown names."""
    from neuromark.errors import NeuromarkError

    monkeypatch.setattr(registry, "plugin_entry_points", lambda key=None: ())
    monkeypatch.setattr(tasks, "_plugins_loaded", False)
    with pytest.raises(NeuromarkError, match=r"entry point 'families.neuromark' of its installed "
                                              r"metadata, and none was found.*pip install -e \."):
        tasks.get("qubo")


def test_a_package_of_families_without_a_manifest_in_one_fails_naming_it(plugin_folder):
    """In a package of families (``families.NAME``, as neuromark's own), a sub-package without
    a ``MANIFEST`` is refused naming it, never left out of the registries in silence."""
    root = plugin_folder / "shelf_pkg"
    (root / "forgotten").mkdir(parents=True)
    (root / "__init__.py").write_text('"""Families."""\n')
    (root / "forgotten" / "__init__.py").write_text('"""A family without its manifest."""\n')
    info = plugin_folder / "shelf-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shelf\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[neuromark.plugins]\nfamilies.shelf = shelf_pkg\n")
    with pytest.raises(ManifestError, match=r"family 'forgotten' \(shelf_pkg.forgotten.MANIFEST\): "
                                            r"a family's __init__ defines MANIFEST"):
        families()
