"""The lazy package exports (``neuromark._lazy``): every listed name resolves to the object
its submodule defines, and a name listed under two submodules is refused; the kernel's other
packages re-export nothing (release 0.2.0)."""

from __future__ import annotations

import importlib

import pytest

from neuromark._lazy import by_module, lazy_attributes


@pytest.mark.parametrize("package", ["neuromark", "neuromark.testing"])
def test_every_exported_name_is_its_submodules_object(package):
    pkg = importlib.import_module(package)
    assert pkg._LAZY and set(pkg._LAZY) <= set(pkg.__all__), package
    for name, target in pkg._LAZY.items():
        module = importlib.import_module(target)
        assert getattr(pkg, name) is getattr(module, name), f"{package}.{name}"


#: The kernel packages that re-export nothing since 0.2.0: each name is imported from the
#: module that defines it.
SILENT_PACKAGES = ("neuromark.data", "neuromark.models", "neuromark.metrics",
                   "neuromark.metrics.functional", "neuromark.processors",
                   "neuromark.processors.cochlea", "neuromark.training")


@pytest.mark.parametrize("package", SILENT_PACKAGES)
def test_kernel_packages_re_export_nothing(package):
    pkg = importlib.import_module(package)
    assert not hasattr(pkg, "_LAZY") and not hasattr(pkg, "__all__"), package
    assert not hasattr(pkg, "__getattr__"), package
    borrowed = sorted(name for name, value in vars(pkg).items() if not name.startswith("_")
                      and str(getattr(value, "__module__", "")).startswith("neuromark.")
                      and getattr(value, "__module__", "") != package)
    assert borrowed == [], f"{package} re-exports {borrowed}"


def test_by_module_maps_names_to_submodules_and_refuses_a_name_listed_twice():
    assert by_module("p", {"a": ("x", "y"), "b": ("z",)}) == {"x": "p.a", "y": "p.a", "z": "p.b"}
    with pytest.raises(ValueError, match=r"'x' is listed under both p\.a and p\.b"):
        by_module("p", {"a": ("x",), "b": ("x",)})


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    getter = lazy_attributes("neuromark.metrics", by_module("neuromark.metrics", {"static": ("Footprint",)}))
    assert getter("Footprint").__name__ == "Footprint"
    with pytest.raises(AttributeError, match="'neuromark.metrics' has no attribute 'Nope'"):
        getter("Nope")
