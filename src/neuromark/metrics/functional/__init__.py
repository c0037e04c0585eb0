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

from neuromark._lazy import by_module, lazy_attributes

_LAZY = by_module(__name__, {
    "correctness": ("accuracy", "mse", "smape", "r2", "smape_terms"),
    "sparsity": ("zero_fraction", "weight_zero_counts"),
    "synops": ("masked_counts", "weight_column_nnz", "conv_input_counts"),
    "coco": ("coco_map",),
    "stats": ("standard_error", "MeanStats"),
    "neuron_ops": ("neuron_cost", "neuron_operations", "SNNTORCH_COSTS"),
    "energy": ("energy_estimate",),
    "energy_profiles": ("EnergyProfile", "load_profile"),
})

__all__ = sorted(_LAZY)

__getattr__ = lazy_attributes(__name__, _LAZY)
