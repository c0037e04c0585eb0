"""Static metrics: footprint, parameter count, connection sparsity (NeuroBench, Methods).

Each is handed a model adapter (see :class:`neuromark.metrics.base.StaticMetric`), never a
bare network: wrap one with ``neuromark.models.as_adapter(net)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from neuromark.devices import module_device, move_to
from neuromark.metrics.base import StaticMetric, check_adapter
from neuromark.metrics.functional.precision import neurobench_rule_bytes, reduced, tensor_precision
from neuromark.metrics.functional.sparsity import weight_zero_counts, zero_fraction
from neuromark.results import Score


class _BeforeData:
    """The NeuroBench-rule figure as the model holds it before any data: recorded by
    :meth:`before_run` (the runner calls it before its first batch), used once."""

    _before_data: int | None = None

    def before_run(self, adapter: Any) -> None:
        """Record the NeuroBench-rule bytes of ``adapter``'s module now (before any data)."""
        self._before_data = neurobench_rule_bytes(check_adapter(adapter, type(self).__name__).module)

    def neurobench_bytes(self, adapter: Any) -> int:
        """The NeuroBench-rule figure: recorded by :meth:`before_run`, else read now."""
        recorded, self._before_data = self._before_data, None  # one run's figure, used once
        return recorded if recorded is not None else neurobench_rule_bytes(adapter.module)


class Footprint(_BeforeData, StaticMetric):
    """Bytes of all parameters and buffers plus the neuron state needed for ONE sample.

    Each parameter and buffer is counted at its stored precision, packed and rounded up
    per tensor (:mod:`neuromark.metrics.functional.precision`: quantised dtypes,
    ``torch.ao`` fake-quant observers, the adapter's ``weight_bits`` declaration), torch's
    quantised modules' packed weights among the parameters; ``raw["precision"]`` lists the
    tensors below float precision with their bits and where the width came from.

    Neuron state (``mem``, ``syn``, the last spikes ``spk`` of recurrent neurons such as
    snnTorch's ``RLeaky``, a NIR graph's recurrent edges: whatever the adapter's
    ``state()`` returns) is counted per sample and never multiplied by a batch, so the
    footprint does not depend on the evaluation batch size (neurobench 2.3.0 counts the
    whole batch's state, and ``RLeaky``'s spikes as a buffer):
    - after a call through the adapter, its state tensors are divided by the batch size
      the adapter recorded, along its ``batch_dim`` (an unbatched call: taken whole);
    - a module that ran elsewhere (the adapter has not been called): a state of two or
      more dimensions is divided by its size along the adapter's batch dimension;
    - a module that never ran (an empty state, e.g. snnTorch's fresh ``mem``): the state
      is "not measured" (``raw["neuron_state"]`` is None) unless ``example_input`` is
      given, which is then run through the adapter (state reset first) to measure it.

    Beside it, ``raw["neurobench_rule_bytes"]`` is the footprint under NeuroBench 2.3.0's
    rule (:class:`FootprintNeurobench`), read before any data when a
    :class:`~neuromark.runner.Benchmark` runs the metric, so the two rules are never set
    side by side unlabelled; ``raw["rule"]`` names this one.

    Args:
        example_input: a batch (or one unbatched sample) to measure neuron state on.
    """

    name = "footprint"
    higher_is_better = False
    unit = "bytes"
    rule = "neuromark: parameters and buffers at stored precision + one sample's neuron state"

    def __init__(self, example_input: Any = None) -> None:
        self.example_input = example_input

    def compute(self, adapter: Any) -> Score:
        adapter = check_adapter(adapter, type(self).__name__)
        neurobench = self.neurobench_bytes(adapter)
        if self.example_input is not None:
            _run_example(adapter, self.example_input)
        state = {id(t): t for t in adapter.state().values()}  # one tensor counted once
        state_ids = set(state)
        tensors = tensor_precision(adapter, skip=state_ids)
        params = sum(e["bytes"] for e in tensors.values() if e["kind"] != "buffer")
        buffers = sum(e["bytes"] for e in tensors.values() if e["kind"] == "buffer")
        neuron_state = per_sample_state_bytes(state.values(), adapter)
        total = params + buffers + (neuron_state or 0)
        return Score(total, unit=self.unit, higher_is_better=self.higher_is_better,
                     raw={"parameters": params, "buffers": buffers, "neuron_state": neuron_state,
                          "precision": reduced(tensors), "rule": self.rule,
                          "neurobench_rule_bytes": neurobench})


class FootprintNeurobench(_BeforeData, StaticMetric):
    """Footprint under NeuroBench 2.3.0's rule, as its own score (``footprint_neurobench``):
    ``numel() * element_size()`` of every parameter and buffer as the model holds them
    before any data (its static metrics run before the data loop): no packing of narrow
    weights, no per-sample neuron state, an input history buffer at its initial size.
    NeuroBench's published footprints (e.g. the primate ANN2D's 20,824 B on Indy) follow
    this rule; :class:`Footprint` (``footprint``) follows ours. Run by a
    :class:`~neuromark.runner.Benchmark`, the figure is read before the first batch;
    called directly, on the model as it is.
    """

    name = "footprint_neurobench"
    higher_is_better = False
    unit = "bytes"
    rule = "neurobench 2.3.0: parameters and buffers, numel x element_size, before any data"

    def compute(self, adapter: Any) -> Score:
        adapter = check_adapter(adapter, type(self).__name__)
        module = adapter.module
        params = sum(int(p.numel()) * int(p.element_size()) for p in module.parameters())
        return Score(self.neurobench_bytes(adapter), unit=self.unit,
                     higher_is_better=self.higher_is_better,
                     raw={"rule": self.rule, "parameters_now": params})


def _run_example(adapter: Any, example: Any) -> None:
    """Run ``example`` through ``adapter``, moved to the device its module is on."""
    import torch

    adapter.reset_state()
    with torch.inference_mode():
        adapter(move_to(example, module_device(getattr(adapter, "module", None))))


def per_sample_state_bytes(tensors: Iterable[Any], adapter: Any) -> int | None:
    """Bytes of neuron state for one sample (see :class:`Footprint`), or None when some
    state tensor is empty (the module never ran)."""
    tensors = list(tensors)
    if any(t.numel() == 0 for t in tensors):
        return None
    batch = adapter.last_batch_size
    batched = getattr(adapter, "last_batched", True)
    dim = getattr(adapter, "batch_dim", 0)
    total = 0
    for tensor in tensors:
        per_sample = tensor.numel()
        if dim is not None and tensor.dim() > dim:
            if batch is None and tensor.dim() >= 2:  # ran elsewhere: its own batch size
                per_sample //= tensor.shape[dim]
            elif batch and batched and tensor.shape[dim] == batch:
                per_sample //= batch
        total += per_sample * tensor.element_size()
    return total


class ParameterCount(StaticMetric):
    """Number of parameter elements."""

    name = "parameter_count"
    higher_is_better = False

    def compute(self, adapter: Any) -> Score:
        adapter = check_adapter(adapter, type(self).__name__)
        return Score(sum(p.numel() for p in adapter.module.parameters()),
                     higher_is_better=self.higher_is_better)


class ConnectionSparsity(StaticMetric):
    """Zero weights / all weights over connection layers (biases excluded).

    Args:
        recurrent_biases: also count the biases of recurrent layers and cells, as
            neurobench 2.3.0 does.
    """

    name = "connection_sparsity"
    higher_is_better = True

    def __init__(self, recurrent_biases: bool = False) -> None:
        self.recurrent_biases = recurrent_biases

    def compute(self, adapter: Any) -> Score:
        adapter = check_adapter(adapter, type(self).__name__)
        zeros, total = weight_zero_counts(adapter.connection_layers(), self.recurrent_biases)
        return Score(zero_fraction(zeros, total), higher_is_better=self.higher_is_better)
