"""Per-layer operation totals of successive calls, shared by all connection-layer counters.

Effective ops are split into ACs and MACs by two rules, both kept so that the metric can
report either (``SynapticOperations(mac_rule=...)``):
- per sample (the default): a sample's ops in a call are ACs when ITS input to the layer
  in that call holds only -1, 0 and 1, else MACs, so the split does not depend on which
  samples share a batch;
- per call (neurobench 2.3.0): all of a call's ops are ACs when the whole batch's input is
  binary, else MACs.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neuromark.instrument.deferred import KeepBudget, KeptCalls, totals

#: (per-sample ACs, per-sample MACs, dense, per-call ACs, per-call MACs)
Totals = tuple[float, float, float, float, float]


def rows_per_sample(x: Tensor) -> int:
    """Rows (vectors along the last dimension) per sample of a batch-first ``x``: sample
    ``i`` is ``x[i]``; a 1-d ``x`` is one sample of one row."""
    if x.dim() < 2 or x.shape[0] == 0:
        return 1
    return max(x.numel() // (x.shape[0] * max(x.shape[-1], 1)), 1)


class CallTotals:
    """Effective ACs and MACs (per-sample and per-call rules) and dense ops of one layer
    since the last :meth:`take`."""

    def __init__(self, name: str, budget: KeepBudget | None = None) -> None:
        self.name = name
        #: torch path: the calls kept for one reduction per batch (see ``deferred``)
        self.kept = KeptCalls(name, budget if budget is not None else KeepBudget())
        self.acs = 0.0  # per-sample rule
        self.macs = 0.0
        self.call_acs = 0.0  # per-call rule
        self.call_macs = 0.0
        self.dense = 0
        self.nan_seen = False
        self.empty_seen = False  # a call with an empty input (no ops, weights still used)
        #: torch path: per call, (effective, residual) per sample, 1-d tensors
        self.pending: list[tuple[Tensor, Tensor]] = []

    def record(self, effective: float, residual: float, acs: float, macs: float) -> None:
        """One call: its effective ops and spike residual (the per-call rule: ACs when
        the residual is 0) and its per-sample split ``acs``, ``macs``."""
        if residual != residual:
            self.nan_seen = True
            return
        if residual == 0.0:
            self.call_acs += effective
        else:
            self.call_macs += effective
        self.acs += acs
        self.macs += macs

    def flush(self) -> None:
        """Record the torch path's kept and pending counts now (one host sync each)."""
        if self.kept.calls or self.kept.partials:
            self._add(totals(self.kept.reduce()))
        if self.pending:
            pending, self.pending = self.pending, []
            sizes = [e.numel() for e, _ in pending]
            effective = torch.cat([e.reshape(-1).to(torch.float64) for e, _ in pending])
            residual = torch.cat([r.reshape(-1).to(torch.float64) for _, r in pending])
            values, residuals = effective.tolist(), residual.tolist()
            start = 0
            for size in sizes:
                e, r = values[start:start + size], residuals[start:start + size]
                start += size
                self.record(sum(e), sum(r), sum(v for v, q in zip(e, r) if q == 0),
                            sum(v for v, q in zip(e, r) if q > 0))

    def _add(self, counts: tuple[float, float, float, float, bool]) -> None:
        acs, macs, call_acs, call_macs, nan_seen = counts
        self.acs += acs
        self.macs += macs
        self.call_acs += call_acs
        self.call_macs += call_macs
        self.nan_seen |= nan_seen

    def take(self) -> Totals:
        """(ACs, MACs, dense, per-call ACs, per-call MACs) since the last take; resets the
        totals. NaN input seen in the meantime raises ``ValueError`` naming the layer."""
        self.flush()
        out = (float(self.acs), float(self.macs), float(self.dense),
               float(self.call_acs), float(self.call_macs))
        nan_seen = self.nan_seen
        self.reset()
        if nan_seen:
            raise ValueError(f"connection layer {self.name!r} received NaN input")
        return out

    def reset(self) -> None:
        self.pending.clear()
        self.kept.calls.clear()
        self.kept.partials.clear()
        self.kept.batch = None
        self.acs = self.macs = self.call_acs = self.call_macs = 0.0
        self.dense = 0
        self.nan_seen = False
