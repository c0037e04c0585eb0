"""A checkpoint carrying pickled code is refused with a message that names the object and
gives no advice to load it unsafely; the code never runs."""

from __future__ import annotations

import os

import pytest
import torch

from neuromark.errors import DataError
from neuromark.models.checkpoint import read_weights


class _Payload:
    """Unpickling this would call ``os.system`` (it never is: weights_only refuses it)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"echo ran > {self.marker}",))


def test_pickled_code_is_refused_naming_the_object_and_never_runs(tmp_path):
    marker = tmp_path / "ran.txt"
    torch.save({"state_dict": _Payload(str(marker))}, tmp_path / "evil.pt")
    with pytest.raises(DataError) as info:
        read_weights(tmp_path / "evil.pt")
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 'evil.pt'}: refused: it holds pickled Python objects (")
    assert ".system)" in text and "weights_only` set to `False`" not in text
    assert info.value.__cause__ is None  # one message, no chained torch advice
    assert not marker.exists()


def test_plain_weights_still_load(tmp_path):
    torch.save(torch.nn.Linear(2, 1).state_dict(), tmp_path / "ok.pt")
    assert set(read_weights(tmp_path / "ok.pt")) == {"weight", "bias"}
