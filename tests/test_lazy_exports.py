"""The lazy package exports (``neuromark._lazy``): every listed name resolves to the object
its submodule defines, and a name listed under two submodules is refused."""

from __future__ import annotations

import importlib

import pytest

from neuromark._lazy import by_module, lazy_attributes


@pytest.mark.parametrize("package", ["neuromark.metrics", "neuromark.metrics.functional"])
def test_every_exported_name_is_its_submodules_object(package):
    pkg = importlib.import_module(package)
    assert pkg.__all__, package
    for name in pkg.__all__:
        module = importlib.import_module(pkg._LAZY[name])
        assert getattr(pkg, name) is getattr(module, name), f"{package}.{name}"


def test_by_module_maps_names_to_submodules_and_refuses_a_name_listed_twice():
    assert by_module("p", {"a": ("x", "y"), "b": ("z",)}) == {"x": "p.a", "y": "p.a", "z": "p.b"}
    with pytest.raises(ValueError, match=r"'x' is listed under both p\.a and p\.b"):
        by_module("p", {"a": ("x",), "b": ("x",)})


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    getter = lazy_attributes("neuromark.metrics", by_module("neuromark.metrics", {"static": ("Footprint",)}))
    assert getter("Footprint").__name__ == "Footprint"
    with pytest.raises(AttributeError, match="'neuromark.metrics' has no attribute 'Nope'"):
        getter("Nope")
