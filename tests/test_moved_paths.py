"""Import paths from before benchmark families had their own packages (issue 46) still
import, as the very module objects of their new homes (``neuromark._moved``)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from neuromark import _moved


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_every_old_path_is_the_new_module_object(old):
    new = _moved.MOVED[old]
    try:
        target = importlib.import_module(new)
    except ImportError as exc:  # an optional extra that is not installed
        pytest.skip(f"{new}: {exc}")
    assert importlib.import_module(old) is target
    assert old not in (getattr(target, "__name__", ""),)  # one object, its own name kept


def test_submodules_of_a_moved_package_are_one_object_too():
    from neuromark.system.qubo.solvers import tabu as old_tabu

    from neuromark.benchmarks.qubo.solvers import tabu

    assert old_tabu is tabu and tabu.__name__ == "neuromark.benchmarks.qubo.solvers.tabu"
    assert _moved.new_name("neuromark.closed_loop.ops") == "neuromark.benchmarks.closed_loop.ops"
    assert _moved.new_name("neuromark.data.events") is None  # not moved: the path finder's


def test_an_old_path_works_in_a_fresh_interpreter_and_loads_no_family_on_import_neuromark():
    code = ("import sys, neuromark; "
            "assert not [m for m in sys.modules if m.startswith('neuromark.benchmarks')]; "
            "from neuromark.data.shd import SHD; from neuromark.tasks.qubo import TASK; "
            "import neuromark.benchmarks.shd.datasets as d; assert SHD is d.SHD; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_an_unknown_old_looking_path_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("neuromark.data.no_such_reader")


def test_an_old_submodule_path_keeps_the_packages_re_exported_function():
    """``neuromark.system.qubo.energy`` (the module) loaded by its old name must not replace
    the package's ``energy`` (the function) that ``from neuromark.benchmarks.qubo import
    energy`` gives."""
    code = ("import sys, neuromark.system.qubo.energy, neuromark.system.qubo.gap; "
            "m = sys.modules['neuromark.system.qubo.energy']; "
            "from neuromark.benchmarks.qubo import energy, bks_gap; "
            "from neuromark.system.qubo import energy as old_energy; "
            "assert callable(energy) and callable(bks_gap) and old_energy is energy, energy; "
            "assert m.energy is energy; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
