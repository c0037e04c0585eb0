"""Instrument.paused() (#29): calls inside count nothing, calls before and after count as
usual, on both counting paths and for intercepted weights."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark.instrument.probes import Instrument
from neuromark.models import as_adapter


class Functional(nn.Module):
    """A weight used through F.linear (counted by interception)."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.full((2, 3), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.w)


@pytest.mark.parametrize("path", ["auto", "torch"])
@pytest.mark.parametrize("make", [lambda: nn.Linear(3, 2, bias=False), Functional])
def test_calls_inside_the_pause_count_nothing(path, make):
    adapter = as_adapter(make())
    x = torch.tensor([[0.5, 2.0, 0.0]])  # 2 non-zero inputs x 2 outputs: 4 MACs, 6 dense
    with Instrument(adapter, {"synops"}, counting_path=path) as probe:
        adapter(x)
        with probe.paused():
            with probe.paused():  # nested: still paused, resumed once
                adapter(x)
            with torch.enable_grad():
                adapter(x).sum().backward()
        adapter(x)
        ops = list(probe.collect().ops.values())
        assert sum(o.dense for o in ops) == 12  # two counted calls of 6
        assert sum(o.effective_macs for o in ops) == 8
        adapter(x)
        assert sum(o.dense for o in probe.collect().ops.values()) == 6
    assert "forward" not in adapter.module.__dict__  # detached after the run
