"""The runner's check for NaN/inf model outputs (``runner._non_finite``): its fast path
(a finite sum) never hides a bad value, and an overflowing sum of finite values is not
reported as one."""

from __future__ import annotations

import torch

from neuromark.runner import _non_finite


def test_non_finite_outputs_are_named_and_finite_ones_pass():
    big = torch.full((4, 3), 3e38)  # every value finite, their float32 sum overflows
    assert not torch.isfinite(big.sum()) and _non_finite(big) == ""
    assert _non_finite(torch.zeros(0)) == "" and _non_finite(torch.arange(3)) == ""
    nan, inf = torch.zeros(5), torch.zeros(5)
    nan[2], inf[4] = float("nan"), float("-inf")
    both = torch.stack([nan, inf])
    assert _non_finite(nan) == "NaN" and _non_finite(inf) == "inf"
    assert _non_finite(both) == "NaN and inf" and _non_finite((big, [inf])) == "inf"
