"""Framework imports for the adapters: a broken install (any exception on import) is one
clear error naming the extra and the install command."""

from __future__ import annotations

import sys

import pytest

from neuromark.errors import MissingExtraError
from neuromark.models.frameworks import import_framework
from neuromark.registry import adapters


def test_broken_install_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "brokenfw.py").write_text("raise OSError('libtorchvision.so: undefined symbol')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MissingExtraError) as err:
        import_framework("brokenfw", "spikingjelly")
    text = str(err.value)
    assert "OSError: libtorchvision.so" in text and "neuromark[spikingjelly]" in text
    assert "--no-deps spikingjelly==2.0.0" in text
    sys.modules.pop("brokenfw", None)


@pytest.mark.parametrize("name, module", [("spikingjelly", "spikingjelly"), ("norse", "norse"),
                                          ("sinabs", "sinabs"), ("rockpool", "rockpool")])
def test_adapters_registered_and_absent_framework_is_clear(name, module):
    import torch

    cls = adapters.get(name)
    try:
        __import__(module)
    except Exception:
        with pytest.raises(MissingExtraError, match=f"neuromark\\[{name}\\]"):
            cls(torch.nn.Linear(2, 2))
    else:
        pytest.skip(f"{module} is installed here")
