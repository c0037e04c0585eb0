"""Per-layer operation totals of successive calls, shared by all connection-layer counters."""

from __future__ import annotations

import torch
from torch import Tensor

from neuromark.instrument.deferred import KeepBudget, KeptCalls, totals


class CallTotals:
    """Effective ACs and MACs and dense ops of one layer since the last :meth:`take`."""

    def __init__(self, name: str, budget: KeepBudget | None = None) -> None:
        self.name = name
        #: torch path: the calls kept for one reduction per batch (see ``deferred``)
        self.kept = KeptCalls(name, budget if budget is not None else KeepBudget())
        self.acs = 0.0
        self.macs = 0.0
        self.dense = 0
        self.nan_seen = False
        self.empty_seen = False  # a call with an empty input (no ops, weights still used)
        self.pending: list[tuple[Tensor, Tensor]] = []  # torch path: (effective, residual)

    def record(self, effective: float, residual: float) -> None:
        """One call's effective ops, as ACs when its spike residual is 0."""
        if residual != residual:
            self.nan_seen = True
        elif residual == 0.0:
            self.acs += effective
        else:
            self.macs += effective

    def flush(self) -> None:
        """Record the torch path's kept and pending counts now (one host sync each)."""
        if self.kept.calls or self.kept.partials:
            acs, macs, nan_seen = totals(self.kept.reduce())
            self.acs += acs
            self.macs += macs
            self.nan_seen |= nan_seen
        if self.pending:
            effective = torch.stack([e for e, _ in self.pending]).tolist()
            residuals = torch.stack([r.to(torch.float64) for _, r in self.pending]).tolist()
            self.pending.clear()
            for e, r in zip(effective, residuals):
                self.record(e, r)

    def take(self) -> tuple[float, float, float]:
        """(effective ACs, effective MACs, dense) since the last take; resets the totals.
        NaN input seen in the meantime raises ``ValueError`` naming the layer."""
        self.flush()
        totals = (float(self.acs), float(self.macs), float(self.dense))
        nan_seen = self.nan_seen
        self.reset()
        if nan_seen:
            raise ValueError(f"connection layer {self.name!r} received NaN input")
        return totals

    def reset(self) -> None:
        self.pending.clear()
        self.kept.calls.clear()
        self.kept.partials.clear()
        self.kept.batch = None
        self.acs = self.macs = 0.0
        self.dense = 0
        self.nan_seen = False
