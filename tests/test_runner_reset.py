"""The runner's state-reset rule: per batch, per stream, never."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neuromark.errors import DataError
from neuromark.metrics.correctness import MSE
from neuromark.runner import Benchmark


class Accumulator(nn.Module):
    """Output = running sum of its inputs since the last reset (state ``total``)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(1, 1, bias=False)
        nn.init.ones_(self.lin.weight)
        self.total: torch.Tensor | None = None

    def reset_state(self) -> None:
        self.total = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, L, 1) -> (B, L, 1)
        out = torch.cumsum(self.lin(x), dim=1)
        if self.total is not None:
            out = out + self.total
        self.total = out[:, -1:]
        return out


def run(reset: str, batches: list) -> list[float]:
    seen: list[float] = []

    def capture(output: torch.Tensor) -> torch.Tensor:
        seen.extend(output.reshape(-1).tolist())
        return output.reshape(-1, 1)

    flat = [(b[0], b[1].reshape(-1, 1), *b[2:]) for b in batches]
    Benchmark(Accumulator(), flat, postprocessors=[capture], metrics=[MSE()], quiet=True,
              reset=reset).run()
    return seen


def chunks(starts: list[bool]) -> list:
    return [(torch.ones(1, 2, 1), torch.zeros(1, 2), {"new_stream": s}) for s in starts]


def test_reset_per_batch_is_the_default():
    assert run("batch", chunks([True, False, True])) == [1, 2, 1, 2, 1, 2]


def test_reset_per_stream_carries_state_across_chunks():
    assert run("stream", chunks([True, False, True, False, False])) == [1, 2, 3, 4, 1, 2, 3, 4, 5, 6]


def test_reset_never_is_one_stream():
    assert run("never", chunks([True, False, True])) == [1, 2, 3, 4, 5, 6]
    results = Benchmark(Accumulator(), [(torch.ones(1, 2, 1), torch.zeros(1, 2, 1))] * 2,
                        postprocessors=[lambda o: o], metrics=[MSE()], quiet=True,
                        reset="never").run()
    assert results.details["state_resets"] == {"rule": "never", "count": 1}


def test_parallel_streams_keep_per_row_state():
    batch = (torch.stack([torch.ones(2, 1), 2 * torch.ones(2, 1)]), torch.zeros(2, 2))
    assert run("stream", [(*batch, {"new_stream": True}), (*batch, {"new_stream": False})]) == \
        [1, 2, 2, 4, 3, 4, 6, 8]


def test_stream_rule_needs_marked_batches():
    with pytest.raises(DataError, match="new_stream"):
        run("stream", [(torch.ones(1, 2, 1), torch.zeros(1, 2))])
    with pytest.raises(DataError, match="batch 0 must start a stream"):
        run("stream", chunks([False]))
    with pytest.raises(ValueError, match="reset='sometimes'"):
        Benchmark(Accumulator(), [], reset="sometimes")  # type: ignore[arg-type]
