"""Metrics: pure functions in ``functional/`` plus thin static and workload classes."""

from __future__ import annotations

from neuromark._lazy import by_module, lazy_attributes

_LAZY = by_module(__name__, {
    "static": ("Footprint", "ParameterCount", "ConnectionSparsity"),
    "correctness": ("ClassificationAccuracy", "MSE", "SMAPE", "R2"),
    "complexity": ("ActivationSparsity", "SynapticOperations", "MembraneUpdates"),
    "neuron_ops": ("NeuronOperations",),
    "energy": ("EnergyEstimate",),
    "base": ("StaticMetric", "WorkloadMetric", "Step"),
})

__all__ = sorted(_LAZY)


__getattr__ = lazy_attributes(__name__, _LAZY)
