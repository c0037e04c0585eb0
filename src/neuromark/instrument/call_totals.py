"""Per-layer operation totals of successive calls, shared by the Linear and Conv counters."""

from __future__ import annotations

import torch
from torch import Tensor


def torch_counts(rows: Tensor, weight_counts: Tensor) -> tuple[Tensor, Tensor]:
    """(effective ops, spike residual) of ``rows`` (R, K) against ``weight_counts`` (K,),
    the number of non-zero weights each input element meets, as 0-d tensors (no host sync):
    effective = sum over rows of [x != 0] @ weight_counts; residual = sum (|x| - [x != 0])**2,
    0 exactly for spike inputs (-1, 0, 1) and NaN for NaN inputs. The torch path for
    tensors the kernels cannot read (GPU, bfloat16, float16)."""
    if rows.dtype not in (torch.float32, torch.float64):
        rows = rows.to(torch.float32)
    magnitude = rows.abs()
    indicator = magnitude.sign()  # 1 where x != 0 (NaN -> 0)
    # per-column counts are exact in float32 (rows < 2**24); the dot product is float64
    columns = indicator.sum(dim=0, dtype=torch.float64)
    defect = (magnitude - indicator).reshape(-1)
    return columns @ weight_counts.to(columns.device, torch.float64), torch.dot(defect, defect)


class CallTotals:
    """Effective ACs and MACs and dense ops of one layer since the last :meth:`take`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.acs = 0.0
        self.macs = 0.0
        self.dense = 0
        self.nan_seen = False
        self.pending: list[tuple[Tensor, Tensor]] = []  # torch path: (effective, residual)

    def record(self, effective: float, residual: float) -> None:
        """One call's effective ops, as ACs when its spike residual is 0."""
        if residual != residual:
            self.nan_seen = True
        elif residual == 0.0:
            self.acs += effective
        else:
            self.macs += effective

    def take(self) -> tuple[float, float, float]:
        """(effective ACs, effective MACs, dense) since the last take; resets the totals.
        NaN input seen in the meantime raises ``ValueError`` naming the layer."""
        if self.pending:
            effective = torch.stack([e for e, _ in self.pending]).tolist()
            residuals = torch.stack([r.to(torch.float64) for _, r in self.pending]).tolist()
            for e, r in zip(effective, residuals):
                self.record(e, r)
        totals = (float(self.acs), float(self.macs), float(self.dense))
        nan_seen = self.nan_seen
        self.reset()
        if nan_seen:
            raise ValueError(f"connection layer {self.name!r} received NaN input")
        return totals

    def reset(self) -> None:
        self.pending.clear()
        self.acs = self.macs = 0.0
        self.dense = 0
        self.nan_seen = False
