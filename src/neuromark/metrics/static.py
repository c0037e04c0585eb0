"""Static metrics: footprint, parameter count, connection sparsity (NeuroBench, Methods).

Each is handed a model adapter (see :class:`neuromark.metrics.base.StaticMetric`), never a
bare network: wrap one with ``neuromark.models.as_adapter(net)``.
"""

from __future__ import annotations

from typing import Any

from neuromark.metrics.base import StaticMetric, check_adapter
from neuromark.metrics.functional.sparsity import weight_zero_counts, zero_fraction
from neuromark.results import Score


class Footprint(StaticMetric):
    """Bytes of all parameters and buffers plus the neuron state needed for ONE sample.

    State tensors (``mem``, ``syn``, ...) carry a batch dimension after a run; they are
    counted per sample, so the figure does not depend on the batch size of the last run
    (neurobench 2.3.0 counts the whole batch's state). Before any run, state tensors are
    counted as they are (snnTorch keeps a scalar until the first step), so the runner
    computes footprint after the workload.
    """

    name = "footprint"
    higher_is_better = False
    unit = "bytes"

    def compute(self, adapter: Any) -> Score:
        adapter = check_adapter(adapter, type(self).__name__)
        state = adapter.state()
        state_ids = {id(t) for t in state.values()}
        params = sum(p.numel() * p.element_size() for p in adapter.module.parameters())
        buffers = sum(b.numel() * b.element_size() for b in adapter.module.buffers()
                      if id(b) not in state_ids)
        batch = adapter.last_batch_size
        neuron_state = 0
        for tensor in state.values():
            per_sample = tensor.numel()
            if batch and tensor.dim() >= 1 and tensor.shape[0] == batch:
                per_sample //= batch
            neuron_state += per_sample * tensor.element_size()
        return Score(params + buffers + neuron_state, unit=self.unit,
                     higher_is_better=self.higher_is_better,
                     raw={"parameters": params, "buffers": buffers, "neuron_state": neuron_state})


class ParameterCount(StaticMetric):
    """Number of parameter elements."""

    name = "parameter_count"
    higher_is_better = False

    def compute(self, adapter: Any) -> Score:
        adapter = check_adapter(adapter, type(self).__name__)
        return Score(sum(p.numel() for p in adapter.module.parameters()),
                     higher_is_better=self.higher_is_better)


class ConnectionSparsity(StaticMetric):
    """Zero weights / all weights over connection layers (biases excluded)."""

    name = "connection_sparsity"
    higher_is_better = True

    def compute(self, adapter: Any) -> Score:
        adapter = check_adapter(adapter, type(self).__name__)
        zeros, total = weight_zero_counts(adapter.connection_layers())
        return Score(zero_fraction(zeros, total), higher_is_better=self.higher_is_better)
