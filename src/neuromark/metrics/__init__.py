"""Metrics: pure functions in ``functional/`` plus thin static and workload classes."""

from __future__ import annotations

from neuromark._lazy import lazy_attributes

_LAZY = {
    "Footprint": "neuromark.metrics.static",
    "ParameterCount": "neuromark.metrics.static",
    "ConnectionSparsity": "neuromark.metrics.static",
    "ClassificationAccuracy": "neuromark.metrics.correctness",
    "MSE": "neuromark.metrics.correctness",
    "SMAPE": "neuromark.metrics.correctness",
    "R2": "neuromark.metrics.correctness",
    "ActivationSparsity": "neuromark.metrics.complexity",
    "SynapticOperations": "neuromark.metrics.complexity",
    "MembraneUpdates": "neuromark.metrics.complexity",
    "NeuronOperations": "neuromark.metrics.neuron_ops",
    "EnergyEstimate": "neuromark.metrics.energy",
    "StaticMetric": "neuromark.metrics.base",
    "WorkloadMetric": "neuromark.metrics.base",
    "Step": "neuromark.metrics.base",
}

__all__ = sorted(_LAZY)


__getattr__ = lazy_attributes(__name__, _LAZY)
