"""Pure metric functions: correctness, counting and statistics, no state.

The public API, loaded on first use (``import neuromark.metrics.functional`` imports
nothing heavy):

Correctness (tensors, numpy arrays or lists of shape (N, ...); each returns a float):
    :func:`accuracy`, :func:`mse`, :func:`smape`, :func:`r2`; :func:`coco_map` (COCO box AP
    of timed detections).

Sparsity and synaptic-operation arithmetic (what the complexity metrics and the activity
probes count with):
    :func:`zero_fraction`, :func:`weight_zero_counts`, :func:`masked_counts`,
    :func:`weight_column_nnz`, :func:`conv_input_counts`.

Statistics:
    :func:`standard_error`, :class:`MeanStats`.

Neuron operations (cost per neuron update, NeuroBench's snnTorch table):
    :func:`neuron_cost`, :func:`neuron_operations`, :data:`SNNTORCH_COSTS`.

Energy estimates (joules from op counts and a named, versioned profile; never a measurement):
    :func:`energy_estimate`, :class:`EnergyProfile`, :func:`load_profile`.

Example:
    >>> from neuromark.metrics.functional import accuracy, smape
    >>> accuracy([1, 2, 3, 4], [1, 2, 0, 4])
    0.75
    >>> smape([3.0, 0.0], [1.0, 0.0])
    50.0
"""

from __future__ import annotations

from neuromark._lazy import lazy_attributes

_LAZY = {
    "accuracy": "neuromark.metrics.functional.correctness",
    "mse": "neuromark.metrics.functional.correctness",
    "smape": "neuromark.metrics.functional.correctness",
    "r2": "neuromark.metrics.functional.correctness",
    "smape_terms": "neuromark.metrics.functional.correctness",
    "zero_fraction": "neuromark.metrics.functional.sparsity",
    "weight_zero_counts": "neuromark.metrics.functional.sparsity",
    "masked_counts": "neuromark.metrics.functional.synops",
    "weight_column_nnz": "neuromark.metrics.functional.synops",
    "conv_input_counts": "neuromark.metrics.functional.synops",
    "coco_map": "neuromark.metrics.functional.coco",
    "standard_error": "neuromark.metrics.functional.stats",
    "MeanStats": "neuromark.metrics.functional.stats",
    "neuron_cost": "neuromark.metrics.functional.neuron_ops",
    "neuron_operations": "neuromark.metrics.functional.neuron_ops",
    "SNNTORCH_COSTS": "neuromark.metrics.functional.neuron_ops",
    "energy_estimate": "neuromark.metrics.functional.energy",
    "EnergyProfile": "neuromark.metrics.functional.energy_profiles",
    "load_profile": "neuromark.metrics.functional.energy_profiles",
}

__all__ = sorted(_LAZY)

__getattr__ = lazy_attributes(__name__, _LAZY)
