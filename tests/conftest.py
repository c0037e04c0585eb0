"""Shared test helpers."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
import torch
from torch import nn

#: ``$NEUROMARK_REFERENCE_DIR`` or ``tests/data/reference`` (reference figures shipped with
#: their provenance; a test whose file is absent there skips).
REFERENCE_DIR = Path(os.environ.get("NEUROMARK_REFERENCE_DIR",
                                    Path(__file__).resolve().parent / "data" / "reference"))


#: ``results/`` of the checkout: tests write under their ``tmp_path`` only.
CHECKOUT_RESULTS = Path(__file__).resolve().parent.parent / "results"


@contextlib.contextmanager
def no_new_entries(folder: Path):
    """Fail (``pytest.fail``) when the block creates anything in ``folder``."""
    def entries() -> set[str]:
        return set(os.listdir(folder)) if folder.is_dir() else set()

    existed, before = folder.exists(), entries()
    yield
    made = sorted(entries() - before) or ([] if existed or not folder.exists() else [folder.name])
    if made:
        pytest.fail(f"the test created {', '.join(made)} in {folder}; write under tmp_path "
                    "(pass --out or monkeypatch.chdir(tmp_path))", pytrace=False)


@pytest.fixture(autouse=True)
def _no_results_in_the_checkout():
    """A test that creates anything in the checkout's ``results/`` (a command run without
    ``--out`` from the checkout) fails."""
    with no_new_entries(CHECKOUT_RESULTS):
        yield


class CountingLIF(nn.Module):
    """A tiny LIF with a ``mem`` attribute rebound each step (as snnTorch does), in the
    dtype of its input."""

    neuromark_neuron = True

    def __init__(self) -> None:
        super().__init__()
        self.mem = torch.zeros(())

    def reset_state(self) -> None:
        self.mem = torch.zeros(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.mem = 0.5 * self.mem + x
        spk = (self.mem >= 1).to(x.dtype)
        self.mem = self.mem - spk
        return spk
